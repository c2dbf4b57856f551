import t, { type Test } from 'tap'
import { Webhook } from 'standardwebhooks'
import { buildTestApp, merchantWithKey, ADMIN_AUTH } from '../../helpers/app'
import { webhookReceiver } from '../../helpers/webhook-receiver'
import type { App } from '../../../app/app'
import { itemAt } from '../../helpers/items'

// POST /merchants/{id}/webhook-endpoints/{endpointId}/test (issue 44): one signed webhook_endpoint.test delivery, sent now
// through the delivery code to a real local receiver, recorded as one of the endpoint's deliveries.

const ENV = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_DELAYS: '1s,1s,1s', WEBHOOK_POLL_INTERVAL_MS: '0', WEBHOOK_TIMEOUT_MS: '2000' }

async function setup (t: Test, env: Record<string, string> = {}) {
  const app = await buildTestApp(t, { ...ENV, ...env })
  const merchant = await merchantWithKey(app)
  return { app, merchant }
}

async function createEndpoint (app: App, merchantId: string, body: Record<string, unknown>): Promise<{ id: string, secret: string }> {
  const res = await app.inject({ method: 'POST', url: `/merchants/${merchantId}/webhook-endpoints`, headers: ADMIN_AUTH, payload: body })
  if (res.statusCode !== 201) throw new Error(res.body)
  return res.json()
}

const testUrl = (merchantId: string, endpointId: string): string => `/merchants/${merchantId}/webhook-endpoints/${endpointId}/test`

t.test('a test event is sent signed to the endpoint, whatever its enabledEvents, and recorded as a succeeded delivery', async (t) => {
  const { app, merchant } = await setup(t)
  const receiver = await webhookReceiver(t, () => ({ status: 200, body: 'thanks' }))
  const endpoint = await createEndpoint(app, merchant.merchantId, { url: receiver.url, enabledEvents: ['refund.succeeded'] })

  const res = await app.inject({ method: 'POST', url: testUrl(merchant.merchantId, endpoint.id), headers: merchant.auth })
  t.equal(res.statusCode, 200, res.body)
  const delivery = res.json()
  t.match(delivery, { eventType: 'webhook_endpoint.test', status: 'succeeded', attempts: 1 })
  t.equal(delivery.nextAttemptAt, undefined)
  t.match(itemAt(delivery.attemptLog, 0), { attempt: 1, statusCode: 200, error: null, responseBody: 'thanks' })

  const request = itemAt(receiver.received, 0)
  t.equal(receiver.received.length, 1, 'one request')
  t.equal(request.headers['webhook-id'], delivery.eventId, 'webhook-id is the test event')
  const verified = new Webhook(endpoint.secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature'])
  }) as { type: string, resource: { type: string, id: string }, data: Record<string, unknown>, sequence: number }
  t.equal(verified.type, 'webhook_endpoint.test')
  t.same(verified.resource, { type: 'webhook_endpoint', id: endpoint.id })
  t.equal(verified.data.id, endpoint.id)
  t.equal(verified.data.secret, undefined, 'never the secret')

  // Recorded: in the endpoint's deliveries (the dashboard's delivery view) and, as its event, in the events API.
  const deliveries = await app.inject({ method: 'GET', url: `/merchants/${merchant.merchantId}/webhook-endpoints/${endpoint.id}/deliveries`, headers: merchant.auth })
  t.same(deliveries.json().data, [delivery], 'listed exactly as answered')
  const event = await app.inject({ method: 'GET', url: `/api/events/${String(delivery.eventId)}`, headers: merchant.auth })
  t.equal(event.statusCode, 200)
  t.equal(event.json().type, 'webhook_endpoint.test')
  t.same(JSON.parse(request.body), event.json(), 'the body is the event as the API shows it')

  // The worker has nothing more to send: the test is done.
  t.equal((await app.webhooks.deliverDue(16)).attempted, 0)
  // A second test is another event, numbered after the first (sequence per endpoint).
  const again = await app.inject({ method: 'POST', url: testUrl(merchant.merchantId, endpoint.id), headers: ADMIN_AUTH })
  t.equal(again.statusCode, 200)
  t.not(again.json().eventId, delivery.eventId)
  t.equal(JSON.parse(itemAt(receiver.received, 1).body).sequence, verified.sequence + 1)
})

t.test('a test event goes to no other endpoint, now or in a replay', async (t) => {
  const { app, merchant } = await setup(t)
  const tested = await webhookReceiver(t)
  const other = await webhookReceiver(t)
  const endpoint = await createEndpoint(app, merchant.merchantId, { url: tested.url })
  const otherEndpoint = await createEndpoint(app, merchant.merchantId, { url: other.url })
  const from = new Date(Date.now() - 60_000).toISOString()
  t.equal((await app.inject({ method: 'POST', url: testUrl(merchant.merchantId, endpoint.id), headers: merchant.auth })).statusCode, 200)
  t.equal((await app.webhooks.deliverDue(16)).attempted, 0, 'nothing fanned out to the other endpoint')
  const replay = await app.inject({
    method: 'POST',
    url: `/merchants/${merchant.merchantId}/webhook-endpoints/${otherEndpoint.id}/replay`,
    headers: merchant.auth,
    payload: { from, to: new Date(Date.now() + 60_000).toISOString() }
  })
  t.equal(replay.statusCode, 202, replay.body)
  t.equal(replay.json().replayed, 0, 'a replay does not send another endpoint\'s test')
  t.equal(other.received.length, 0)
  t.equal(tested.received.length, 1)
})

