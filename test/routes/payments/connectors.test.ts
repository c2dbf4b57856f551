/**
 * Payments through connector accounts, end to end in one process: a merchant adds a Stripe account
 * (checked against a local server speaking Stripe's wire format), pays, is declined, refunds and
 * captures through it; a refused connection fails over to the next account; GATEWAY=none refuses
 * merchants without accounts.
 */
import t, { type Test } from 'tap'
import { buildTestApp, merchantWithKey, type MerchantCredentials } from '../../helpers/app'
import { FakeStripe } from '../../helpers/fake-stripe'
import type { App } from '../../../app/app'

const SECRET_KEY = 'sk_test_51LocalFakeStripe'

async function setup (t: Test, env: Record<string, string> = {}) {
  const stripe = await FakeStripe.start()
  stripe.keys.add(SECRET_KEY)
  t.teardown(async () => { await stripe.close() })
  const app = await buildTestApp(t, { STRIPE_API_URL: stripe.url, GATEWAY_TIMEOUT_MS: '2000', ...env })
  const merchant = await merchantWithKey(app)
  return { app, stripe, merchant }
}

async function addConnector (t: Test, app: App, merchant: MerchantCredentials, body: Record<string, unknown>): Promise<string> {
  const res = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: merchant.auth, payload: body })
  t.equal(res.statusCode, 201, `connector ${String(body.type)} added`)
  return res.json().id
}

const pay = async (app: App, merchant: MerchantCredentials, body: Record<string, unknown>, key?: string) =>
  await app.inject({ method: 'POST', url: '/api/payments', headers: { ...merchant.auth, ...(key !== undefined ? { 'idempotency-key': key } : {}) }, payload: body })

t.test('a Stripe account: payment, decline, refund and manual capture go through it, under keys derived from our records', async (t) => {
  const { app, stripe, merchant } = await setup(t)
  const connectorId = await addConnector(t, app, merchant, { type: 'stripe', credentials: { secretKey: SECRET_KEY } })
  t.match(stripe.requests, [{ method: 'GET', path: '/v1/balance' }], 'the credentials were checked with one read')

  const paid = await pay(app, merchant, { amount: 10.1, currency: 'USD', paymentMethod: 'pm_card_visa' })
  t.equal(paid.statusCode, 201)
  const payment = paid.json()
  t.match(payment, { status: 'succeeded', connector: { id: connectorId, type: 'stripe' }, connectorReference: /^pi_/, paymentMethod: 'pm_card_visa' })
  const create = stripe.requests.find((request) => request.method === 'POST' && request.path === '/v1/payment_intents')
  t.equal(create?.headers['idempotency-key'], `payment-${String(payment.id)}`)
  t.match(create?.body, { amount: '1010', currency: 'usd', payment_method: 'pm_card_visa', confirm: 'true', off_session: 'true', capture_method: 'automatic', metadata: { payment_id: payment.id } })

  const declined = await pay(app, merchant, { amount: 5, currency: 'USD', paymentMethod: 'pm_card_chargeDeclinedInsufficientFunds' })
  t.equal(declined.statusCode, 402)
  t.match(declined.json(), { type: 'urn:problem-type:payment-declined', declineCode: 'insufficient_funds' })

  const refund = await app.inject({ method: 'POST', url: `/api/payments/${String(payment.id)}/refunds`, headers: merchant.auth, payload: { amount: 4 } })
  t.equal(refund.statusCode, 201)
  t.equal(refund.json().status, 'succeeded')
  const refundRequest = stripe.requests.find((request) => request.path === '/v1/refunds')
  t.match(refundRequest, { headers: { 'idempotency-key': `refund-${String(refund.json().id)}` }, body: { payment_intent: payment.connectorReference, amount: '400' } })

  const authorized = await pay(app, merchant, { amount: 20, currency: 'USD', paymentMethod: 'pm_card_visa', captureMethod: 'manual' })
  t.match(authorized.json(), { status: 'requires_capture', connector: { id: connectorId } })
  const captured = await app.inject({ method: 'POST', url: `/api/payments/${String(authorized.json().id)}/capture`, headers: merchant.auth, payload: { amount: 15 } })
  t.equal(captured.statusCode, 200)
  t.match(captured.json(), { status: 'succeeded', amountCaptured: 15 })
  t.match(stripe.requests.find((request) => request.path.endsWith('/capture')), { body: { amount_to_capture: '1500' } })
})

