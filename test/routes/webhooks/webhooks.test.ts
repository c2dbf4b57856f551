import t, { type Test } from 'tap'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { buildTestApp, merchantWithKey, ADMIN_AUTH } from '../../helpers/app'
import { webhookReceiver } from '../../helpers/webhook-receiver'
import type { App } from '../../../app/app'
import { webhookClient } from '../../../src/webhooks/client'
import { itemAt } from '../../helpers/items'

const ENV = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_DELAYS: '1s,1s,1s', WEBHOOK_POLL_INTERVAL_MS: '0', WEBHOOK_TIMEOUT_MS: '2000' }

/** An app whose clock the test moves (deliveries are due by that clock); the worker loop is off: passes are run by hand. */
async function setup (t: Test, env: Record<string, string> = {}) {
  let now = Date.now()
  const app = await buildTestApp(t, { ...ENV, ...env }, { clock: () => now })
  const merchant = await merchantWithKey(app)
  return { app, merchant, advance: (ms: number) => { now += ms }, now: () => now }
}

async function createEndpoint (app: App, merchantId: string, body: Record<string, unknown>, auth = ADMIN_AUTH) {
  const res = await app.inject({ method: 'POST', url: `/merchants/${merchantId}/webhook-endpoints`, headers: auth, payload: body })
  return res
}

async function pay (app: App, auth: { authorization: string }, amount = 10.1) {
  return await app.inject({ method: 'POST', url: '/api/payments', headers: auth, payload: { amount, currency: 'USD' } })
}

t.test('a payment is delivered signed per Standard Webhooks; the library verifies it and refuses a tampered body', async (t) => {
  const { app, merchant } = await setup(t)
  const receiver = await webhookReceiver(t)
  const created = await createEndpoint(app, merchant.merchantId, { url: receiver.url, description: 'orders' })
  t.equal(created.statusCode, 201)
  const endpoint = created.json()
  t.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  t.equal(created.headers['cache-control'], 'no-store')
  t.same(endpoint.enabledEvents, ['*'])

  const payment = await pay(app, merchant.auth)
  t.equal(payment.statusCode, 201)
  const pass = await app.webhooks.deliverDue(16)
  t.equal(pass.attempted, 1)
  const request = itemAt(await receiver.waitFor(1), 0)

  const wh = new Webhook(endpoint.secret)
  const verified = wh.verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature'])
  }) as { type: string, data: { id: string, status: string }, timestamp: string, sequence: number }
  t.equal(verified.type, 'payment.succeeded')
  t.equal(verified.data.id, payment.json().id)
  t.equal(verified.data.status, 'succeeded')
  t.equal(verified.sequence, 1)
  t.same(verified.data, payment.json(), 'data is the payment as the API returns it')
  t.throws(() => wh.verify(request.body.replace('succeeded', 'declined'), {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature'])
  }), WebhookVerificationError, 'a tampered body is rejected')

  // The event is in the events API, with the id the delivery carried.
  const events = await app.inject({ method: 'GET', url: '/api/events', headers: merchant.auth })
  t.equal(events.statusCode, 200)
  t.equal(events.json().data.length, 1)
  t.equal(events.json().data[0].id, request.headers['webhook-id'])
  t.equal(events.json().data[0].resource.id, payment.json().id)
  const one = await app.inject({ method: 'GET', url: `/api/events/${String(request.headers['webhook-id'])}`, headers: merchant.auth })
  t.equal(one.statusCode, 200)
  t.equal(one.json().type, 'payment.succeeded')

  // Deliveries list shows the attempt and its status.
  const deliveries = await app.inject({ method: 'GET', url: `/merchants/${merchant.merchantId}/webhook-endpoints/${String(endpoint.id)}/deliveries`, headers: merchant.auth })
  t.equal(deliveries.statusCode, 200)
  t.equal(deliveries.json().data[0].status, 'succeeded')
  t.equal(deliveries.json().data[0].attemptLog[0].statusCode, 200)
})

