import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { buildTestApp, merchantWithKey } from '../../helpers/app'
import { webhookReceiver, type Received } from '../../helpers/webhook-receiver'
import { itemAt } from '../../helpers/items'
import { openApiValidator } from '../../helpers/openapi-validator'

const ENV = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_DELAYS: '1s', WEBHOOK_POLL_INTERVAL_MS: '0', WEBHOOK_TIMEOUT_MS: '2000' }
const OLD = '2026-11-01'
const NEW = '2026-11-25'

/** Verifies a delivery the way a receiver does (the exact bytes sent), returning the parsed body. */
function verified (secret: string, request: Received): Record<string, unknown> {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature'])
  }) as Record<string, unknown>
}

t.test('each endpoint gets the body of its API version, signed: the Event resource (new), {type, timestamp, data, sequence} (old)', async (t) => {
  const app = await buildTestApp(t, ENV)
  const merchant = await merchantWithKey(app, { apiVersion: OLD })
  const oldReceiver = await webhookReceiver(t)
  const newReceiver = await webhookReceiver(t)
  const endpoints = '/merchants/' + merchant.merchantId + '/webhook-endpoints'
  const pinned = await app.inject({ method: 'POST', url: endpoints, headers: merchant.auth, payload: { url: oldReceiver.url } })
  t.equal(pinned.statusCode, 201)
  t.equal(pinned.json().apiVersion, OLD, 'an endpoint is pinned to its merchant\'s version')
  const upgraded = await app.inject({ method: 'POST', url: endpoints, headers: merchant.auth, payload: { url: newReceiver.url, apiVersion: NEW } })
  t.equal(upgraded.json().apiVersion, NEW)

  const payment = await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 10.1, currency: 'USD' } })
  t.equal(payment.statusCode, 201)
  t.equal((await app.webhooks.deliverDue(16)).attempted, 2)
  const event = itemAt((await app.inject({ method: 'GET', url: '/api/events', headers: merchant.auth })).json<{ data: Array<{ id: string, createdAt: string }> }>().data, 0)

  const oldBody = verified(pinned.json().secret, itemAt(await oldReceiver.waitFor(1), 0))
  t.same(oldBody, { type: 'payment.succeeded', timestamp: event.createdAt, data: payment.json(), sequence: 1 }, 'the old body, unchanged')
  const newBody = verified(upgraded.json().secret, itemAt(await newReceiver.waitFor(1), 0))
  t.same(newBody, event, 'the new body is the Event resource, as GET /api/events shows it')
  t.same(Object.keys(newBody), ['id', 'type', 'createdAt', 'sequence', 'resource', 'data'])
  t.equal(itemAt(newReceiver.received, 0).headers['webhook-id'], event.id)
  t.equal(itemAt(oldReceiver.received, 0).headers['webhook-api-version'], OLD, 'each delivery names the version its body is rendered in')
  t.equal(itemAt(newReceiver.received, 0).headers['webhook-api-version'], NEW)
  for (const [name, received] of [['2026-11-01', oldReceiver], ['2026-11-25', newReceiver]] as const) {
    t.same(openApiValidator().checkWebhook('paymentEvent', itemAt(received.received, 0)), [], `the ${name} delivery is what openapi.yaml's webhooks.paymentEvent says`)
  }
  const swapped = { ...itemAt(newReceiver.received, 0), body: JSON.stringify({ ...newBody, timestamp: event.createdAt }) }
  t.not(openApiValidator().checkWebhook('paymentEvent', swapped).length, 0, 'a body mixing both versions is not')
})

t.test('PATCH apiVersion moves an endpoint\'s deliveries (retries too) to another version; unknown versions are 400', async (t) => {
  const app = await buildTestApp(t, ENV)
  const merchant = await merchantWithKey(app)
  let fail = true
  const receiver = await webhookReceiver(t, () => ({ status: fail ? 500 : 200 }))
  const endpoints = '/merchants/' + merchant.merchantId + '/webhook-endpoints'
  const created = (await app.inject({ method: 'POST', url: endpoints, headers: merchant.auth, payload: { url: receiver.url } })).json()
  t.equal(created.apiVersion, NEW, 'a merchant on the current version pins its endpoints to it')
  await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 10.1, currency: 'USD' } })
  await app.webhooks.deliverDue(16)
  t.ok('resource' in verified(created.secret, itemAt(await receiver.waitFor(1), 0)))
  t.equal(itemAt(receiver.received, 0).headers['webhook-api-version'], NEW)

  const moved = await app.inject({ method: 'PATCH', url: `${endpoints}/${String(created.id)}`, headers: merchant.auth, payload: { apiVersion: OLD } })
  t.equal(moved.statusCode, 200)
  t.equal(moved.json().apiVersion, OLD)
  fail = false
  await new Promise((resolve) => setTimeout(resolve, 1200))
  await app.webhooks.deliverDue(16)
  const retried = verified(created.secret, itemAt(await receiver.waitFor(2), 1))
  t.same(Object.keys(retried), ['type', 'timestamp', 'data', 'sequence'], 'the retry is rendered in the endpoint\'s new version')
  t.equal(itemAt(receiver.received, 1).headers['webhook-api-version'], OLD, 'and says so')

  const unknown = await app.inject({ method: 'PATCH', url: `${endpoints}/${String(created.id)}`, headers: merchant.auth, payload: { apiVersion: '2020-01-01' } })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().errors.apiVersion[0], /supported versions: 2026-11-01, 2026-11-25/)
  const badCreate = await app.inject({ method: 'POST', url: endpoints, headers: merchant.auth, payload: { url: receiver.url, apiVersion: 'nope' } })
  t.equal(badCreate.statusCode, 400)
})
