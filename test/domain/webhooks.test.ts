import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { nextAttemptDelay, parseRetryAfter, parseRetryDelays, signatureHeader, verifiesWith, newSecret, receives } from '../../src/domain/webhooks'
import { isPrivateAddress, webhookUrlProblem, resolvesPrivately } from '../../src/webhooks/addresses'
import { loadConfig } from '../../src/load-config'
import { TEST_ADMIN_KEY } from '../helpers/app'
import { paymentEventType, isEventType } from '../../src/domain/events'

t.test('retry schedule: parsing, jitter within 10 %, Retry-After as a floor, the end of the schedule', async (t) => {
  t.same(parseRetryDelays('5s,5m,30m,2h,5h,10h,10h'), [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
  t.same(parseRetryDelays('250ms, 1d'), [250, 86_400_000])
  for (const bad of ['', '5', '0s', '5x', '8d', Array(21).fill('1s').join(',')]) t.equal(parseRetryDelays(bad), undefined, bad)
  t.equal(nextAttemptDelay(1, [1000, 2000], undefined, 0), 1000)
  t.equal(nextAttemptDelay(2, [1000, 2000], undefined, 1), 2200, 'at most +10 %')
  t.equal(nextAttemptDelay(1, [1000], 30_000, 0.5), 30_000, 'Retry-After later than the schedule wins')
  t.equal(nextAttemptDelay(1, [1000], 10, 0), 1000, 'an earlier Retry-After does not shorten the schedule')
  t.equal(nextAttemptDelay(1, [1000], 10 * 86_400_000, 0), 86_400_000, 'Retry-After capped at 24 h')
  t.equal(nextAttemptDelay(3, [1000, 2000], undefined, 0), undefined, 'after the last retry: none')
  const now = Date.parse('2026-01-01T00:00:00Z')
  t.equal(parseRetryAfter('120', now), 120_000)
  t.equal(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now), 60_000)
  t.equal(parseRetryAfter('soon', now), undefined)
  t.equal(parseRetryAfter(undefined, now), undefined)
  t.throws(() => loadConfig({ ADMIN_API_KEY: TEST_ADMIN_KEY, DATABASE_URL: 'file::memory:', WEBHOOK_RETRY_DELAYS: '5 minutes' }), /WEBHOOK_RETRY_DELAYS/)
  t.equal(loadConfig({ ADMIN_API_KEY: TEST_ADMIN_KEY, DATABASE_URL: 'file::memory:', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).WEBHOOK_ALLOW_PRIVATE_URLS, true)
})

t.test('signatures match the standardwebhooks library, with both secrets during a rotation', async (t) => {
  const current = newSecret()
  const previous = newSecret()
  const body = '{"type":"payment.succeeded"}'
  const ts = Math.floor(Date.now() / 1000)
  const header = signatureHeader({ secret: current, previousSecret: previous, previousSecretExpiresAt: new Date(Date.now() + 1000).toISOString() }, 'evt_1', ts, body, Date.now())
  t.equal(header.split(' ').length, 2)
  const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(ts), 'webhook-signature': header }
  t.ok(new Webhook(current).verify(body, headers))
  t.ok(new Webhook(previous).verify(body, headers))
  t.ok(verifiesWith(current, header, 'evt_1', ts, body))
  t.notOk(verifiesWith(newSecret(), header, 'evt_1', ts, body))
  const expired = signatureHeader({ secret: current, previousSecret: previous, previousSecretExpiresAt: new Date(Date.now() - 1).toISOString() }, 'evt_1', ts, body, Date.now())
  t.equal(expired.split(' ').length, 1)
  t.ok(receives({ enabledEvents: null }, 'refund.failed'))
  t.notOk(receives({ enabledEvents: ['payment.succeeded'] }, 'refund.failed'))
  t.equal(paymentEventType('partially_refunded'), undefined)
  t.equal(paymentEventType('canceled'), 'payment.canceled')
  t.ok(isEventType('merchant.updated'))
  t.notOk(isEventType('merchant.deleted'))
})

t.test('private addresses', async (t) => {
  for (const address of ['127.0.0.1', '10.1.1.1', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1',
    '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a00:1', '::127.0.0.1', '::7f00:1', '64:ff9b:1::a00:1', '[::1]', 'not-an-ip']) {
    t.ok(isPrivateAddress(address), address)
  }
  for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) t.notOk(isPrivateAddress(address), address)
  t.equal(webhookUrlProblem('https://hooks.example.com/x', false), undefined)
  t.match(webhookUrlProblem('https://intranet/x', false), /public/)
  t.match(webhookUrlProblem('https://a.example.com/x#frag', false), /fragment/)
  t.match(webhookUrlProblem(`https://a.example.com/${'x'.repeat(2100)}`, false), /at most/)
  t.equal(webhookUrlProblem('http://127.0.0.1:9/x', true), undefined)
  // The refusals that WEBHOOK_ALLOW_PRIVATE_URLS lifts name it (local testing), the others do not.
  t.match(webhookUrlProblem('http://127.0.0.1:9/x', false), /^The url must use https\. .*WEBHOOK_ALLOW_PRIVATE_URLS=true/)
  t.match(webhookUrlProblem('https://127.0.0.1/x', false), /public address.*WEBHOOK_ALLOW_PRIVATE_URLS=true/)
  t.notMatch(webhookUrlProblem('https://a.example.com/x#frag', false), /WEBHOOK_ALLOW_PRIVATE_URLS/)
  t.equal(await resolvesPrivately('https://[::1]/x', async () => []), true)
  t.equal(await resolvesPrivately('https://nx.example.com/x', async () => { throw new Error('ENOTFOUND') }), false, 'a name that does not resolve yet is accepted')
})