t.test('retries with the same webhook-id until success; Retry-After is honoured', async (t) => {
  const { app, merchant, advance } = await setup(t)
  const receiver = await webhookReceiver(t, (_request, index) => index === 0
    ? { status: 503, headers: { 'retry-after': '30' }, body: 'busy' }
    : index === 1 ? { status: 500 } : { status: 204 })
  await createEndpoint(app, merchant.merchantId, { url: receiver.url })
  await pay(app, merchant.auth)
  t.equal(itemAt((await app.webhooks.deliverDue(16)).results, 0).result, 'retry')
  advance(2_000)
  t.equal((await app.webhooks.deliverDue(16)).attempted, 0, 'Retry-After 30 s holds the retry back beyond the 1 s schedule')
  advance(29_000)
  t.equal(itemAt((await app.webhooks.deliverDue(16)).results, 0).result, 'retry')
  advance(1_200)
  t.equal(itemAt((await app.webhooks.deliverDue(16)).results, 0).result, 'succeeded')
  const received = await receiver.waitFor(3)
  t.equal(new Set(received.map((r) => r.headers['webhook-id'])).size, 1, 'every attempt carries the same webhook-id')
  t.not(itemAt(received, 0).headers['webhook-timestamp'], undefined)
})

t.test('a 410 disables the endpoint and records webhook_endpoint.disabled', async (t) => {
  const { app, merchant } = await setup(t)
  const gone = await webhookReceiver(t, () => ({ status: 410 }))
  const other = await webhookReceiver(t)
  const endpoint = (await createEndpoint(app, merchant.merchantId, { url: gone.url })).json()
  await createEndpoint(app, merchant.merchantId, { url: other.url, enabledEvents: ['webhook_endpoint.disabled'] })
  await pay(app, merchant.auth)
  const pass = await app.webhooks.deliverDue(16)
  t.same(pass.results.map((r) => r.result), ['failed'])
  const read = await app.inject({ method: 'GET', url: `/merchants/${merchant.merchantId}/webhook-endpoints/${String(endpoint.id)}`, headers: merchant.auth })
  t.equal(read.json().disabled, true)
  t.equal(read.json().disabledReason, 'gone')
  const events = await app.inject({ method: 'GET', url: '/api/events?type=webhook_endpoint.disabled', headers: merchant.auth })
  t.equal(events.json().data.length, 1)
  t.equal(events.json().data[0].resource.id, endpoint.id)
  // The other endpoint (which asked for that type only) is told.
  await app.webhooks.deliverDue(16)
  const told = itemAt(await other.waitFor(1), 0)
  t.equal(JSON.parse(told.body).type, 'webhook_endpoint.disabled')
  t.notOk(JSON.parse(told.body).data.secret, 'no secret in the event')
  // Later events no longer go to the disabled endpoint.
  await pay(app, merchant.auth)
  t.equal((await app.webhooks.deliverDue(16)).attempted, 0)
  t.equal(gone.received.length, 1)
})

t.test('after the whole schedule fails the delivery is failed and the endpoint disabled; re-enable and retry deliver', async (t) => {
  const { app, merchant, advance } = await setup(t)
  let healthy = false
  const receiver = await webhookReceiver(t, () => ({ status: healthy ? 200 : 500 }))
  const endpoint = (await createEndpoint(app, merchant.merchantId, { url: receiver.url })).json()
  await pay(app, merchant.auth)
  const results: string[] = []
  for (let i = 0; i < 4; i++) {
    results.push(...(await app.webhooks.deliverDue(16)).results.map((r) => r.result))
    advance(1_200)
  }
  t.same(results, ['retry', 'retry', 'retry', 'failed'], '1 attempt + 3 retries (WEBHOOK_RETRY_DELAYS=1s,1s,1s)')
  const base = `/merchants/${merchant.merchantId}/webhook-endpoints/${String(endpoint.id)}`
  const read = await app.inject({ method: 'GET', url: base, headers: merchant.auth })
  t.equal(read.json().disabledReason, 'failing')
  const list = await app.inject({ method: 'GET', url: `${base}/deliveries`, headers: merchant.auth })
  const delivery = list.json().data[0]
  t.equal(delivery.status, 'failed')
  t.equal(delivery.attempts, 4)
  t.equal(delivery.attemptLog.length, 4)

  healthy = true
  const enabled = await app.inject({ method: 'PATCH', url: base, headers: merchant.auth, payload: { disabled: false } })
  t.equal(enabled.json().disabled, false)
  const retried = await app.inject({ method: 'POST', url: `${base}/deliveries/${String(delivery.id)}/retry`, headers: merchant.auth })
  t.equal(retried.statusCode, 202)
  t.equal(retried.json().status, 'pending')
  t.same((await app.webhooks.deliverDue(16)).results.map((r) => r.result), ['succeeded'])
  const unknown = await app.inject({ method: 'POST', url: `${base}/deliveries/00000000-0000-4000-8000-000000000000/retry`, headers: merchant.auth })
  t.equal(unknown.statusCode, 404)
})