t.test('the receiver\'s failure is recorded: its status and answer, or the connection error; failed at once, the endpoint stays enabled', async (t) => {
  const { app, merchant } = await setup(t)
  const gone = await webhookReceiver(t, () => ({ status: 410, body: 'no such hook' }))
  const endpoint = await createEndpoint(app, merchant.merchantId, { url: gone.url })
  const res = await app.inject({ method: 'POST', url: testUrl(merchant.merchantId, endpoint.id), headers: merchant.auth })
  t.equal(res.statusCode, 200, 'the test was made: its outcome is in the delivery')
  t.match(res.json(), { status: 'failed', attempts: 1 })
  t.match(itemAt(res.json().attemptLog, 0), { statusCode: 410, responseBody: 'no such hook' })
  const read = await app.inject({ method: 'GET', url: `/merchants/${merchant.merchantId}/webhook-endpoints/${endpoint.id}`, headers: merchant.auth })
  t.equal(read.json().disabled, false, 'a test never disables the endpoint, even on a 410')
  t.equal((await app.webhooks.deliverDue(16)).attempted, 0, 'not retried')

  // Nobody listening (port 9, discard, on loopback): no status, the connection error.
  const down = await createEndpoint(app, merchant.merchantId, { url: 'http://127.0.0.1:9/hooks' })
  const refused = await app.inject({ method: 'POST', url: testUrl(merchant.merchantId, down.id), headers: merchant.auth })
  t.equal(refused.statusCode, 200)
  t.equal(refused.json().status, 'failed')
  t.match(itemAt<unknown>(refused.json().attemptLog, 0), { statusCode: null, error: /\S/ }, 'no answer; the failure is named')
  const listed = await app.inject({ method: 'GET', url: `/merchants/${merchant.merchantId}/webhook-endpoints/${down.id}/deliveries`, headers: merchant.auth })
  t.same(listed.json().data, [refused.json()])
})

t.test('another merchant\'s endpoint is 404, an unknown id 404; a disabled endpoint 409; a suspended merchant\'s key 403; no key 401', async (t) => {
  const { app, merchant } = await setup(t)
  const receiver = await webhookReceiver(t)
  const endpoint = await createEndpoint(app, merchant.merchantId, { url: receiver.url })
  const stranger = await merchantWithKey(app)

  const foreign = await app.inject({ method: 'POST', url: testUrl(stranger.merchantId, endpoint.id), headers: stranger.auth })
  t.equal(foreign.statusCode, 404, 'another merchant\'s endpoint under its own merchant id')
  const crossed = await app.inject({ method: 'POST', url: testUrl(merchant.merchantId, endpoint.id), headers: stranger.auth })
  t.equal(crossed.statusCode, 404, 'another merchant\'s id with one\'s own key')
  t.equal(crossed.headers['content-type'], 'application/problem+json; charset=utf-8')
  for (const id of ['not-a-guid', '019aa9f3-0c1d-7e2f-9a3b-4c5d6e7f8091']) {
    t.equal((await app.inject({ method: 'POST', url: testUrl(merchant.merchantId, id), headers: merchant.auth })).statusCode, 404, id)
  }
  t.equal((await app.inject({ method: 'POST', url: testUrl(merchant.merchantId, endpoint.id), headers: { authorization: undefined } })).statusCode, 401)
  t.equal(receiver.received.length, 0, 'nothing was sent')

  const disabled = await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}/webhook-endpoints/${endpoint.id}`, headers: merchant.auth, payload: { disabled: true } })
  t.equal(disabled.statusCode, 200)
  const refused = await app.inject({ method: 'POST', url: testUrl(merchant.merchantId, endpoint.id), headers: merchant.auth })
  t.equal(refused.statusCode, 409)
  t.match(refused.json().detail, /disabled/)
  const none = await app.inject({ method: 'GET', url: `/merchants/${merchant.merchantId}/webhook-endpoints/${endpoint.id}/deliveries`, headers: merchant.auth })
  t.same(none.json().data, [], 'nothing recorded')
  await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}/webhook-endpoints/${endpoint.id}`, headers: merchant.auth, payload: { disabled: false } })

  const suspended = await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}`, headers: { ...ADMIN_AUTH, 'content-type': 'application/merge-patch+json' }, payload: { status: 'suspended' } })
  t.equal(suspended.statusCode, 200)
  const forbidden = await app.inject({ method: 'POST', url: testUrl(merchant.merchantId, endpoint.id), headers: merchant.auth })
  t.equal(forbidden.statusCode, 403)
  t.match(forbidden.json().detail, /suspended/)
  t.equal((await app.inject({ method: 'POST', url: testUrl(merchant.merchantId, endpoint.id), headers: ADMIN_AUTH })).statusCode, 200, 'the operator may still test it')
  t.equal(receiver.received.length, 1)
})

t.test('test events cannot be subscribed to: enabledEvents refuses the type', async (t) => {
  const { app, merchant } = await setup(t)
  const res = await app.inject({
    method: 'POST',
    url: `/merchants/${merchant.merchantId}/webhook-endpoints`,
    headers: merchant.auth,
    payload: { url: 'http://127.0.0.1:9/hooks', enabledEvents: ['webhook_endpoint.test'] }
  })
  t.equal(res.statusCode, 400)
})
