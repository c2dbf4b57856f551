import t from 'tap'
import { ADMIN_AUTH, buildTestApp } from '../helpers/app'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('every record the API creates gets a UUIDv7 id: merchant, API key, payment, refund, event, endpoint, delivery', async (t) => {
  const app = await buildTestApp(t, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '0' })
  const merchant = await app.inject({ method: 'POST', url: '/merchants', headers: ADMIN_AUTH, payload: { name: 'Ids', email: 'ids@example.com' } })
  t.equal(merchant.statusCode, 201)
  const merchantId = merchant.json().id as string
  const key = await app.inject({ method: 'POST', url: `/merchants/${merchantId}/api-keys`, headers: ADMIN_AUTH, payload: {} })
  t.equal(key.statusCode, 201)
  const auth = { authorization: `Bearer ${String(key.json().secret)}` }
  const endpoint = await app.inject({ method: 'POST', url: `/merchants/${merchantId}/webhook-endpoints`, headers: ADMIN_AUTH, payload: { url: 'http://127.0.0.1:9/hook' } })
  t.equal(endpoint.statusCode, 201)
  const payment = await app.inject({ method: 'POST', url: '/api/payments', headers: auth, payload: { amount: 10, currency: 'USD' } })
  t.equal(payment.statusCode, 201)
  const refund = await app.inject({ method: 'POST', url: `/api/payments/${String(payment.json().id)}/refunds`, headers: auth, payload: { amount: 1 } })
  t.equal(refund.statusCode, 201)
  const events = await app.inject({ method: 'GET', url: '/api/events', headers: auth })
  const deliveries = await app.inject({ method: 'GET', url: `/merchants/${merchantId}/webhook-endpoints/${String(endpoint.json().id)}/deliveries`, headers: ADMIN_AUTH })
  t.ok(events.json().data.length >= 2)
  t.equal(deliveries.json().data.length, events.json().data.length)

  const ids: Record<string, string> = {
    merchant: merchantId,
    'API key': key.json().id,
    endpoint: endpoint.json().id,
    payment: payment.json().id,
    refund: refund.json().id,
    ...Object.fromEntries(events.json().data.map((event: { id: string, type: string }) => [`event ${event.type}`, event.id])),
    ...Object.fromEntries(deliveries.json().data.map((delivery: { id: string, eventType: string }) => [`delivery of ${delivery.eventType}`, delivery.id]))
  }
  for (const [record, id] of Object.entries(ids)) t.match(id, UUID_V7, `the ${record} id is a UUIDv7`)
})