t.test('a retry of a delivery whose attempt is in flight is 409 (with Retry-After): the delivery is never sent twice at once', async (t) => {
  const { app, merchant, advance } = await setup(t)
  let answer = (): void => {}
  const held = new Promise<void>((resolve) => { answer = resolve })
  const receiver = await webhookReceiver(t, async (_request, index) => {
    if (index === 0) await held
    return { status: 200 }
  })
  const endpoint = (await createEndpoint(app, merchant.merchantId, { url: receiver.url })).json()
  await pay(app, merchant.auth)
  const pass = app.webhooks.deliverDue(16)
  await receiver.waitFor(1)
  const base = `/merchants/${merchant.merchantId}/webhook-endpoints/${String(endpoint.id)}`
  const [delivery] = (await app.inject({ method: 'GET', url: `${base}/deliveries`, headers: merchant.auth })).json().data
  const retried = await app.inject({ method: 'POST', url: `${base}/deliveries/${String(delivery.id)}/retry`, headers: merchant.auth })
  t.equal(retried.statusCode, 409)
  t.match(retried.headers['content-type'], /^application\/problem\+json/)
  t.equal(retried.json().type, 'urn:problem-type:webhook-delivery-in-flight')
  t.equal(retried.headers['retry-after'], String(2 + 30), 'until the lease ends: WEBHOOK_TIMEOUT_MS (2 s) plus the 30 s margin')
  advance(100)
  t.same((await app.webhooks.deliverDue(16)).attempted, 0, 'a second pass does not send it meanwhile')
  answer()
  t.same((await pass).results.map((r) => r.result), ['succeeded'])
  t.equal(receiver.received.length, 1, 'sent once')
  const after = await app.inject({ method: 'POST', url: `${base}/deliveries/${String(delivery.id)}/retry`, headers: merchant.auth })
  t.equal(after.statusCode, 202, 'once the attempt is recorded, a retry is accepted')
})

