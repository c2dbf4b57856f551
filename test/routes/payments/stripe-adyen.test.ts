/**
 * Two real PSPs behind one merchant, end to end in one process (local servers speaking Stripe's and
 * Adyen's wire formats): when Stripe refuses connections the payment fails over to Adyen with the
 * payment method meant for Adyen; Adyen's capture and refund are accepted (202) and settled by its
 * signed notifications; a payment without a method for Adyen skips it.
 */
import t, { type Test } from 'tap'
import { buildTestApp, merchantWithKey, type MerchantCredentials } from '../../helpers/app'
import { FakeStripe } from '../../helpers/fake-stripe'
import { FAKE_ADYEN_API_KEY, FAKE_ADYEN_MERCHANT, FakeAdyen } from '../../helpers/fake-adyen'
import { HMAC_KEY, notificationBody, notificationItem } from '../../helpers/adyen-notifications'
import type { App } from '../../../app/app'

const STRIPE_KEY = 'sk_test_51LocalFakeStripe'

async function setup (t: Test) {
  const stripe = await FakeStripe.start()
  stripe.keys.add(STRIPE_KEY)
  const adyen = await FakeAdyen.start()
  t.teardown(async () => { await stripe.close(); await adyen.close() })
  const app = await buildTestApp(t, { STRIPE_API_URL: stripe.url, ADYEN_CHECKOUT_URL: adyen.url, GATEWAY: 'none' })
  const merchant = await merchantWithKey(app)
  const add = async (body: Record<string, unknown>): Promise<string> => {
    const res = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: merchant.auth, payload: body })
    t.equal(res.statusCode, 201, `${String(body.type)} account added`)
    return res.json().id
  }
  const stripeId = await add({ type: 'stripe', credentials: { secretKey: STRIPE_KEY }, priority: 0 })
  const adyenId = await add({ type: 'adyen', credentials: { apiKey: FAKE_ADYEN_API_KEY, merchantAccount: FAKE_ADYEN_MERCHANT, hmacKey: HMAC_KEY }, priority: 1 })
  return { app, stripe, adyen, merchant, stripeId, adyenId }
}

const notify = async (app: App, adyenId: string, item: Parameters<typeof notificationItem>[0]): Promise<{ statusCode: number, body: string }> => {
  const res = await app.inject({ method: 'POST', url: `/connectors/${adyenId}/adyen-notifications`, payload: notificationBody(notificationItem({ merchantAccountCode: FAKE_ADYEN_MERCHANT, ...item })) as Record<string, unknown> })
  return res
}

const pay = async (app: App, merchant: MerchantCredentials, body: Record<string, unknown>) =>
  await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: body })