t.test('a refused connection fails over to the next account; a time-out does not', async (t) => {
  const { app, stripe, merchant } = await setup(t, { GATEWAY_TIMEOUT_MS: '300' })
  const stripeId = await addConnector(t, app, merchant, { type: 'stripe', credentials: { secretKey: SECRET_KEY }, priority: 0 })
  const simulatedId = await addConnector(t, app, merchant, { type: 'simulated', priority: 1 })

  stripe.failNext('hangAfterWork')
  const pending = await pay(app, merchant, { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' }, 'order-1')
  t.equal(pending.statusCode, 503, 'unknown outcome: pending, no failover')
  const paymentId = pending.json().paymentId as string
  const stored = (await app.inject({ url: `/api/payments/${paymentId}`, headers: merchant.auth })).json()
  t.match(stored, { status: 'pending', connector: { id: stripeId }, attempts: [{ connectorId: stripeId, outcome: 'unknown', code: 'timeout' }] })
  const resumed = await pay(app, merchant, { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' }, 'order-1')
  t.equal(resumed.statusCode, 201, 'the retry resumes on Stripe under the same key')
  t.match(resumed.json(), { status: 'succeeded', connector: { id: stripeId } })
  t.equal(stripe.intentsOf(paymentId).length, 1, 'one PaymentIntent: Stripe replayed')

  await stripe.stopListening()
  const failedOver = await pay(app, merchant, { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' })
  t.equal(failedOver.statusCode, 201)
  t.match(failedOver.json(), {
    status: 'succeeded',
    connector: { id: simulatedId, type: 'simulated' },
    attempts: [{ connectorId: stripeId, connectorType: 'stripe', outcome: 'not_processed', code: 'connection_refused' }, { connectorId: simulatedId, outcome: 'succeeded' }]
  })
})

t.test('a disabled account takes no new payments but keeps its own: a refund still goes to it', async (t) => {
  const { app, stripe, merchant } = await setup(t)
  const stripeId = await addConnector(t, app, merchant, { type: 'stripe', credentials: { secretKey: SECRET_KEY } })
  const payment = (await pay(app, merchant, { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' })).json()
  const disabled = await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}/connectors/${stripeId}`, headers: merchant.auth, payload: { status: 'disabled' } })
  t.equal(disabled.statusCode, 200)
  const next = await pay(app, merchant, { amount: 10, currency: 'USD' })
  t.match(next.json(), { connector: { id: null, type: 'simulated' } }, 'no enabled account: the default gateway')
  const deleted = await app.inject({ method: 'DELETE', url: `/merchants/${merchant.merchantId}/connectors/${stripeId}`, headers: merchant.auth })
  t.equal(deleted.statusCode, 204)
  const refund = await app.inject({ method: 'POST', url: `/api/payments/${String(payment.id)}/refunds`, headers: merchant.auth, payload: {} })
  t.equal(refund.json().status, 'succeeded')
  t.equal(stripe.requests.filter((request) => request.path === '/v1/refunds').length, 1, 'refunded through the deleted account')
})

t.test('GATEWAY=none: a merchant without connector accounts is refused with 409 no-connector; one with an account pays', async (t) => {
  const { app, merchant } = await setup(t, { GATEWAY: 'none' })
  const refused = await pay(app, merchant, { amount: 10, currency: 'USD' }, 'no-connector-1')
  t.equal(refused.statusCode, 409)
  t.match(refused.json(), { type: 'urn:problem-type:no-connector' })
  t.equal(await app.db.payments.count(), 0, 'nothing stored')
  await addConnector(t, app, merchant, { type: 'stripe', credentials: { secretKey: SECRET_KEY } })
  const paid = await pay(app, merchant, { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' }, 'no-connector-1')
  t.equal(paid.statusCode, 201, 'the refused key was not consumed')
})