t.test('enabledEvents filters; replay by time range re-sends', async (t) => {
  const { app, merchant, now } = await setup(t)
  const receiver = await webhookReceiver(t)
  const endpoint = (await createEndpoint(app, merchant.merchantId, { url: receiver.url, enabledEvents: ['merchant.updated'] })).json()
  await pay(app, merchant.auth)
  t.equal((await app.webhooks.deliverDue(16)).attempted, 0, 'payment events are not sent to an endpoint that did not ask for them')
  const patched = await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}`, headers: { ...merchant.auth, 'content-type': 'application/merge-patch+json' }, payload: { name: 'Renamed' } })
  t.equal(patched.statusCode, 200)
  await app.webhooks.deliverDue(16)
  const update = itemAt(await receiver.waitFor(1), 0)
  t.equal(JSON.parse(update.body).type, 'merchant.updated')
  t.equal(JSON.parse(update.body).data.name, 'Renamed')

  const base = `/merchants/${merchant.merchantId}/webhook-endpoints/${String(endpoint.id)}`
  const widened = await app.inject({ method: 'PATCH', url: base, headers: merchant.auth, payload: { enabledEvents: ['*'] } })
  t.same(widened.json().enabledEvents, ['*'])
  const replay = await app.inject({ method: 'POST', url: `${base}/replay`, headers: merchant.auth, payload: { from: new Date(now() - 60_000).toISOString(), to: new Date(now() + 1).toISOString() } })
  t.equal(replay.statusCode, 202)
  t.equal(replay.json().replayed, 2, 'the payment and the merchant update')
  await app.webhooks.deliverDue(16)
  const all = await receiver.waitFor(3)
  t.same(all.slice(1).map((r) => JSON.parse(r.body).type).sort(), ['merchant.updated', 'payment.succeeded'])
  t.equal(all[2]?.headers['webhook-id'] === update.headers['webhook-id'] || all[1]?.headers['webhook-id'] === update.headers['webhook-id'], true, 'a replay keeps the event id')
  const backwards = await app.inject({ method: 'POST', url: `${base}/replay`, headers: merchant.auth, payload: { from: new Date(now()).toISOString(), to: new Date(now() - 1000).toISOString() } })
  t.equal(backwards.statusCode, 400)
})

t.test('a suspended merchant\'s key reads, disables, relabels, rotates and deletes, but starts no new deliveries (403); its deliveries go on', async (t) => {
  const { app, merchant, now } = await setup(t)
  const receiver = await webhookReceiver(t)
  const endpoint = (await createEndpoint(app, merchant.merchantId, { url: receiver.url })).json()
  await pay(app, merchant.auth)
  const suspended = await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}`, headers: { ...ADMIN_AUTH, 'content-type': 'application/merge-patch+json' }, payload: { status: 'suspended' } })
  t.equal(suspended.statusCode, 200)
  t.same((await app.webhooks.deliverDue(16)).results.map((r) => r.result), ['succeeded', 'succeeded'], 'what was due (the payment, the suspension) is still delivered')

  const base = `/merchants/${merchant.merchantId}/webhook-endpoints/${String(endpoint.id)}`
  const [delivery] = (await app.inject({ method: 'GET', url: `${base}/deliveries`, headers: merchant.auth })).json().data
  const send = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>, auth = merchant.auth) =>
    app.inject({ method, url, headers: auth, ...(payload !== undefined ? { payload } : {}) })
  const range = { from: new Date(now() - 60_000).toISOString(), to: new Date(now() + 1).toISOString() }
  for (const [what, res] of [
    ['list', await send('GET', `/merchants/${merchant.merchantId}/webhook-endpoints`)],
    ['read', await send('GET', base)],
    ['deliveries', await send('GET', `${base}/deliveries`)]
  ] as const) t.equal(res.statusCode, 200, `${what}: allowed`)
  for (const [what, res] of [
    ['create', await createEndpoint(app, merchant.merchantId, { url: receiver.url }, merchant.auth)],
    ['a new url', await send('PATCH', base, { url: `${receiver.url}/other` })],
    ['new event types', await send('PATCH', base, { enabledEvents: ['refund.succeeded'] })],
    ['retry', await send('POST', `${base}/deliveries/${String(delivery.id)}/retry`)],
    ['replay', await send('POST', `${base}/replay`, range)]
  ] as const) {
    t.equal(res.statusCode, 403, `${what}: refused`)
    t.match(res.json().detail, /suspended/)
  }
  const disabled = await send('PATCH', base, { disabled: true, description: 'paused' })
  t.equal(disabled.statusCode, 200, 'disabling (and relabelling) is allowed')
  t.equal((await send('PATCH', base, { disabled: false })).statusCode, 403, 're-enabling is not')
  t.equal((await send('POST', `${base}/rotate-secret`, {})).statusCode, 200, 'rotating a secret is allowed')

  const replayed = await send('POST', `${base}/replay`, range, ADMIN_AUTH)
  t.equal(replayed.statusCode, 202, 'the operator may still replay for it')
  t.same(replayed.json(), { replayed: 2, hasMore: false })
  t.equal((await send('DELETE', base)).statusCode, 204, 'deleting is allowed')
})

t.test('secret rotation: both secrets sign during the overlap', async (t) => {
  const { app, merchant, advance } = await setup(t)
  const receiver = await webhookReceiver(t)
  const endpoint = (await createEndpoint(app, merchant.merchantId, { url: receiver.url })).json()
  const base = `/merchants/${merchant.merchantId}/webhook-endpoints/${String(endpoint.id)}`
  const rotated = await app.inject({ method: 'POST', url: `${base}/rotate-secret`, headers: merchant.auth, payload: { overlapSeconds: 3600 } })
  t.equal(rotated.statusCode, 200)
  t.not(rotated.json().secret, endpoint.secret)
  t.ok(rotated.json().secretRotatingUntil)
  await pay(app, merchant.auth)
  await app.webhooks.deliverDue(16)
  const first = itemAt(await receiver.waitFor(1), 0)
  const headers = { 'webhook-id': String(first.headers['webhook-id']), 'webhook-timestamp': String(first.headers['webhook-timestamp']), 'webhook-signature': String(first.headers['webhook-signature']) }
  t.equal(headers['webhook-signature'].split(' ').length, 2)
  t.ok(new Webhook(endpoint.secret).verify(first.body, headers), 'the old secret still verifies')
  t.ok(new Webhook(rotated.json().secret).verify(first.body, headers), 'the new secret verifies')
  advance(3_601_000)
  await pay(app, merchant.auth)
  await app.webhooks.deliverDue(16)
  const second = itemAt(await receiver.waitFor(2), 1)
  t.equal(String(second.headers['webhook-signature']).split(' ').length, 1, 'after the overlap only the new secret signs')
})

