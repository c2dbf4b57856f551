import t from 'tap'
import { buildTestApp, defaultMerchantOf, defaultMerchantScope } from '../../helpers/app'
import { spyGateway, unavailable } from '../../helpers/gateway'
import type { ChargeResult } from '../../../src/gateway/types'
import { newPendingPayment } from '../../../src/domain/payments'
import { requestFingerprint } from '../../../plugins/idempotency'
import { itemAt } from '../../helpers/items'

const PROBLEM = 'application/problem+json; charset=utf-8'

function post (key: string | undefined, payload: unknown, extraHeaders: Record<string, string> = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...extraHeaders }
  if (key !== undefined) headers['idempotency-key'] = key
  return { method: 'POST' as const, url: '/api/payments', headers, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }
}

function manualClock (start = Date.parse('2026-01-01T00:00:00Z')) {
  const clock = { now: start, read: () => clock.now }
  return clock
}

t.test('same key and body replays the stored 201 exactly, with Idempotent-Replayed', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const first = await app.inject(post('key-1', { amount: 12.34, currency: 'USD' }))
  t.equal(first.statusCode, 201)
  t.notOk(first.headers['idempotent-replayed'])
  const again = await app.inject(post('key-1', { amount: 12.34, currency: 'USD' }))
  t.equal(again.statusCode, 201)
  t.equal(again.body, first.body, 'byte-identical body')
  t.equal(again.headers.location, first.headers.location)
  t.equal(again.headers['content-type'], first.headers['content-type'])
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(gateway.calls.length, 1, 'charged once')
  t.equal(await app.db.payments.count(), 1, 'one payment')
})

t.test('fingerprints are canonical: key order and whitespace do not matter', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const first = await app.inject(post('canon', '{"amount":1,"currency":"USD"}'))
  const second = await app.inject(post('canon', '{ "currency":"USD",\n  "amount":1 }'))
  t.equal(second.statusCode, 201)
  t.equal(second.headers['idempotent-replayed'], 'true')
  t.equal(second.json().id, first.json().id)
  t.equal(gateway.calls.length, 1)
})

t.test('a declined payment (402) is replayed as the same 402', async (t) => {
  const app = await buildTestApp(t)
  const first = await app.inject(post('decline', { amount: 2100, currency: 'USD' }))
  t.equal(first.statusCode, 402)
  const again = await app.inject(post('decline', { amount: 2100, currency: 'USD' }))
  t.equal(again.statusCode, 402)
  t.equal(again.body, first.body)
  t.equal(again.headers['content-type'], PROBLEM)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(await app.db.ledger.count(), 1)
})

t.test('same key with a different body is a 409 key-reused problem', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  await app.inject(post('reuse', { amount: 1, currency: 'USD' }))
  const res = await app.inject(post('reuse', { amount: 2, currency: 'USD' }))
  t.equal(res.statusCode, 409)
  t.equal(res.headers['content-type'], PROBLEM)
  t.match(res.json(), { type: 'urn:problem-type:idempotency-key-reused', status: 409, instance: '/api/payments' })
  t.equal(gateway.calls.length, 1)
})

t.test('same key while the first request is in flight is a 409 key-in-use problem with Retry-After', async (t) => {
  let releaseCharge: (result: ChargeResult) => void = () => {}
  const gateway = spyGateway(async () => await new Promise<ChargeResult>((resolve) => { releaseCharge = resolve }))
  const app = await buildTestApp(t, {}, { gateway })
  const firstPromise = app.inject(post('busy', { amount: 1, currency: 'USD' }))
  while (gateway.calls.length === 0) await new Promise((resolve) => setImmediate(resolve))
  const second = await app.inject(post('busy', { amount: 1, currency: 'USD' }))
  t.equal(second.statusCode, 409)
  t.match(second.json(), { type: 'urn:problem-type:idempotency-key-in-use', status: 409 })
  t.equal(second.headers['retry-after'], '1')
  releaseCharge({ outcome: 'succeeded', chargeId: 'ch_1' })
  const first = await firstPromise
  t.equal(first.statusCode, 201)
  t.equal(gateway.calls.length, 1, 'no second charge')
  t.equal(await app.db.payments.count(), 1, 'no second payment')
})

t.test('client errors are not stored and leave the key usable', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, { BODY_LIMIT: '1024' }, { gateway })
  const invalid = await app.inject(post('fresh', { amount: -1, currency: 'USD' }))
  t.equal(invalid.statusCode, 400)
  const tooLarge = await app.inject(post('fresh', { amount: 1, currency: 'USD', pad: 'x'.repeat(2000) }))
  t.equal(tooLarge.statusCode, 413)
  const wrongType = await app.inject({ ...post('fresh', 'amount=1'), headers: { 'content-type': 'text/plain', 'idempotency-key': 'fresh' } })
  t.equal(wrongType.statusCode, 415)
  const badJson = await app.inject(post('fresh', '{"amount":'))
  t.equal(badJson.statusCode, 400)
  t.equal(await app.db.idempotency.get({ scope: await defaultMerchantScope(app), method: 'POST', path: '/api/payments', key: 'fresh' }), undefined, 'nothing stored')
  const ok = await app.inject(post('fresh', { amount: 3, currency: 'USD' }))
  t.equal(ok.statusCode, 201, 'the key is still usable for a different, valid body')
  t.notOk(ok.headers['idempotent-replayed'])
})