t.test('Stripe refuses connections: the payment fails over to Adyen with the Adyen method; capture and refund settle by notification', async (t) => {
  const { app, stripe, adyen, merchant, stripeId, adyenId } = await setup(t)
  await stripe.stopListening()
  const paid = await pay(app, merchant, {
    amount: 20,
    currency: 'EUR',
    captureMethod: 'manual',
    paymentMethods: { stripe: 'pm_card_visa', adyen: 'stored_visa' },
    shopperReference: 'shopper-8812'
  })
  t.equal(paid.statusCode, 201)
  const payment = paid.json()
  t.match(payment, {
    status: 'requires_capture',
    connector: { id: adyenId, type: 'adyen' },
    attempts: [
      { connectorId: stripeId, connectorType: 'stripe', outcome: 'not_processed', code: 'connection_refused' },
      { connectorId: adyenId, connectorType: 'adyen', outcome: 'authorized' }
    ]
  })
  t.equal(stripe.requests.length, 1, 'only the credential check reached Stripe')
  const [charged] = adyen.paymentsOf(payment.id)
  t.equal(payment.connectorReference, charged?.pspReference, 'the Adyen pspReference is the payment\'s reference')
  const authorization = adyen.requests.find((request) => request.path.endsWith('/payments'))
  t.match(authorization, {
    headers: { 'idempotency-key': `payment-${String(payment.id)}` },
    body: { reference: payment.id, amount: { value: 2000, currency: 'EUR' }, paymentMethod: { storedPaymentMethodId: 'stored_visa' }, shopperReference: 'shopper-8812', shopperInteraction: 'ContAuth' }
  })

  const capture = await app.inject({ method: 'POST', url: `/api/payments/${String(payment.id)}/capture`, headers: merchant.auth, payload: { amount: 15 } })
  t.equal(capture.statusCode, 202, 'Adyen received the capture: its outcome comes by notification')
  t.match(capture.json(), { status: 'requires_capture', amountCapturePending: 15, amountCapturable: 0, amountCaptured: 0 })
  const tooEarly = await app.inject({ method: 'POST', url: `/api/payments/${String(payment.id)}/refunds`, headers: merchant.auth, payload: { amount: 1 } })
  t.equal(tooEarly.statusCode, 409, 'nothing is refundable before the capture lands')

  const captured = await notify(app, adyenId, { eventCode: 'CAPTURE', merchantReference: payment.id, originalReference: payment.connectorReference, amount: { value: 1500, currency: 'EUR' } })
  t.equal(captured.statusCode, 200)
  t.equal(captured.body, '[accepted]')
  t.match((await app.inject({ url: `/api/payments/${String(payment.id)}`, headers: merchant.auth })).json(), { status: 'succeeded', amountCaptured: 15 })

  const refund = await app.inject({ method: 'POST', url: `/api/payments/${String(payment.id)}/refunds`, headers: merchant.auth, payload: { amount: 5 } })
  t.equal(refund.statusCode, 202, 'Adyen received the refund')
  t.match(refund.json(), { status: 'pending', amount: 5 })
  const refunded = await notify(app, adyenId, { eventCode: 'REFUND', merchantReference: refund.json().id, originalReference: payment.connectorReference, amount: { value: 500, currency: 'EUR' } })
  t.equal(refunded.statusCode, 200)
  t.match((await app.inject({ url: `/api/payments/${String(payment.id)}/refunds/${String(refund.json().id)}`, headers: merchant.auth })).json(), { status: 'succeeded' })
  t.match((await app.inject({ url: `/api/payments/${String(payment.id)}`, headers: merchant.auth })).json(), { status: 'partially_refunded', amountRefunded: 5 })

  // Adyen answered the capture and the refund later, by notification (no request of ours): each request's audit entry
  // went with its own first write (the capture's reservation, the refund's creation), not with the settlement.
  const log = (await app.inject({ url: `/api/audit-log?resourceId=${String(payment.id)}`, headers: merchant.auth })).json().data as Array<{ action: string, actor: { type: string } }>
  t.same(log.map((entry) => entry.action), ['payment.refund', 'payment.capture', 'payment.create'], 'who captured and refunded, though the PSP answered later')
  t.ok(log.every((entry) => entry.actor.type === 'api_key'))
})

t.test('a payment with a method for Stripe only: Adyen is skipped, not asked', async (t) => {
  const { app, stripe, adyen, merchant, adyenId } = await setup(t)
  await stripe.stopListening()
  const res = await pay(app, merchant, { amount: 10, currency: 'EUR', paymentMethods: { stripe: 'pm_card_visa' } })
  t.equal(res.statusCode, 503, 'Stripe certainly did nothing and no other connector can take it: pending, retry later')
  t.match((await app.inject({ url: `/api/payments/${String(res.json().paymentId)}`, headers: merchant.auth })).json(), {
    status: 'pending',
    attempts: [{ outcome: 'not_processed', code: 'connection_refused' }, { connectorId: adyenId, outcome: 'skipped', code: 'no_payment_method' }]
  })
  t.equal(adyen.requests.filter((request) => request.path.endsWith('/payments')).length, 0)
})