t.test('SSRF: with the allowance off, http, loopback, private and link-local URLs are refused at registration', async (t) => {
  const app = await buildTestApp(t, { WEBHOOK_POLL_INTERVAL_MS: '0' }, {
    webhooks: { lookup: async (host) => host === 'rebind.example.com' ? [{ address: '10.1.2.3', family: 4 }] : [{ address: '93.184.216.34', family: 4 }] }
  })
  const merchant = await merchantWithKey(app)
  for (const url of ['http://example.com/hook', 'https://127.0.0.1/hook', 'https://10.0.0.5/hook', 'https://169.254.169.254/latest', 'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook', 'https://localhost/hook', 'https://rebind.example.com/hook', 'https://user:pw@example.com/hook', 'not a url']) {
    const res = await createEndpoint(app, merchant.merchantId, { url })
    t.equal(res.statusCode, 400, url)
    t.ok(res.json().errors.url, url)
  }
  const ok = await createEndpoint(app, merchant.merchantId, { url: 'https://hooks.example.com/payments' })
  t.equal(ok.statusCode, 201)
})

t.test('SSRF at delivery: a name that resolves to a private address is refused when connecting', async (t) => {
  const client = webhookClient({ timeoutMs: 2000, allowPrivate: false })
  t.teardown(async () => { await client.close() })
  const receiver = await webhookReceiver(t)
  const port = new URL(receiver.url).port
  const byName = await client.post(`https://localhost:${port}/hooks`, {}, '{}')
  t.equal(byName.statusCode, null)
  t.match(byName.error, /private|loopback/)
  t.notMatch(byName.error, /127\.0\.0\.1|::1/, 'the delivery log does not reveal what the name resolved to')
  const literal = await client.post(`http://127.0.0.1:${port}/hooks`, {}, '{}')
  t.match(literal.error, /private/)
  t.equal(receiver.received.length, 0, 'nothing reached the private receiver')
})

t.test('ownership: another merchant\'s endpoints and events are 404', async (t) => {
  const { app, merchant } = await setup(t)
  const other = await merchantWithKey(app)
  const receiver = await webhookReceiver(t)
  const endpoint = (await createEndpoint(app, merchant.merchantId, { url: receiver.url })).json()
  await pay(app, merchant.auth)
  const [event] = (await app.inject({ method: 'GET', url: '/api/events', headers: merchant.auth })).json().data
  t.equal((await app.inject({ method: 'GET', url: `/api/events/${String(event.id)}`, headers: other.auth })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: '/api/events', headers: other.auth })).json().data.length, 0)
  t.equal((await app.inject({ method: 'GET', url: `/merchants/${merchant.merchantId}/webhook-endpoints`, headers: other.auth })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: `/merchants/${other.merchantId}/webhook-endpoints/${String(endpoint.id)}`, headers: other.auth })).statusCode, 404)
  const listed = await app.inject({ method: 'GET', url: `/merchants/${merchant.merchantId}/webhook-endpoints`, headers: merchant.auth })
  t.equal(listed.json().data.length, 1)
  t.notOk(listed.json().data[0].secret, 'no secret in the list')
  t.equal((await app.inject({ method: 'GET', url: '/api/events', headers: ADMIN_AUTH })).statusCode, 403)
  const deleted = await app.inject({ method: 'DELETE', url: `/merchants/${merchant.merchantId}/webhook-endpoints/${String(endpoint.id)}`, headers: merchant.auth })
  t.equal(deleted.statusCode, 204)
  t.equal((await app.inject({ method: 'GET', url: `/merchants/${merchant.merchantId}/webhook-endpoints/${String(endpoint.id)}`, headers: merchant.auth })).statusCode, 404)
})

