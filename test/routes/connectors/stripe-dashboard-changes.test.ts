/**
 * Changes made in Stripe's Dashboard reach the payment (issue 40): an authorization captured there
 * (payment_intent.succeeded for a payment we hold as requires_capture, in full or in part) or canceled there
 * (payment_intent.canceled) moves the payment as if it had been asked here, with its event; the same event twice
 * changes nothing twice. Against the local Stripe stand-in, with Stripe-signed events.
 */
import t, { type Test } from 'tap'
import Stripe from 'stripe'
import { buildTestApp, merchantWithKey, ADMIN_AUTH, type MerchantCredentials } from '../../helpers/app'
import { FakeStripe } from '../../helpers/fake-stripe'
import type { App } from '../../../app/app'

const SECRET_KEY = 'sk_test_51Hx00dashboardChanges0004242'
const WEBHOOK_SECRET = 'whsec_0123456789abcdefDASHBOARD'

interface Setup { app: App, fake: FakeStripe, merchant: MerchantCredentials, events: string }

async function setup (t: Test): Promise<Setup> {
  const fake = await FakeStripe.start()
  t.teardown(async () => { await fake.close() })
  fake.keys.add(SECRET_KEY)
  const app = await buildTestApp(t, { STRIPE_API_URL: fake.url })
  const merchant = await merchantWithKey(app)
  const created = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: ADMIN_AUTH, payload: { type: 'stripe', credentials: { secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET } } })
  t.equal(created.statusCode, 201)
  return { app, fake, merchant, events: `/connectors/${String(created.json().id)}/stripe-events` }
}

async function authorization (t: Test, s: Setup): Promise<{ id: string, intentId: string }> {
  const res = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 40, currency: 'USD', paymentMethod: 'pm_card_visa', captureMethod: 'manual' } })
  t.equal(res.statusCode, 201, res.body)
  t.match(res.json(), { status: 'requires_capture' })
  return { id: res.json().id, intentId: res.json().connectorReference }
}

async function deliver (t: Test, s: Setup, type: string, object: unknown): Promise<void> {
  const payload = JSON.stringify({ id: `evt_${Math.random().toString(36).slice(2, 12)}`, object: 'event', api_version: '2026-10-28.endive', created: Math.floor(Date.now() / 1000), type, livemode: false, data: { object } })
  const res = await s.app.inject({
    method: 'POST',
    url: s.events,
    headers: { authorization: undefined, 'content-type': 'application/json; charset=utf-8', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }) },
    payload
  })
  t.equal(res.statusCode, 200, res.body)
}

async function paymentOf (s: Setup, id: string) {
  return (await s.app.inject({ method: 'GET', url: `/api/payments/${id}`, headers: s.merchant.auth })).json()
}

async function eventTypes (s: Setup, id: string): Promise<string[]> {
  const page = await s.app.db.events.list({ merchantId: s.merchant.merchantId, limit: 100 })
  return page.data.filter((e) => e.resourceId === id).map((e) => e.type).reverse()
}

t.test('captured in part in the Dashboard: succeeded with what Stripe took, payment.succeeded once; refunds bounded by it', async (t) => {
  const s = await setup(t)
  const { id, intentId } = await authorization(t, s)
  const intent = s.fake.intents.get(intentId)
  if (intent === undefined) throw new Error('no PaymentIntent')
  Object.assign(intent, { status: 'succeeded', amount_received: 2500, amount_capturable: 0 })
  await deliver(t, s, 'payment_intent.succeeded', intent)
  t.match(await paymentOf(s, id), { status: 'succeeded', amountCaptured: 25, amountCapturable: 0 })
  await deliver(t, s, 'payment_intent.succeeded', intent)
  t.same(await eventTypes(s, id), ['payment.authorized', 'payment.succeeded'], 'once')
  t.notOk(s.fake.requests.some((request) => request.path.endsWith('/capture')), 'nothing captured from here')
  const refund = await s.app.inject({ method: 'POST', url: `/api/payments/${id}/refunds`, headers: s.merchant.auth, payload: { amount: 25.01 } })
  t.equal(refund.statusCode, 409, 'no more refunded than Stripe took')
})

t.test('canceled in the Dashboard: canceled, payment.canceled once; a capture here is then refused', async (t) => {
  const s = await setup(t)
  const { id, intentId } = await authorization(t, s)
  const intent = s.fake.intents.get(intentId)
  if (intent === undefined) throw new Error('no PaymentIntent')
  Object.assign(intent, { status: 'canceled', amount_capturable: 0, cancellation_reason: 'requested_by_customer' })
  await deliver(t, s, 'payment_intent.canceled', intent)
  t.match(await paymentOf(s, id), { status: 'canceled', cancellationReason: 'connector', amountCaptured: 0 })
  await deliver(t, s, 'payment_intent.canceled', intent)
  t.same(await eventTypes(s, id), ['payment.authorized', 'payment.canceled'], 'once')
  const capture = await s.app.inject({ method: 'POST', url: `/api/payments/${id}/capture`, headers: s.merchant.auth, payload: {} })
  t.equal(capture.statusCode, 409)
})

t.test('our own capture, then its payment_intent.succeeded: nothing changes twice', async (t) => {
  const s = await setup(t)
  const { id, intentId } = await authorization(t, s)
  const captured = await s.app.inject({ method: 'POST', url: `/api/payments/${id}/capture`, headers: s.merchant.auth, payload: { amount: 30 } })
  t.equal(captured.statusCode, 200, captured.body)
  await deliver(t, s, 'payment_intent.succeeded', s.fake.intents.get(intentId))
  t.match(await paymentOf(s, id), { status: 'succeeded', amountCaptured: 30 })
  t.same(await eventTypes(s, id), ['payment.authorized', 'payment.succeeded'])
})