t.test('a rate-limited request does not consume the key', async (t) => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '1' })
  await app.inject({ method: 'GET', url: '/health/live' })
  // The limit is per credential: the merchant's first payment uses up its budget.
  await app.inject(post('first', { amount: 1, currency: 'USD' }))
  const limited = await app.inject(post('limited', { amount: 1, currency: 'USD' }))
  t.equal(limited.statusCode, 429)
  t.equal(await app.db.idempotency.get({ scope: await defaultMerchantScope(app), method: 'POST', path: '/api/payments', key: 'limited' }), undefined)
})

t.test('malformed Idempotency-Key headers are 400 problems', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  for (const key of ['x'.repeat(256), 'tab\there', 'ключ']) {
    const res = await app.inject(post(key, { amount: 1, currency: 'USD' }))
    t.equal(res.statusCode, 400, JSON.stringify(key).slice(0, 20))
    t.equal(res.headers['content-type'], PROBLEM)
    t.same(Object.keys(res.json().errors), ['Idempotency-Key'])
  }
  const longest = await app.inject(post('y'.repeat(255), { amount: 1, currency: 'USD' }))
  t.equal(longest.statusCode, 201, '255 printable characters are fine')
  const spaces = await app.inject(post('a b ~!', { amount: 1, currency: 'USD' }))
  t.equal(spaces.statusCode, 201)
  t.equal(gateway.calls.length, 2)
})

t.test('after a gateway outage, a retry with the same key resumes the same payment with the same downstream key', async (t) => {
  const gateway = spyGateway(async (request, n) => n === 1 ? await unavailable(request, n) : { outcome: 'succeeded', chargeId: 'ch_ok' })
  const app = await buildTestApp(t, {}, { gateway })
  const outage = await app.inject(post('resume', { amount: 7, currency: 'USD' }))
  t.equal(outage.statusCode, 503)
  const paymentId = outage.json().paymentId
  t.equal((await app.db.payments.get(paymentId))?.status, 'pending')
  const record = await app.db.idempotency.get({ scope: await defaultMerchantScope(app), method: 'POST', path: '/api/payments', key: 'resume' })
  t.equal(record?.recoveryPoint, 'resource_created', 'the key keeps its recovery point')
  t.equal(record?.lockedUntil, null, 'and is unlocked')
  const retry = await app.inject(post('resume', { amount: 7, currency: 'USD' }))
  t.equal(retry.statusCode, 201)
  t.equal(retry.json().id, paymentId, 'the same payment')
  t.equal(gateway.calls.length, 2)
  t.equal(itemAt(gateway.calls, 1).idempotencyKey, itemAt(gateway.calls, 0).idempotencyKey, 'the same downstream key')
  t.equal(await app.db.payments.count(), 1)
})

t.test('the simulated 5002 time-out: charge made, answer lost; the retry finds it in the ledger', async (t) => {
  const app = await buildTestApp(t, { GATEWAY_TIMEOUT_MS: '50' })
  const timedOut = await app.inject(post('slow', { amount: 5002, currency: 'USD' }))
  t.equal(timedOut.statusCode, 503)
  const retry = await app.inject(post('slow', { amount: 5002, currency: 'USD' }))
  t.equal(retry.statusCode, 201)
  t.equal(retry.json().id, timedOut.json().paymentId)
  t.equal(await app.db.ledger.count(), 1, 'charged exactly once')
})

t.test('a crashed request holds its key only for the lock lease', async (t) => {
  const clock = manualClock()
  const gateway = spyGateway()
  const app = await buildTestApp(t, { IDEMPOTENCY_LOCK_SECONDS: '60' }, { gateway, clock: clock.read })
  const merchant = await defaultMerchantOf(app)
  const ref = { scope: `merchant:${merchant.merchantId}`, method: 'POST', path: '/api/payments', key: 'crashed' }
  // Simulate a request that claimed the key, created its payment and died before the gateway answered.
  await app.db.idempotency.claim({ ref, fingerprint: requestFingerprint('POST', '/api/payments', { amount: 9, currency: 'USD' }), now: clock.now, lockUntil: clock.now + 60_000, expiresAt: clock.now + 86_400_000 })
  const iso = new Date(clock.now).toISOString()
  await app.db.payments.create(newPendingPayment({ id: '11111111-1111-4111-8111-111111111111', merchantId: merchant.merchantId, amountMinor: 900, currency: 'USD', at: iso }), ref)

  clock.now += 30_000
  const during = await app.inject(post('crashed', { amount: 9, currency: 'USD' }))
  t.equal(during.statusCode, 409, 'still leased')
  clock.now += 31_000
  const after = await app.inject(post('crashed', { amount: 9, currency: 'USD' }))
  t.equal(after.statusCode, 201, 'resumable once the lease ends')
  t.equal(after.json().id, '11111111-1111-4111-8111-111111111111')
  t.equal(itemAt(gateway.calls, 0).idempotencyKey, 'payment-11111111-1111-4111-8111-111111111111')
})