t.test('events of declines, unknown outcomes and refunds, numbered per resource; the reaper deletes them after retention', async (t) => {
  const { app, merchant, advance } = await setup(t)
  const declined = await pay(app, merchant.auth, 2500)
  t.equal(declined.statusCode, 402)
  const unknown = await pay(app, merchant.auth, 5001)
  t.equal(unknown.statusCode, 503)
  const paid = await pay(app, merchant.auth, 4100)
  const refund = await app.inject({ method: 'POST', url: `/api/payments/${String(paid.json().id)}/refunds`, headers: merchant.auth, payload: { amount: 100 } })
  t.equal(refund.statusCode, 201)
  const events = (await app.inject({ method: 'GET', url: '/api/events?limit=100', headers: merchant.auth })).json().data as Array<{ type: string, sequence: number, resource: { id: string }, data: { status: string } }>
  t.same(events.map((e) => e.type).sort(), ['payment.declined', 'payment.pending', 'payment.succeeded', 'refund.succeeded'])
  t.equal(events.find((e) => e.type === 'payment.pending')?.resource.id, unknown.json().paymentId)
  t.equal(events.find((e) => e.type === 'refund.succeeded')?.resource.id, refund.json().id)
  const filtered = await app.inject({ method: 'GET', url: '/api/events?type=refund.succeeded', headers: merchant.auth })
  t.equal(filtered.json().data.length, 1)
  // The same unknown payment retried and still unknown: still one payment.pending.
  await app.webhooks.deliverDue(16)
  advance(31 * 86_400_000)
  t.equal(await app.backgroundJobs.reapOldEvents(), 4)
  t.equal((await app.inject({ method: 'GET', url: '/api/events', headers: merchant.auth })).json().data.length, 0)
  const metrics = await app.metrics.registry.getSingleMetricAsString('webhook_oldest_due_delivery_age_seconds')
  t.match(metrics, /webhook_oldest_due_delivery_age_seconds 0/)
})

t.test('the client: no redirects followed, a time-out, at most 64 KiB read, an abort', async (t) => {
  const client = webhookClient({ timeoutMs: 500, allowPrivate: true })
  t.teardown(async () => { await client.close() })
  const target = await webhookReceiver(t)
  const redirecting = await webhookReceiver(t, () => ({ status: 302, headers: { location: target.url } }))
  const redirected = await client.post(redirecting.url, {}, '{}')
  t.equal(redirected.statusCode, 302)
  t.equal(target.received.length, 0, 'the redirect was not followed')
  const big = await webhookReceiver(t, () => ({ status: 200, body: 'x'.repeat(1024 * 1024) }))
  const bigAnswer = await client.post(big.url, {}, '{}')
  t.equal(bigAnswer.statusCode, 200)
  t.equal(bigAnswer.body?.length, 1024, 'the first KiB is kept')
  const { createServer } = await import('node:http')
  const silent = createServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { silent.closeAllConnections(); silent.close() })
  const port = (silent.address() as { port: number }).port
  const slow = await client.post(`http://127.0.0.1:${port}/`, {}, '{}')
  t.equal(slow.statusCode, null)
  t.match(slow.error, /no answer within 500 ms/)
  const controller = new AbortController()
  setTimeout(() => { controller.abort() }, 50)
  const aborted = await client.post(`http://127.0.0.1:${port}/`, {}, '{}', controller.signal)
  t.equal(aborted.error, 'aborted')
  const refused = await client.post('http://127.0.0.1:1/', {}, '{}')
  t.match(refused.error, /connection failed/)
})

t.test('the worker loop of the app delivers by itself and counts attempts by result', async (t) => {
  const app = await buildTestApp(t, { ...ENV, WEBHOOK_POLL_INTERVAL_MS: '50' })
  const merchant = await merchantWithKey(app)
  const receiver = await webhookReceiver(t, (_request, index) => ({ status: index === 0 ? 500 : 200 }))
  await createEndpoint(app, merchant.merchantId, { url: receiver.url })
  await pay(app, merchant.auth)
  await receiver.waitFor(2)
  const counted = async (): Promise<string> => await app.metrics.registry.getSingleMetricAsString('webhook_deliveries_total')
  for (let i = 0; i < 50 && !/result="succeeded"} 1/.test(await counted()); i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.match(await counted(), /webhook_deliveries_total{result="retry"} 1/)
  t.match(await counted(), /webhook_deliveries_total{result="succeeded"} 1/)
})
