import t, { type Test } from 'tap'
import Stripe from 'stripe'
import { Writable } from 'node:stream'
import { buildTestApp, merchantWithKey, ADMIN_AUTH, type MerchantCredentials } from '../../helpers/app'
import { FakeStripe } from '../../helpers/fake-stripe'
import { spyGateway } from '../../helpers/gateway'
import { adyenAccount, notificationBody, notificationItem } from '../../helpers/adyen-notifications'
import type { App } from '../../../app/app'
import type { ConnectorFactory } from '../../../src/gateway/connectors'

/* Issue 40: refunds made at the PSP (Stripe Dashboard, Adyen Customer Area) are recorded so our records equal the PSP's. */

const SECRET_KEY = 'sk_test_51Hx00pspchangesPART004242'
const WEBHOOK_SECRET = 'whsec_0123456789abcdefPSPCHANGES'
const NO_KEY = { authorization: undefined }

let counter = 0
function event (type: string, object: Record<string, unknown>) {
  return { id: `evt_psp_${++counter}`, object: 'event', api_version: '2026-10-28.endive', created: Math.floor(Date.now() / 1000), type, livemode: false, data: { object } }
}

async function stripeSetup (t: Test): Promise<{ app: App, merchant: MerchantCredentials, url: string }> {
  const fake = await FakeStripe.start()
  t.teardown(async () => { await fake.close() })
  fake.keys.add(SECRET_KEY)
  const app = await buildTestApp(t, { STRIPE_API_URL: fake.url })
  const merchant = await merchantWithKey(app)
  const created = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: ADMIN_AUTH, payload: { type: 'stripe', credentials: { secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET } } })
  return { app, merchant, url: `/connectors/${String(created.json().id)}/stripe-events` }
}