t.test('retention: replays do not extend it; after it ends the key makes a new payment', async (t) => {
  const clock = manualClock()
  const app = await buildTestApp(t, { IDEMPOTENCY_TTL_HOURS: '24' }, { clock: clock.read })
  const first = await app.inject(post('ttl', { amount: 1, currency: 'USD' }))
  clock.now += 23 * 3600_000
  const replay = await app.inject(post('ttl', { amount: 1, currency: 'USD' }))
  t.equal(replay.headers['idempotent-replayed'], 'true')
  clock.now += 2 * 3600_000
  const reused = await app.inject(post('ttl', { amount: 1, currency: 'USD' }))
  t.equal(reused.statusCode, 201)
  t.notOk(reused.headers['idempotent-replayed'])
  t.not(reused.json().id, first.json().id, 'a new payment')
})

t.test('the reaper deletes expired keys, never one whose payment is pending', async (t) => {
  const clock = manualClock()
  const gateway = spyGateway(async (request, n) => n === 1 ? await unavailable(request, n) : { outcome: 'succeeded', chargeId: 'c' })
  const app = await buildTestApp(t, {}, { gateway, clock: clock.read })
  await app.inject(post('pending-key', { amount: 1, currency: 'USD' }))
  await app.inject(post('done-key', { amount: 2, currency: 'USD' }))
  t.equal(await app.backgroundJobs.reapExpiredKeys(), 0, 'nothing expired yet')
  clock.now += 25 * 3600_000
  t.equal(await app.backgroundJobs.reapExpiredKeys(), 1)
  const scope = await defaultMerchantScope(app)
  const ref = (key: string) => ({ scope, method: 'POST', path: '/api/payments', key })
  t.ok(await app.db.idempotency.get(ref('pending-key')), 'the pending payment keeps its key')
  t.equal(await app.db.idempotency.get(ref('done-key')), undefined)
})

t.test('the recovery worker settles abandoned pending payments and completes their keys', async (t) => {
  const clock = manualClock()
  const gateway = spyGateway(async (request, n) => n === 1 ? await unavailable(request, n) : { outcome: 'succeeded', chargeId: 'c' })
  const app = await buildTestApp(t, { RECOVERY_AGE_SECONDS: '120' }, { gateway, clock: clock.read })
  const outage = await app.inject(post('abandoned', { amount: 4, currency: 'USD' }))
  const paymentId = outage.json().paymentId
  t.same(await app.backgroundJobs.recoverPendingPayments(), { settled: 0, stillPending: 0 }, 'too young to be abandoned')
  clock.now += 121_000
  t.same(await app.backgroundJobs.recoverPendingPayments(), { settled: 1, stillPending: 0 })
  t.equal((await app.db.payments.get(paymentId))?.status, 'succeeded')
  t.equal(itemAt(gateway.calls, 1).idempotencyKey, itemAt(gateway.calls, 0).idempotencyKey, 'same downstream key')
  const replay = await app.inject(post('abandoned', { amount: 4, currency: 'USD' }))
  t.equal(replay.statusCode, 201)
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.equal(replay.json().id, paymentId)
  t.same(await app.backgroundJobs.recoverPendingPayments(), { settled: 0, stillPending: 0 }, 'nothing left')
})

t.test('the recovery worker leaves payments pending while the gateway is still down', async (t) => {
  const clock = manualClock()
  const gateway = spyGateway(unavailable)
  const app = await buildTestApp(t, {}, { gateway, clock: clock.read })
  await app.inject(post(undefined, { amount: 4, currency: 'USD' }))
  clock.now += 3600_000
  t.same(await app.backgroundJobs.recoverPendingPayments(), { settled: 0, stillPending: 1 })
  t.same(await app.backgroundJobs.recoverPendingPayments(), { settled: 0, stillPending: 0 }, 'leased: not retried before the lease ends')
})

t.test('background jobs run on their intervals and stop cleanly on close', async (t) => {
  const gateway = spyGateway(async (request, n) => n === 1 ? await unavailable(request, n) : { outcome: 'succeeded', chargeId: 'c' })
  const app = await buildTestApp(t, { RECOVERY_INTERVAL_MS: '20', REAPER_INTERVAL_MS: '20', RECOVERY_AGE_SECONDS: '1' }, { gateway })
  const outage = await app.inject(post(undefined, { amount: 4, currency: 'USD' }))
  const paymentId = outage.json().paymentId
  const deadline = Date.now() + 5000
  while ((await app.db.payments.get(paymentId))?.status === 'pending' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.equal((await app.db.payments.get(paymentId))?.status, 'succeeded', 'the worker settled it on its own')
  await app.close()
  const callsAtClose = gateway.calls.length
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(gateway.calls.length, callsAtClose, 'no work after close')
})