t.test('Stripe: a refund made in the Dashboard is recorded once it succeeded, once, with origin connector', async (t) => {
  const s = await stripeSetup(t)
  const paid = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' } })
  const paymentId = paid.json().id as string
  const pi = paid.json().connectorReference as string
  const ours = await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/refunds`, headers: s.merchant.auth, payload: { amount: 1 } })
  t.equal(ours.statusCode, 201)
  t.equal(ours.json().origin, 'api', 'ours')
  const refund = (status: string) => ({ id: 're_dashboard1', object: 'refund', amount: 400, currency: 'usd', payment_intent: pi, charge: 'ch_1', status, metadata: {}, failure_reason: null, created: 1 })
  const send = async (type: string, status: string) => {
    const payload = JSON.stringify(event(type, refund(status)))
    const res = await s.app.inject({ method: 'POST', url: s.url, headers: { ...NO_KEY, 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }) }, payload })
    t.equal(res.statusCode, 200)
  }
  await send('refund.created', 'pending')
  t.equal((await s.app.db.refunds.list(paymentId, { limit: 10 })).data.length, 1, 'a pending refund at Stripe is not recorded yet')
  await send('refund.updated', 'succeeded')
  await send('charge.refund.updated', 'succeeded')
  await send('refund.updated', 'succeeded')
  const list = (await s.app.inject({ method: 'GET', url: `/api/payments/${paymentId}/refunds`, headers: s.merchant.auth })).json()
  t.equal(list.data.length, 2, 'recorded once')
  t.match(list.data[0], { origin: 'connector', connectorReference: 're_dashboard1', amount: 4, status: 'succeeded' })
  t.match((await s.app.inject({ method: 'GET', url: `/api/payments/${paymentId}`, headers: s.merchant.auth })).json(), { status: 'partially_refunded', amountRefunded: 5 })
  const events = (await s.app.db.events.list({ merchantId: s.merchant.merchantId, limit: 100, type: 'refund.succeeded' })).data
  t.equal(events.length, 2, 'refund.succeeded for ours and for the one made at Stripe')
})

t.test('Stripe charge.refunded: the refunds a charge lists are recorded like refund.* events, once; a total beyond ours without a list is logged', async (t) => {
  const lines: string[] = []
  const fake = await FakeStripe.start()
  t.teardown(async () => { await fake.close() })
  fake.keys.add(SECRET_KEY)
  const logger = { level: 'info', stream: new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } }) }
  const app = await buildTestApp(t, { STRIPE_API_URL: fake.url }, { logger })
  const merchant = await merchantWithKey(app)
  const account = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: ADMIN_AUTH, payload: { type: 'stripe', credentials: { secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET } } })
  const url = `/connectors/${String(account.json().id)}/stripe-events`
  const paid = await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' } })
  const paymentId = paid.json().id as string
  const pi = paid.json().connectorReference as string
  const send = async (charge: Record<string, unknown>) => {
    const payload = JSON.stringify(event('charge.refunded', { id: 'ch_refunded1', object: 'charge', payment_intent: pi, currency: 'usd', amount: 1000, refunded: false, ...charge }))
    const res = await app.inject({ method: 'POST', url, headers: { ...NO_KEY, 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }) }, payload })
    t.equal(res.statusCode, 200, res.body)
  }
  const atStripe = { id: 're_listed1', object: 'refund', amount: 300, currency: 'usd', payment_intent: pi, charge: 'ch_refunded1', status: 'succeeded', metadata: {}, created: 1 }
  // An API version before 2022-11-15: the charge lists its refunds.
  await send({ amount_refunded: 300, refunds: { object: 'list', data: [atStripe] } })
  await send({ amount_refunded: 300, refunds: { object: 'list', data: [atStripe] } })
  // The same refund's own event, after the charge's (any order ends the same).
  const refundEvent = JSON.stringify(event('refund.updated', atStripe))
  t.equal((await app.inject({ method: 'POST', url, headers: { ...NO_KEY, 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: refundEvent, secret: WEBHOOK_SECRET }) }, payload: refundEvent })).statusCode, 200)
  const list = (await app.inject({ method: 'GET', url: `/api/payments/${paymentId}/refunds`, headers: merchant.auth })).json()
  t.equal(list.data.length, 1, 'recorded once')
  t.match(list.data[0], { origin: 'connector', connectorReference: 're_listed1', amount: 3, status: 'succeeded' })
  t.match((await app.inject({ method: 'GET', url: `/api/payments/${paymentId}`, headers: merchant.auth })).json(), { status: 'partially_refunded', amountRefunded: 3 })
  t.notOk(lines.some((line) => line.includes('more refunded on the charge')), 'the total matches: nothing to say')
  // A later API version: no list, only the total; the refund itself arrives as refund.created.
  await send({ amount_refunded: 500 })
  t.equal((await app.db.refunds.list(paymentId, { limit: 10 })).data.length, 1, 'nothing invented from a total')
  t.ok(lines.some((line) => line.includes('"level":40') && line.includes('more refunded on the charge')), 'the gap is logged for a person')
})

t.test('Adyen: a REFUND we never asked for is recorded once by its pspReference; one that does not fit is not', async (t) => {
  const gateway = spyGateway(
    async (request) => ({ outcome: 'succeeded', chargeId: `PSP-${request.paymentId}` }),
    (request) => ({ outcome: 'received', gatewayRefundId: `REF-${request.idempotencyKey}` }),
    () => ({ outcome: 'received' })
  )
  const factory: ConnectorFactory = () => ({ gateway, verify: async () => {} })
  const app = await buildTestApp(t, {}, { connectorFactory: factory })
  const merchant = await merchantWithKey(app)
  const connectorId = await adyenAccount(app, merchant.merchantId)
  const paid = await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 10, currency: 'USD', paymentMethod: 'stored-1' } })
  const paymentId = paid.json().id as string
  const deliver = async (...items: ReturnType<typeof notificationItem>[]) =>
    await app.inject({ method: 'POST', url: `/connectors/${connectorId}/adyen-notifications`, headers: { ...NO_KEY, 'content-type': 'application/json' }, payload: notificationBody(...items) as object })
  const item = notificationItem({ eventCode: 'REFUND', pspReference: 'RFND-CA-1', originalReference: `PSP-${paymentId}`, merchantReference: 'customer-area-refund', amount: { value: 600, currency: 'USD' } })
  t.equal((await deliver(item)).statusCode, 200)
  t.equal((await deliver(item)).statusCode, 200)
  const refunds = (await app.db.refunds.list(paymentId, { limit: 10 })).data
  t.equal(refunds.length, 1)
  t.match(refunds[0], { origin: 'connector', connectorReference: 'RFND-CA-1', amountMinor: 600, status: 'succeeded' })
  t.match(await app.db.payments.get(paymentId), { status: 'partially_refunded', amountRefundedMinor: 600 })
  const tooMuch = notificationItem({ eventCode: 'REFUND', pspReference: 'RFND-CA-2', originalReference: `PSP-${paymentId}`, merchantReference: 'x', amount: { value: 500, currency: 'USD' } })
  t.equal((await deliver(tooMuch)).statusCode, 200, 'accepted (Adyen would retry anything else)')
  t.equal((await app.db.refunds.list(paymentId, { limit: 10 })).data.length, 1, 'more than remains: not recorded (logged for a person)')
})
