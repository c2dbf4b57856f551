/**
 * Issue 36: once any attempt's outcome is unknown, a payment stays on that connector (whatever later attempts
 * answer) until the connector itself says nothing exists under our key; a call we give up on is aborted and never
 * retried behind our back; a PSP's word about any attempt is never ignored (money held for an attempt the payment
 * left is given back). Every case runs through the local Stripe and Adyen stand-ins, with Stripe first and with
 * Adyen first, on SQLite and on PostgreSQL (a throwaway schema; CI step 5 requires it).
 */
import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import Stripe from 'stripe'
import { buildTestApp, merchantWithKey, type MerchantCredentials } from '../../helpers/app'
import { FakeStripe } from '../../helpers/fake-stripe'
import { FAKE_ADYEN_API_KEY, FAKE_ADYEN_MERCHANT, FakeAdyen } from '../../helpers/fake-adyen'
import { HMAC_KEY, notificationBody, notificationItem } from '../../helpers/adyen-notifications'
import { until } from '../../helpers/local-psp'
import { ensurePostgres, freshSchema } from '../../helpers/postgres'
import type { App } from '../../../app/app'
import { adyenIdempotencyKey } from '../../../src/gateway/adyen/connector'

const STRIPE_KEY = 'sk_test_51LocalFakeStripeUnknown'
const WEBHOOK_SECRET = 'whsec_unknownOutcome0123456789'
const TIMEOUT_MS = 1500
const NO_KEY = { authorization: undefined }

interface Setup {
  app: App
  stripe: FakeStripe
  adyen: FakeAdyen
  merchant: MerchantCredentials
  stripeId: string
  adyenId: string
  /** The app's clock: advance it to age attempts (Stripe's search lag). */
  clock: { advance: (ms: number) => void }
  /** The service's log lines (JSON). */
  lines: string[]
}

type Backend = (t: Test) => Promise<Record<string, string>>

const sqlite: Backend = async () => ({})
const postgres: Backend = async (t) => ({ DATABASE_URL: (await freshSchema(t)).url })

async function setup (t: Test, backend: Backend, first: 'stripe' | 'adyen'): Promise<Setup> {
  const stripe = await FakeStripe.start()
  stripe.keys.add(STRIPE_KEY)
  const adyen = await FakeAdyen.start()
  t.teardown(async () => { await stripe.close(); await adyen.close() })
  let offset = 0
  const lines: string[] = []
  const logger = { level: 'debug', stream: new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } }) }
  const app = await buildTestApp(t, {
    ...await backend(t),
    STRIPE_API_URL: stripe.url,
    ADYEN_CHECKOUT_URL: adyen.url,
    GATEWAY: 'none',
    GATEWAY_TIMEOUT_MS: String(TIMEOUT_MS),
    CONNECTOR_CACHE_TTL_MS: '0'
  }, { logger, clock: () => Date.now() + offset })
  const merchant = await merchantWithKey(app)
  const add = async (body: Record<string, unknown>): Promise<string> => {
    const res = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: merchant.auth, payload: body })
    t.equal(res.statusCode, 201, `${String(body.type)} account added`)
    return res.json().id
  }
  const stripeId = await add({ type: 'stripe', credentials: { secretKey: STRIPE_KEY, webhookSecret: WEBHOOK_SECRET }, priority: first === 'stripe' ? 0 : 10 })
  const adyenId = await add({
    type: 'adyen', credentials: { apiKey: FAKE_ADYEN_API_KEY, merchantAccount: FAKE_ADYEN_MERCHANT, hmacKey: HMAC_KEY }, priority: first === 'adyen' ? 0 : 10
  })
  stripe.requests.length = 0
  adyen.requests.length = 0
  return { app, stripe, adyen, merchant, stripeId, adyenId, clock: { advance: (ms) => { offset += ms } }, lines }
}

const body = (adyenMethod = 'stored_visa'): Record<string, unknown> => ({
  amount: 20, currency: 'EUR', paymentMethods: { stripe: 'pm_card_visa', adyen: adyenMethod }, shopperReference: 'shopper-36'
})

async function pay (s: Setup, key: string, payload = body()) {
  return await s.app.inject({ method: 'POST', url: '/api/payments', headers: { ...s.merchant.auth, 'idempotency-key': key }, payload })
}

async function paymentOf (s: Setup, id: string) {
  return (await s.app.inject({ url: `/api/payments/${id}`, headers: s.merchant.auth })).json()
}

const stripeCharges = (s: Setup): number => s.stripe.requests.filter((request) => request.method === 'POST' && request.path === '/v1/payment_intents').length
const adyenCharges = (s: Setup): number => s.adyen.requests.filter((request) => request.path.endsWith('/payments')).length

async function stripeEvent (s: Setup, type: string, object: Record<string, unknown>) {
  const payload = JSON.stringify({ id: `evt_${Math.random().toString(36).slice(2, 12)}`, object: 'event', api_version: '2026-10-28.endive', created: Math.floor(Date.now() / 1000), type, livemode: false, data: { object } })
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET })
  return await s.app.inject({
    method: 'POST', url: `/connectors/${s.stripeId}/stripe-events`, headers: { ...NO_KEY, 'content-type': 'application/json', 'stripe-signature': signature }, payload
  })
}

async function adyenNotification (s: Setup, item: Parameters<typeof notificationItem>[0]) {
  return await s.app.inject({
    method: 'POST', url: `/connectors/${s.adyenId}/adyen-notifications`, headers: NO_KEY, payload: notificationBody(notificationItem({ merchantAccountCode: FAKE_ADYEN_MERCHANT, ...item })) as Record<string, unknown>
  })
}

/**
 * The first connector hangs after doing the work (unknown), then refuses connections, then answers 500, then refuses
 * again: every answer is 503 and the attempts say so. Returns the payment's id; the connector is left not listening.
 */
async function unknownRefusedFailedRefused (t: Test, s: Setup, psp: FakeStripe | FakeAdyen, key: string): Promise<string> {
  psp.failNext('hangAfterWork')
  const timedOut = await pay(s, key)
  t.equal(timedOut.statusCode, 503, 'unknown')
  const id = timedOut.json().paymentId as string
  await until(() => psp.openConnections() === 0)
  await psp.stopListening()
  t.equal((await pay(s, key)).statusCode, 503, 'refused')
  await psp.listenAgain()
  psp.failNext('status500')
  t.equal((await pay(s, key)).statusCode, 503, '500')
  await psp.stopListening()
  t.equal((await pay(s, key)).statusCode, 503, 'refused again')
  t.match((await paymentOf(s, id)).attempts.map((attempt: { outcome: string, code: string }) => `${attempt.outcome}:${attempt.code}`),
    ['unknown:timeout', 'not_processed:connection_refused', 'unknown:server_error', 'not_processed:connection_refused'])
  return id
}

function cases (t: Test, backend: Backend): void {
  t.test('Stripe first: Stripe acts, its answer is lost and it goes away: pending on Stripe, never charged at Adyen, no retry behind our back', async (t) => {
    const s = await setup(t, backend, 'stripe')
    s.stripe.failNext('dropAfterWork')
    const first = await pay(s, 'k-drop')
    t.equal(first.statusCode, 503, 'the outcome is unknown')
    t.equal(stripeCharges(s), 1, 'the SDK sent the reset request once: its own retry would prove nothing')
    await s.stripe.stopListening()
    const retried = await pay(s, 'k-drop')
    t.equal(retried.statusCode, 503, 'a refused connection after an unknown outcome does not release the payment')
    const payment = await paymentOf(s, first.json().paymentId)
    t.match(payment, {
      status: 'pending',
      connector: { id: s.stripeId },
      attempts: [
        { connectorId: s.stripeId, outcome: 'unknown', code: 'connection_lost' },
        { connectorId: s.stripeId, outcome: 'not_processed', code: 'connection_refused' }
      ]
    })
    t.equal(adyenCharges(s), 0, 'Adyen was never asked')

    await s.stripe.listenAgain()
    const resumed = await pay(s, 'k-drop')
    t.equal(resumed.statusCode, 201, 'Stripe is back: its answer under our key settles the payment')
    t.match(resumed.json(), { status: 'succeeded', connector: { id: s.stripeId } })
    t.equal(s.stripe.intentsOf(first.json().paymentId).length, 1, 'one PaymentIntent')
    t.equal(adyenCharges(s), 0)
  })

  t.test('Stripe first: unknown, then refused, then 503, then refused again: 503 each time, Adyen never charged; Stripe back: one charge', async (t) => {
    const s = await setup(t, backend, 'stripe')
    const id = await unknownRefusedFailedRefused(t, s, s.stripe, 'k-seq')
    t.equal(adyenCharges(s), 0, 'Adyen was never asked')

    // The recovery worker applies the same rule: it never moves the payment either (past the client's window after its 503).
    s.clock.advance(11_000)
    const recovered = await s.app.payments.recoverPending({ ageSeconds: 0, leaseMs: 5000, respond: (payment) => ({ statusCode: 201, headers: {}, body: JSON.stringify({ id: payment.id }) }) })
    t.same(recovered, { settled: 0, stillPending: 1 })
    t.equal(adyenCharges(s), 0, 'not by the recovery worker either')

    await s.stripe.listenAgain()
    const settled = await pay(s, 'k-seq')
    t.equal(settled.statusCode, 201)
    t.match(settled.json(), { status: 'succeeded', connector: { id: s.stripeId } })
    t.equal(s.stripe.intentsOf(id).length, 1, 'one PaymentIntent')
  })

  t.test('Stripe first: only Stripe\'s own word that nothing exists frees the payment; a search is trusted once past its lag', async (t) => {
    const s = await setup(t, backend, 'stripe')
    s.stripe.failNext('status500')
    const first = await pay(s, 'k-lookup')
    t.equal(first.statusCode, 503)
    const id = first.json().paymentId as string
    s.stripe.failNext('rateLimit429')
    t.equal((await pay(s, 'k-lookup')).statusCode, 503, 'Stripe refuses the charge; its search finds nothing yet, but a PaymentIntent may not be searchable for a minute')
    t.equal(adyenCharges(s), 0)
    s.clock.advance(130_000)
    s.stripe.failNext('rateLimit429')
    const moved = await pay(s, 'k-lookup')
    t.equal(moved.statusCode, 201, 'past the search lag, nothing found at Stripe: the payment may go on to Adyen')
    t.match(moved.json(), {
      status: 'succeeded',
      connector: { id: s.adyenId },
      attempts: [
        { connectorId: s.stripeId, outcome: 'unknown', code: 'server_error' },
        { connectorId: s.stripeId, outcome: 'not_processed', code: 'rate_limited' },
        { connectorId: s.stripeId, outcome: 'not_processed', code: 'rate_limited' },
        { connectorId: s.stripeId, outcome: 'not_found', code: 'lookup_none' },
        { connectorId: s.adyenId, outcome: 'succeeded' }
      ]
    })
    t.equal(s.stripe.intentsOf(id).length, 0, 'nothing at Stripe')
    t.equal(s.adyen.paymentsOf(id).length, 1, 'one charge at Adyen')
  })

  t.test('Stripe first: a call that times out is aborted; Stripe never gets it again, so the shopper\'s cancel stands', async (t) => {
    const s = await setup(t, backend, 'stripe')
    s.stripe.holdAnswerMs = TIMEOUT_MS * 3
    s.stripe.failNext('holdBeforeWork')
    const timedOut = await pay(s, 'k-cancel')
    t.equal(timedOut.statusCode, 503)
    const id = timedOut.json().paymentId as string
    await until(() => s.stripe.openConnections() === 0)
    const canceled = await s.app.inject({ method: 'POST', url: `/api/payments/${id}/cancel`, headers: s.merchant.auth })
    t.equal(canceled.statusCode, 200)
    t.equal(canceled.json().status, 'canceled')
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 3))
    t.equal(stripeCharges(s), 1, 'the abandoned request was never sent again')
    t.equal(s.stripe.intentsOf(id).length, 0, 'Stripe made nothing')
  })

  t.test('Stripe first: Stripe reports money for a payment held as canceled: it is refunded under a derived key and recorded', async (t) => {
    const s = await setup(t, backend, 'stripe')
    s.stripe.failNext('status500')
    const first = await pay(s, 'k-late')
    const id = first.json().paymentId as string
    t.equal((await s.app.inject({ method: 'POST', url: `/api/payments/${id}/cancel`, headers: s.merchant.auth })).json().status, 'canceled')
    // Stripe made the charge after all (a request we could not see): its event arrives.
    const intent = { id: 'pi_late36', object: 'payment_intent' as const, amount: 2000, amount_received: 2000, amount_capturable: 0, currency: 'eur', status: 'succeeded', capture_method: 'automatic', latest_charge: 'ch_late36', last_payment_error: null, metadata: { payment_id: id }, livemode: false, created: 1 }
    s.stripe.intents.set(intent.id, { ...intent, confirmation_method: 'automatic', payment_method: 'pm_card_visa', cancellation_reason: null, livemode: false })
    const delivered = await stripeEvent(s, 'payment_intent.succeeded', intent)
    t.equal(delivered.statusCode, 200)
    const refund = s.stripe.requests.find((request) => request.path === '/v1/refunds')
    t.match(refund, { headers: { 'idempotency-key': `payment-${id}:release:${s.stripeId}` }, body: { payment_intent: 'pi_late36', amount: '2000' } })
    t.match(await paymentOf(s, id), {
      status: 'canceled',
      attempts: [
        { outcome: 'unknown' },
        { connectorId: s.stripeId, outcome: 'held', code: 'succeeded', connectorReference: 'pi_late36' },
        { connectorId: s.stripeId, outcome: 'released', code: 'refunded', connectorReference: 'pi_late36' }
      ]
    })
    t.ok(s.lines.some((line) => line.includes('"level":40') && line.includes('giving it back')), 'a warning is logged')
    t.equal((await stripeEvent(s, 'payment_intent.succeeded', intent)).statusCode, 200, 'the same report again')
    t.equal(s.stripe.requests.filter((request) => request.path === '/v1/refunds').length, 1, 'given back once')
  })

  t.test('Stripe first: a pending manual payment whose authorization was captured in part in Stripe\'s Dashboard records the part taken', async (t) => {
    // Simulation seed 13550662: payment_intent.succeeded (amount_received < amount) settled a pending payment as if all were taken.
    const s = await setup(t, backend, 'stripe')
    s.stripe.failNext('status500')
    const id = (await pay(s, 'k-part', { ...body(), captureMethod: 'manual' })).json().paymentId as string
    t.equal((await paymentOf(s, id)).status, 'pending')
    const intent = { id: 'pi_part36', object: 'payment_intent' as const, amount: 2000, amount_received: 500, amount_capturable: 0, currency: 'eur', status: 'succeeded', capture_method: 'manual', latest_charge: 'ch_part36', last_payment_error: null, metadata: { payment_id: id }, livemode: false as const, created: 1 }
    s.stripe.intents.set(intent.id, { ...intent, confirmation_method: 'automatic', payment_method: 'pm_card_visa', cancellation_reason: null })
    t.equal((await stripeEvent(s, 'payment_intent.succeeded', intent)).statusCode, 200)
    t.match(await paymentOf(s, id), { status: 'succeeded', amount: 20, amountCaptured: 5, connectorReference: intent.id }, 'what Stripe took')
    const refund = await s.app.inject({ method: 'POST', url: `/api/payments/${id}/refunds`, headers: s.merchant.auth, payload: { amount: 5.01 } })
    t.equal(refund.statusCode, 409, 'no more refunded than Stripe took')
  })

  t.test('Stripe first: a canceled manual payment whose authorization was captured in part at Stripe: the part taken is given back', async (t) => {
    const s = await setup(t, backend, 'stripe')
    s.stripe.failNext('status500')
    const id = (await pay(s, 'k-part-held', { ...body(), captureMethod: 'manual' })).json().paymentId as string
    t.equal((await s.app.inject({ method: 'POST', url: `/api/payments/${id}/cancel`, headers: s.merchant.auth })).json().status, 'canceled')
    // Stripe authorized after all, and someone captured 5.00 of the 20.00 in Stripe's Dashboard: the refund can only be 5.00.
    const intent = { id: 'pi_parth36', object: 'payment_intent' as const, amount: 2000, amount_received: 500, amount_capturable: 0, currency: 'eur', status: 'succeeded', capture_method: 'manual', latest_charge: 'ch_parth36', last_payment_error: null, metadata: { payment_id: id }, livemode: false as const, created: 1 }
    s.stripe.intents.set(intent.id, { ...intent, confirmation_method: 'automatic', payment_method: 'pm_card_visa', cancellation_reason: null })
    t.equal((await stripeEvent(s, 'payment_intent.succeeded', intent)).statusCode, 200)
    const refunds = s.stripe.requests.filter((request) => request.path === '/v1/refunds')
    t.equal(refunds.length, 1)
    t.match(refunds[0], { headers: { 'idempotency-key': `payment-${id}:release:${s.stripeId}:left-500` }, body: { payment_intent: 'pi_parth36', amount: '500' } })
    t.match((await paymentOf(s, id)).attempts.at(-1), { outcome: 'released', code: 'refunded', connectorReference: 'pi_parth36' })
  })

  t.test('Stripe first: money that could not be given back stays held, and the recovery worker gives it back later', async (t) => {
    const s = await setup(t, backend, 'stripe')
    s.stripe.failNext('status500')
    const id = (await pay(s, 'k-held')).json().paymentId as string
    t.equal((await s.app.inject({ method: 'POST', url: `/api/payments/${id}/cancel`, headers: s.merchant.auth })).json().status, 'canceled')
    const intent = { id: 'pi_held36', object: 'payment_intent' as const, amount: 2000, amount_received: 2000, amount_capturable: 0, currency: 'eur', status: 'succeeded', capture_method: 'automatic', latest_charge: 'ch_held36', last_payment_error: null, metadata: { payment_id: id }, livemode: false as const, created: 1 }
    s.stripe.intents.set(intent.id, { ...intent, confirmation_method: 'automatic', payment_method: 'pm_card_visa', cancellation_reason: null })
    s.stripe.failNext('status500')
    t.equal((await stripeEvent(s, 'payment_intent.succeeded', intent)).statusCode, 200, 'the event is accepted')
    t.match((await paymentOf(s, id)).attempts.at(-1), { outcome: 'held', code: 'succeeded', connectorReference: 'pi_held36' }, 'Stripe answered 500 to the refund: still held')
    t.ok(s.lines.some((line) => line.includes('"level":50') && line.includes('could not be given back yet')), 'an error is logged for a person')
    t.same(await s.app.payments.releaseHeldMoney(), { released: 1, stillHeld: 0 }, 'the worker\'s pass gives it back')
    t.match((await paymentOf(s, id)).attempts.at(-1), { outcome: 'released', code: 'refunded', connectorReference: 'pi_held36' })
    t.same(await s.app.payments.releaseHeldMoney(), { released: 0, stillHeld: 0 }, 'nothing left to give back')
    t.equal(s.stripe.requests.filter((request) => request.path === '/v1/refunds' && request.headers['idempotency-key'] === `payment-${id}:release:${s.stripeId}`).length, 2, 'the same derived key both times')
  })

  t.test('Stripe first: a release Stripe refuses is recorded and asked again later under a new derived key', async (t) => {
    const s = await setup(t, backend, 'stripe')
    s.stripe.failNext('status500')
    const id = (await pay(s, 'k-refused')).json().paymentId as string
    t.equal((await s.app.inject({ method: 'POST', url: `/api/payments/${id}/cancel`, headers: s.merchant.auth })).json().status, 'canceled')
    const intent = { id: 'pi_refused36', object: 'payment_intent' as const, amount: 2000, amount_received: 2000, amount_capturable: 0, currency: 'eur', status: 'succeeded', capture_method: 'automatic', latest_charge: 'ch_refused36', last_payment_error: null, metadata: { payment_id: id }, livemode: false as const, created: 1 }
    // Stripe holds the charge where it cannot be refunded yet (as under a dispute): the refund is answered 400.
    s.stripe.intents.set(intent.id, { ...intent, status: 'requires_capture', confirmation_method: 'automatic', payment_method: 'pm_card_visa', cancellation_reason: null })
    t.equal((await stripeEvent(s, 'payment_intent.succeeded', intent)).statusCode, 200, 'the event is accepted')
    t.match((await paymentOf(s, id)).attempts.slice(-2), [
      { outcome: 'held', code: 'succeeded', connectorReference: 'pi_refused36' },
      { outcome: 'release_refused', connectorReference: 'pi_refused36' }
    ], 'the refusal is recorded; the money stays held')
    t.same(await s.app.payments.releaseHeldMoney(), { released: 0, stillHeld: 1 }, 'not asked again at once')
    s.stripe.intents.set(intent.id, { ...intent, confirmation_method: 'automatic', payment_method: 'pm_card_visa', cancellation_reason: null })
    s.clock.advance(16 * 60_000)
    t.same(await s.app.payments.releaseHeldMoney(), { released: 1, stillHeld: 0 }, 'asked again once time has run on')
    t.match((await paymentOf(s, id)).attempts.at(-1), { outcome: 'released', code: 'refunded', connectorReference: 'pi_refused36' })
    const keys = s.stripe.requests.filter((request) => request.path === '/v1/refunds').map((request) => request.headers['idempotency-key'])
    t.same(keys, [`payment-${id}:release:${s.stripeId}`, `payment-${id}:release:${s.stripeId}:1`], 'a new key counting the refusal')
  })

  /** A canceled payment whose charge Stripe made after all (PaymentIntent `intentId`, 20.00 EUR): its id and the intent, not reported yet. */
  async function canceledWithLateStripeCharge (t: Test, s: Setup, key: string, intentId: string) {
    s.stripe.failNext('status500')
    const id = (await pay(s, key)).json().paymentId as string
    t.equal((await s.app.inject({ method: 'POST', url: `/api/payments/${id}/cancel`, headers: s.merchant.auth })).json().status, 'canceled')
    const intent = { id: intentId, object: 'payment_intent' as const, amount: 2000, amount_received: 2000, amount_capturable: 0, currency: 'eur', status: 'succeeded', capture_method: 'automatic', latest_charge: `ch_of_${intentId}`, last_payment_error: null, metadata: { payment_id: id }, livemode: false as const, created: 1 }
    s.stripe.intents.set(intent.id, { ...intent, confirmation_method: 'automatic', payment_method: 'pm_card_visa', cancellation_reason: null })
    return { id, intent }
  }

  const dashboardRefund = (refundId: string, intentId: string, amount: number): Record<string, unknown> =>
    ({ id: refundId, object: 'refund', amount, currency: 'eur', status: 'succeeded', payment_intent: intentId, charge: `ch_of_${intentId}`, metadata: {} })

  const releaseKeys = (s: Setup, intentId: string): unknown[] =>
    s.stripe.requests.filter((request) => request.path === '/v1/refunds' && request.body.payment_intent === intentId).map((request) => [request.headers['idempotency-key'], request.body.amount])

  t.test('Stripe first: part of a held charge refunded in the Stripe Dashboard before Stripe reports the charge: the release refunds what is left', async (t) => {
    const s = await setup(t, backend, 'stripe')
    const { id, intent } = await canceledWithLateStripeCharge(t, s, 'k-part-first', 'pi_part38')
    t.equal((await stripeEvent(s, 'charge.refund.updated', dashboardRefund('re_dash38', intent.id, 500))).statusCode, 200, 'the refund made at Stripe is accepted')
    t.equal((await stripeEvent(s, 'refund.created', dashboardRefund('re_dash38', intent.id, 500))).statusCode, 200, 'and its other event')
    t.equal((await stripeEvent(s, 'payment_intent.succeeded', intent)).statusCode, 200)
    t.same(releaseKeys(s, intent.id), [[`payment-${id}:release:${s.stripeId}:left-1500`, '1500']], 'the 15.00 left, once, under a key naming the amount')
    t.match((await paymentOf(s, id)).attempts.slice(-2), [
      { outcome: 'held', code: 'succeeded', connectorReference: 'pi_part38' },
      { outcome: 'released', code: 'refunded', connectorReference: 'pi_part38' }
    ])
  })

  t.test('Stripe first: a held charge refunded at Stripe after its release was refused: asked again at once for what is left', async (t) => {
    const s = await setup(t, backend, 'stripe')
    const { id, intent } = await canceledWithLateStripeCharge(t, s, 'k-part-after', 'pi_after38')
    // The dashboard refund took part of the charge first, so Stripe refuses the whole amount (the fake refuses this way).
    s.stripe.intents.set(intent.id, { ...intent, status: 'requires_capture', confirmation_method: 'automatic', payment_method: 'pm_card_visa', cancellation_reason: null })
    t.equal((await stripeEvent(s, 'payment_intent.succeeded', intent)).statusCode, 200)
    t.match((await paymentOf(s, id)).attempts.at(-1), { outcome: 'release_refused', connectorReference: 'pi_after38' })
    s.stripe.intents.set(intent.id, { ...intent, confirmation_method: 'automatic', payment_method: 'pm_card_visa', cancellation_reason: null })
    t.equal((await stripeEvent(s, 'refund.created', dashboardRefund('re_after38', intent.id, 800))).statusCode, 200)
    t.same(await s.app.payments.releaseHeldMoney(), { released: 1, stillHeld: 0 }, 'asked again without waiting: the refund made at Stripe is news')
    t.same(releaseKeys(s, intent.id), [[`payment-${id}:release:${s.stripeId}`, '2000'], [`payment-${id}:release:${s.stripeId}:1:left-1200`, '1200']])
    t.match((await paymentOf(s, id)).attempts.at(-1), { outcome: 'released', code: 'refunded', connectorReference: 'pi_after38' })
  })

  t.test('Stripe first: a held charge refunded in full in the Stripe Dashboard: released with nothing asked of Stripe', async (t) => {
    const s = await setup(t, backend, 'stripe')
    const { id, intent } = await canceledWithLateStripeCharge(t, s, 'k-full', 'pi_full38')
    t.equal((await stripeEvent(s, 'refund.created', dashboardRefund('re_full38a', intent.id, 1500))).statusCode, 200)
    t.equal((await stripeEvent(s, 'refund.created', dashboardRefund('re_full38b', intent.id, 500))).statusCode, 200)
    t.equal((await stripeEvent(s, 'payment_intent.succeeded', intent)).statusCode, 200)
    t.same(releaseKeys(s, intent.id), [], 'no refund asked')
    t.match((await paymentOf(s, id)).attempts.slice(-2), [
      { outcome: 'held', code: 'succeeded', connectorReference: 'pi_full38' },
      { outcome: 'released', code: 'refunded_at_connector', connectorReference: 'pi_full38' }
    ])
    t.same(await s.app.payments.releaseHeldMoney(), { released: 0, stillHeld: 0 }, 'nothing held')
  })

  t.test('Stripe first: an event settles the payment while its request waits: the request answers the outcome, the key is finished', async (t) => {
    const s = await setup(t, backend, 'stripe')
    s.stripe.failNext('hangAfterWork')
    const waiting = pay(s, 'k-race')
    await until(() => stripeCharges(s) === 1)
    const [intent] = [...s.stripe.intents.values()]
    if (intent === undefined) throw new Error('Stripe made no PaymentIntent')
    t.equal((await stripeEvent(s, 'payment_intent.succeeded', { ...intent })).statusCode, 200)
    const answered = await waiting
    t.equal(answered.statusCode, 201, 'the settled outcome, not a 503')
    t.match(answered.json(), { status: 'succeeded', connectorReference: intent.id })
    t.notOk(s.lines.some((line) => line.includes('could not be recorded')), 'no error about the unknown attempt')
    const replayed = await pay(s, 'k-race')
    t.equal(replayed.statusCode, 201)
    t.equal(stripeCharges(s), 1)
  })

  t.test('Stripe first: an event settles a payment whose client gave up: the key answers the outcome at once', async (t) => {
    const s = await setup(t, backend, 'stripe')
    s.stripe.failNext('hangAfterWork')
    const gaveUp = await pay(s, 'k-gone')
    t.equal(gaveUp.statusCode, 503)
    const [intent] = [...s.stripe.intents.values()]
    if (intent === undefined) throw new Error('Stripe made no PaymentIntent')
    t.equal((await stripeEvent(s, 'payment_intent.succeeded', { ...intent })).statusCode, 200)
    await s.stripe.stopListening()
    const retried = await pay(s, 'k-gone')
    t.equal(retried.statusCode, 201, 'answered from the key, Stripe not asked')
    t.equal(retried.headers['idempotent-replayed'], 'true')
    t.match(retried.json(), { status: 'succeeded', connectorReference: intent.id })
  })

  t.test('after a 503 the recovery worker leaves the payment to its client: a retry after Retry-After never meets the worker (409)', async (t) => {
    const s = await setup(t, backend, 'stripe')
    const stripeOnly = { ...body(), paymentMethods: { stripe: 'pm_card_visa' } }
    s.stripe.failNext('status500')
    const first = await pay(s, 'k-yield', stripeOnly)
    t.equal(first.statusCode, 503)
    const id = first.json().paymentId as string
    // Old enough for the worker (RECOVERY_AGE_SECONDS), and answered 503 again just now.
    s.clock.advance(130_000)
    s.stripe.failNext('status500')
    const again = await pay(s, 'k-yield', stripeOnly)
    t.equal(again.statusCode, 503)
    t.equal(again.headers['retry-after'], '5')
    const asked = s.stripe.requests.length
    t.same(await s.app.backgroundJobs.recoverPendingPayments(), { settled: 0, stillPending: 0 }, 'the worker\'s pass within the window leaves it alone')
    t.equal(s.stripe.requests.length, asked, 'the worker asked Stripe nothing')
    s.clock.advance(9_000)
    t.same(await s.app.backgroundJobs.recoverPendingPayments(), { settled: 0, stillPending: 0 }, 'nor later within twice the Retry-After')
    s.stripe.failNext('status500')
    const late = await pay(s, 'k-yield', stripeOnly)
    t.equal(late.statusCode, 503, 'the client\'s retry (late, after 9 s) holds the key itself: not 409')

    // A client that does not come back: the worker settles the payment once the window has passed.
    s.clock.advance(11_000)
    t.same(await s.app.backgroundJobs.recoverPendingPayments(), { settled: 1, stillPending: 0 }, 'past the window the worker settles it')
    const replayed = await pay(s, 'k-yield', stripeOnly)
    t.equal(replayed.statusCode, 201)
    t.equal(replayed.headers['idempotent-replayed'], 'true', 'the worker stored the answer on the key')
    t.equal(s.stripe.intentsOf(id).length, 1, 'one PaymentIntent')
  })

  t.test('failed calls are summed up per connector at warn, each at debug', async (t) => {
    const s = await setup(t, backend, 'stripe')
    await s.stripe.stopListening()
    const ids: string[] = []
    for (const key of ['k-flood-1', 'k-flood-2', 'k-flood-3']) {
      const paid = await pay(s, key)
      t.equal(paid.statusCode, 201, 'failed over to Adyen')
      ids.push(paid.json().id)
    }
    const debug = s.lines.filter((line) => line.includes('"level":20') && line.includes('gateway call failed'))
    t.equal(debug.length, 3, 'one debug line per failed call')
    t.notOk(s.lines.some((line) => line.includes('"level":40') && line.includes('connection_refused') && !line.includes('gateway calls failed')), 'no warn line per call')
    const summaries = () => s.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'gateway calls failed on this connector')
    t.equal(summaries().length, 0, 'no summary before its interval ends')
    // The interval (10 s) is cut short as on shutdown.
    s.app.payments.flushFailureLog()
    t.match(summaries(), [{
      level: 40,
      connectorId: s.stripeId,
      connectorType: 'stripe',
      failures: 3,
      intervalMs: 10_000,
      first: { paymentId: ids[0], code: 'connection_refused', kind: 'not_processed', at: String },
      last: { paymentId: ids[2], code: 'connection_refused', kind: 'not_processed', at: String }
    }], 'one warn line for the connector: how many failed, the first and the last failure')
    t.equal(summaries().length, 1, 'one summary, for Stripe only (Adyen never failed)')
    s.app.payments.flushFailureLog()
    t.equal(summaries().length, 1, 'nothing left to sum up')
  })

  t.test('Adyen first: Received, then 429 or a refused connection: never charged at Stripe; the notification settles it', async (t) => {
    const s = await setup(t, backend, 'adyen')
    const first = await pay(s, 'k-adyen', body('stored_pending'))
    t.equal(first.statusCode, 503, 'Adyen received it: the outcome comes by notification')
    const id = first.json().paymentId as string
    s.adyen.failNext('rateLimit429')
    t.equal((await pay(s, 'k-adyen', body('stored_pending'))).statusCode, 503, '429 after an unknown outcome: still on Adyen')
    await s.adyen.stopListening()
    t.equal((await pay(s, 'k-adyen', body('stored_pending'))).statusCode, 503, 'refused: still on Adyen (it cannot be asked what it holds)')
    t.equal(stripeCharges(s), 0, 'Stripe was never asked')
    t.match(await paymentOf(s, id), {
      status: 'pending',
      connector: { id: s.adyenId },
      attempts: [
        { connectorId: s.adyenId, outcome: 'unknown', code: 'charge_pending' },
        { connectorId: s.adyenId, outcome: 'not_processed', code: 'rate_limited' },
        { connectorId: s.adyenId, outcome: 'not_processed', code: 'connection_refused' }
      ]
    })
    const [made] = s.adyen.paymentsOf(id)
    const notified = await adyenNotification(s, { eventCode: 'AUTHORISATION', merchantReference: id, pspReference: made?.pspReference ?? 'FAKE', amount: { value: 2000, currency: 'EUR' } })
    t.equal(notified.body, '[accepted]')
    t.match(await paymentOf(s, id), { status: 'succeeded', connector: { id: s.adyenId }, connectorReference: made?.pspReference })
    const replayed = await pay(s, 'k-adyen', body('stored_pending'))
    t.equal(replayed.statusCode, 201, 'the key was finished by the notification')
    t.equal(stripeCharges(s), 0)
  })

  t.test('Adyen first: unknown, then refused, then 503, then refused again: 503 each time, Stripe never charged', async (t) => {
    const s = await setup(t, backend, 'adyen')
    const id = await unknownRefusedFailedRefused(t, s, s.adyen, 'k-adyen-seq')
    t.equal(stripeCharges(s), 0, 'Stripe was never asked')
    await s.adyen.listenAgain()
    const settled = await pay(s, 'k-adyen-seq')
    t.equal(settled.statusCode, 201, 'Adyen replays its answer under our key')
    t.match(settled.json(), { status: 'succeeded', connector: { id: s.adyenId } })
    t.equal(s.adyen.paymentsOf(id).length, 1)
  })

  t.test('Adyen first: an AUTHORISATION for the attempt the payment left is given back at Adyen and recorded', async (t) => {
    const s = await setup(t, backend, 'adyen')
    s.adyen.failNext('rateLimit429')
    const paid = await pay(s, 'k-left')
    t.equal(paid.statusCode, 201, 'Adyen said 429 (certainly nothing done): Stripe charged it')
    const id = paid.json().id as string
    t.match(paid.json(), { connector: { id: s.stripeId }, attempts: [{ connectorId: s.adyenId, outcome: 'not_processed' }, { connectorId: s.stripeId, outcome: 'succeeded' }] })
    // Adyen did authorise after all: its word is not ignored.
    const notified = await adyenNotification(s, { eventCode: 'AUTHORISATION', merchantReference: id, pspReference: 'ADYENLEFT0001', amount: { value: 2000, currency: 'EUR' } })
    t.equal(notified.body, '[accepted]')
    const refund = s.adyen.requests.find((request) => request.path.endsWith('/payments/ADYENLEFT0001/refunds'))
    t.match(refund, { headers: { 'idempotency-key': adyenIdempotencyKey(`payment-${id}:release:${s.adyenId}`) }, body: { amount: { value: 2000, currency: 'EUR' } } })
    t.match(await paymentOf(s, id), {
      status: 'succeeded',
      connector: { id: s.stripeId },
      attempts: [
        { outcome: 'not_processed' },
        { outcome: 'succeeded' },
        { connectorId: s.adyenId, outcome: 'held', connectorReference: 'ADYENLEFT0001' },
        { connectorId: s.adyenId, outcome: 'released', code: 'release_received', connectorReference: 'ADYENLEFT0001' }
      ]
    })
  })

  t.test('Adyen first: the recovery worker never moves a payment whose outcome at Adyen is unknown; the client\'s retry never gets a 402', async (t) => {
    const s = await setup(t, backend, 'adyen')
    // Stripe would decline this card: a failover would store a 402 while Adyen may hold the money.
    const payload = { ...body('stored_pending'), paymentMethods: { stripe: 'pm_card_chargeDeclined', adyen: 'stored_pending' } }
    const first = await pay(s, 'k-adyen-worker', payload)
    t.equal(first.statusCode, 503, 'Adyen received it: unknown')
    const id = first.json().paymentId as string

    s.clock.advance(130_000)
    s.adyen.failNext('rateLimit429')
    t.same(await s.app.backgroundJobs.recoverPendingPayments(), { settled: 0, stillPending: 1 }, 'Adyen answers 429: the worker leaves the payment on Adyen')
    await s.adyen.stopListening()
    s.clock.advance(300_000)
    t.same(await s.app.backgroundJobs.recoverPendingPayments(), { settled: 0, stillPending: 1 }, 'Adyen refuses the connection: still on Adyen')
    t.equal(stripeCharges(s), 0, 'Stripe was never asked')

    const retried = await pay(s, 'k-adyen-worker', payload)
    t.equal(retried.statusCode, 503, 'the client\'s retry: still pending, never a 402')
    t.equal(retried.headers['idempotent-replayed'], undefined, 'nothing stored on the key')
    t.match(await paymentOf(s, id), {
      status: 'pending',
      connector: { id: s.adyenId },
      attempts: [
        { connectorId: s.adyenId, outcome: 'unknown', code: 'charge_pending' },
        { connectorId: s.adyenId, outcome: 'not_processed', code: 'rate_limited' },
        { connectorId: s.adyenId, outcome: 'not_processed', code: 'connection_refused' },
        { connectorId: s.adyenId, outcome: 'not_processed', code: 'connection_refused' }
      ]
    })
    t.notOk((await paymentOf(s, id)).attempts.some((attempt: { connectorId: string }) => attempt.connectorId === s.stripeId), 'no attempt at Stripe')

    await s.adyen.listenAgain()
    const [made] = s.adyen.paymentsOf(id)
    t.equal((await adyenNotification(s, { eventCode: 'AUTHORISATION', merchantReference: id, pspReference: made?.pspReference ?? 'FAKE', amount: { value: 2000, currency: 'EUR' } })).body, '[accepted]')
    const settled = await pay(s, 'k-adyen-worker', payload)
    t.equal(settled.statusCode, 201, 'Adyen\'s word settles it; the key answers it')
    t.match(settled.json(), { status: 'succeeded', connector: { id: s.adyenId }, connectorReference: made?.pspReference })
    t.equal(stripeCharges(s), 0)
  })

  t.test('Adyen first: a call that times out is aborted; Adyen never gets it again, so the shopper\'s cancel stands', async (t) => {
    const s = await setup(t, backend, 'adyen')
    s.adyen.holdAnswerMs = TIMEOUT_MS * 3
    s.adyen.failNext('holdBeforeWork')
    const timedOut = await pay(s, 'k-adyen-cancel')
    t.equal(timedOut.statusCode, 503)
    const id = timedOut.json().paymentId as string
    await until(() => s.adyen.openConnections() === 0)
    const canceled = await s.app.inject({ method: 'POST', url: `/api/payments/${id}/cancel`, headers: s.merchant.auth })
    t.equal(canceled.statusCode, 202, 'Adyen accepts the cancel; its notification tells the outcome')
    const [cancellation] = s.adyen.modifications.filter((modification) => modification.eventCode === 'CANCELLATION')
    t.match(cancellation, { success: true }, 'Adyen had nothing under our reference to cancel')
    const notified = await adyenNotification(s, { eventCode: 'CANCELLATION', merchantReference: id, pspReference: cancellation?.pspReference ?? 'FAKE', amount: { value: 2000, currency: 'EUR' } })
    t.equal(notified.body, '[accepted]')
    await until(() => s.adyen.abandoned === 1, TIMEOUT_MS * 4)
    t.pass('the held request found its connection closed by our time-out: Adyen did nothing for it')
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.equal(adyenCharges(s), 1, 'the abandoned request was never sent again')
    t.equal(s.adyen.paymentsOf(id).length, 0, 'Adyen made nothing')
    t.match(await paymentOf(s, id), { status: 'canceled', connector: { id: s.adyenId } })
    t.equal(stripeCharges(s), 0)
  })

  t.test('Adyen first: Adyen reports money for a payment held as canceled: it is refunded at Adyen under a derived key and recorded', async (t) => {
    const s = await setup(t, backend, 'adyen')
    s.adyen.failNext('status500')
    const first = await pay(s, 'k-adyen-late')
    t.equal(first.statusCode, 503)
    const id = first.json().paymentId as string
    t.equal((await s.app.inject({ method: 'POST', url: `/api/payments/${id}/cancel`, headers: s.merchant.auth })).statusCode, 202)
    const [cancellation] = s.adyen.modifications.filter((modification) => modification.eventCode === 'CANCELLATION')
    t.equal((await adyenNotification(s, { eventCode: 'CANCELLATION', merchantReference: id, pspReference: cancellation?.pspReference ?? 'FAKE', amount: { value: 2000, currency: 'EUR' } })).body, '[accepted]')
    t.equal((await paymentOf(s, id)).status, 'canceled')
    // Adyen authorised it after all (a request we could not see): its AUTHORISATION arrives.
    const late = { eventCode: 'AUTHORISATION' as const, merchantReference: id, pspReference: 'ADYENLATE0001', amount: { value: 2000, currency: 'EUR' } }
    t.equal((await adyenNotification(s, late)).body, '[accepted]')
    const refunds = s.adyen.requests.filter((request) => request.path.endsWith('/payments/ADYENLATE0001/refunds'))
    t.equal(refunds.length, 1)
    t.match(refunds[0], { headers: { 'idempotency-key': adyenIdempotencyKey(`payment-${id}:release:${s.adyenId}`) }, body: { amount: { value: 2000, currency: 'EUR' } } })
    t.match(await paymentOf(s, id), {
      status: 'canceled',
      attempts: [
        { connectorId: s.adyenId, outcome: 'unknown' },
        { connectorId: s.adyenId, outcome: 'cancel_requested', code: 'requested' },
        { connectorId: s.adyenId, outcome: 'held', connectorReference: 'ADYENLATE0001' },
        { connectorId: s.adyenId, outcome: 'released', code: 'release_received', connectorReference: 'ADYENLATE0001' }
      ]
    })
    t.ok(s.lines.some((line) => line.includes('"level":40') && line.includes('given back')), 'a warning is logged')
    t.equal((await adyenNotification(s, late)).body, '[accepted]', 'the same notification again')
    t.equal(s.adyen.requests.filter((request) => request.path.endsWith('/payments/ADYENLATE0001/refunds')).length, 1, 'given back once')
    t.equal(stripeCharges(s), 0)
  })

  t.test('Adyen first: part of a held charge refunded in the Customer Area before its AUTHORISATION arrives: the release refunds what is left', async (t) => {
    const s = await setup(t, backend, 'adyen')
    const declined = await pay(s, 'k-adyen-part', { ...body('stored_refused'), paymentMethods: { adyen: 'stored_refused' } })
    const id = declined.json().paymentId as string
    const customerArea = { eventCode: 'REFUND' as const, merchantReference: 'customer-area-7', pspReference: 'ADYENCAREFUND01', originalReference: 'ADYENPART0001', amount: { value: 700, currency: 'EUR' } }
    t.equal((await adyenNotification(s, customerArea)).body, '[accepted]')
    t.equal((await adyenNotification(s, { eventCode: 'AUTHORISATION', merchantReference: id, pspReference: 'ADYENPART0001', amount: { value: 2000, currency: 'EUR' } })).body, '[accepted]')
    const refunds = s.adyen.requests.filter((request) => request.path.endsWith('/payments/ADYENPART0001/refunds'))
    t.equal(refunds.length, 1)
    t.match(refunds[0], { headers: { 'idempotency-key': adyenIdempotencyKey(`payment-${id}:release:${s.adyenId}:left-1300`) }, body: { amount: { value: 1300, currency: 'EUR' } } })
    t.match((await paymentOf(s, id)).attempts.at(-1), { connectorId: s.adyenId, outcome: 'released', code: 'release_received', connectorReference: 'ADYENPART0001' })
  })

  t.test('Adyen first: the AUTHORISATION that settles a pending payment says which card paid; only the members a payment keeps', async (t) => {
    const s = await setup(t, backend, 'adyen')
    s.adyen.failNext('status500')
    const id = (await pay(s, 'k-adyen-card')).json().paymentId as string
    const additionalData = { cardSummary: '1111', expiryDate: '03/2030', cardIssuingCountry: 'NL', cardBin: '411111', cardHolderName: 'Checkout Test', authCode: '060494' }
    const item = { eventCode: 'AUTHORISATION' as const, merchantReference: id, pspReference: 'ADYENCARD0001', paymentMethod: 'visa', additionalData, amount: { value: 2000, currency: 'EUR' } }
    t.equal((await adyenNotification(s, item)).body, '[accepted]')
    t.match(await paymentOf(s, id), { status: 'succeeded', connectorReference: 'ADYENCARD0001' })
    t.same((await paymentOf(s, id)).paymentMethodDetails, { type: 'card', card: { brand: 'visa', last4: '1111', expMonth: 3, expYear: 2030, country: 'NL' } })
  })

  t.test('Adyen first: Adyen reports money for a payment held as declined: it is given back at Adyen and recorded', async (t) => {
    const s = await setup(t, backend, 'adyen')
    const declined = await pay(s, 'k-adyen-declined', { ...body('stored_refused'), paymentMethods: { adyen: 'stored_refused' } })
    t.equal(declined.statusCode, 402)
    const id = declined.json().paymentId as string
    t.equal((await paymentOf(s, id)).status, 'declined')
    t.equal((await adyenNotification(s, { eventCode: 'AUTHORISATION', merchantReference: id, pspReference: 'ADYENDECL0001', amount: { value: 2000, currency: 'EUR' } })).body, '[accepted]')
    t.match(s.adyen.requests.find((request) => request.path.endsWith('/payments/ADYENDECL0001/refunds')), {
      headers: { 'idempotency-key': adyenIdempotencyKey(`payment-${id}:release:${s.adyenId}`) }
    })
    t.match((await paymentOf(s, id)), {
      status: 'declined',
      attempts: [
        { connectorId: s.adyenId, outcome: 'declined' },
        { connectorId: s.adyenId, outcome: 'held', connectorReference: 'ADYENDECL0001' },
        { connectorId: s.adyenId, outcome: 'released', code: 'release_received', connectorReference: 'ADYENDECL0001' }
      ]
    })
  })

  t.test('Adyen first: the cancel giving back a held authorization is refused (captured meanwhile in the Customer Area): refunded instead, once', async (t) => {
    const s = await setup(t, backend, 'adyen')
    const declined = await pay(s, 'k-adyen-held-captured', { ...body('stored_refused'), captureMethod: 'manual', paymentMethods: { adyen: 'stored_refused' } })
    t.equal(declined.statusCode, 402)
    const id = declined.json().paymentId as string
    t.equal((await adyenNotification(s, { eventCode: 'AUTHORISATION', merchantReference: id, pspReference: 'ADYENHELD0001', amount: { value: 2000, currency: 'EUR' } })).body, '[accepted]')
    t.equal(s.adyen.requests.filter((request) => request.path.endsWith('/payments/ADYENHELD0001/cancels')).length, 1, 'given back by a cancel')
    const refused = { eventCode: 'CANCELLATION' as const, success: 'false' as const, merchantReference: id, pspReference: 'ADYENCANREFUSED', originalReference: 'ADYENHELD0001', reason: 'Transaction already captured', amount: { value: 2000, currency: 'EUR' } }
    t.equal((await adyenNotification(s, refused)).body, '[accepted]')
    const refunds = s.adyen.requests.filter((request) => request.path.endsWith('/payments/ADYENHELD0001/refunds'))
    t.equal(refunds.length, 1, 'refunded instead')
    t.match(refunds[0], { headers: { 'idempotency-key': adyenIdempotencyKey(`payment-${id}:release:${s.adyenId}`) }, body: { amount: { value: 2000, currency: 'EUR' } } })
    t.match((await paymentOf(s, id)).attempts.slice(-3), [
      { connectorId: s.adyenId, outcome: 'released', code: 'release_received', connectorReference: 'ADYENHELD0001' },
      { connectorId: s.adyenId, outcome: 'release_refused', code: 'cancel_refused', connectorReference: 'ADYENHELD0001' },
      { connectorId: s.adyenId, outcome: 'released', code: 'release_received', connectorReference: 'ADYENHELD0001' }
    ])
    t.equal((await adyenNotification(s, refused)).body, '[accepted]', 'the same refusal again')
    t.equal(s.adyen.requests.filter((request) => request.path.endsWith('/payments/ADYENHELD0001/refunds')).length, 1, 'refunded once')
  })

  t.test('Adyen first: a held authorization captured in part in the Customer Area: its CAPTURE is recorded, the cancel\'s refusal refunds what it took, once', async (t) => {
    const s = await setup(t, backend, 'adyen')
    const declined = await pay(s, 'k-adyen-held-part', { ...body('stored_refused'), captureMethod: 'manual', paymentMethods: { adyen: 'stored_refused' } })
    const id = declined.json().paymentId as string
    t.equal((await adyenNotification(s, { eventCode: 'AUTHORISATION', merchantReference: id, pspReference: 'ADYENHELD0002', amount: { value: 2000, currency: 'EUR' } })).body, '[accepted]')
    // Not our payment id nor a reference we recorded as the payment's: found by the charge it holds.
    const captured = { eventCode: 'CAPTURE' as const, merchantReference: 'customer-area-capture', pspReference: 'ADYENCACAP0002', originalReference: 'ADYENHELD0002', amount: { value: 500, currency: 'EUR' } }
    t.equal((await adyenNotification(s, captured)).body, '[accepted]')
    const refundsOf = () => s.adyen.requests.filter((request) => request.path.endsWith('/payments/ADYENHELD0002/refunds'))
    t.equal(refundsOf().length, 0, 'the cancel asked for is awaited: its refusal refunds')
    t.match((await paymentOf(s, id)).attempts.at(-1), { connectorId: s.adyenId, outcome: 'held', code: 'captured', amountMinor: 500, connectorReference: 'ADYENHELD0002' })
    const refused = { eventCode: 'CANCELLATION' as const, success: 'false' as const, merchantReference: id, pspReference: 'ADYENCANREF0002', originalReference: 'ADYENHELD0002', reason: 'Transaction already captured', amount: { value: 2000, currency: 'EUR' } }
    t.equal((await adyenNotification(s, refused)).body, '[accepted]')
    t.equal(refundsOf().length, 1)
    t.match(refundsOf()[0], { headers: { 'idempotency-key': adyenIdempotencyKey(`payment-${id}:release:${s.adyenId}:left-500`) }, body: { amount: { value: 500, currency: 'EUR' } } })
    t.equal((await adyenNotification(s, captured)).body, '[accepted]', 'the same CAPTURE again')
    t.equal(refundsOf().length, 1, 'refunded once')
    t.match((await paymentOf(s, id)).attempts.slice(-2), [
      { outcome: 'release_refused', code: 'cancel_refused' },
      { outcome: 'released', code: 'release_received', connectorReference: 'ADYENHELD0002' }
    ])
  })

  t.test('Adyen first: the refund giving back a held authorization fails later; the CAPTURE that says what was taken has that refunded at once', async (t) => {
    const s = await setup(t, backend, 'adyen')
    const declined = await pay(s, 'k-adyen-held-refund-failed', { ...body('stored_refused'), captureMethod: 'manual', paymentMethods: { adyen: 'stored_refused' } })
    const id = declined.json().paymentId as string
    t.equal((await adyenNotification(s, { eventCode: 'AUTHORISATION', merchantReference: id, pspReference: 'ADYENHELD0003', amount: { value: 2000, currency: 'EUR' } })).body, '[accepted]')
    const refused = { eventCode: 'CANCELLATION' as const, success: 'false' as const, merchantReference: id, pspReference: 'ADYENCANREF0003', originalReference: 'ADYENHELD0003', reason: 'Transaction already captured', amount: { value: 2000, currency: 'EUR' } }
    t.equal((await adyenNotification(s, refused)).body, '[accepted]')
    const refundsOf = () => s.adyen.requests.filter((request) => request.path.endsWith('/payments/ADYENHELD0003/refunds'))
    t.equal(refundsOf().length, 1, 'the whole amount asked for: what was captured is not known yet')
    const releaseKey = `payment-${id}:release:${s.adyenId}`
    const failed = { eventCode: 'REFUND_FAILED' as const, merchantReference: releaseKey, pspReference: 'ADYENREFFAIL0003', originalReference: 'ADYENHELD0003', reason: 'Insufficient balance on payment', amount: { value: 2000, currency: 'EUR' } }
    t.equal((await adyenNotification(s, failed)).body, '[accepted]')
    t.match((await paymentOf(s, id)).attempts.at(-1), { outcome: 'release_refused', code: 'insufficient_balance_on_payment', connectorReference: 'ADYENHELD0003' })
    t.equal((await adyenNotification(s, failed)).body, '[accepted]', 'the same failure again')
    t.equal((await paymentOf(s, id)).attempts.filter((attempt: { code: string }) => attempt.code === 'insufficient_balance_on_payment').length, 1, 'recorded once')
    const other = { ...failed, merchantReference: 'another-integration-refund', pspReference: 'ADYENREFFAIL0004' }
    t.equal((await adyenNotification(s, other)).body, '[accepted]', 'a failed refund that is not our release changes nothing')
    t.equal((await paymentOf(s, id)).attempts.filter((attempt: { outcome: string }) => attempt.outcome === 'release_refused').length, 2)
    const captured = { eventCode: 'CAPTURE' as const, merchantReference: 'customer-area-capture', pspReference: 'ADYENCACAP0003', originalReference: 'ADYENHELD0003', amount: { value: 700, currency: 'EUR' } }
    t.equal((await adyenNotification(s, captured)).body, '[accepted]')
    t.equal(refundsOf().length, 2)
    t.match(refundsOf()[1], { headers: { 'idempotency-key': adyenIdempotencyKey(`${releaseKey}:2:left-700`) }, body: { amount: { value: 700, currency: 'EUR' } } })
    t.match((await paymentOf(s, id)).attempts.slice(-2), [
      { outcome: 'held', code: 'captured', amountMinor: 700 },
      { outcome: 'released', code: 'release_received', connectorReference: 'ADYENHELD0003' }
    ])
  })

  t.test('Adyen first: a notification settles the payment while its request waits: the request answers the outcome, the key is finished', async (t) => {
    const s = await setup(t, backend, 'adyen')
    s.adyen.failNext('hangAfterWork')
    const waiting = pay(s, 'k-adyen-race')
    await until(() => s.adyen.payments.size === 1)
    const [made] = [...s.adyen.payments.values()]
    if (made === undefined) throw new Error('Adyen made no payment')
    t.equal((await adyenNotification(s, { eventCode: 'AUTHORISATION', merchantReference: made.merchantReference, pspReference: made.pspReference, amount: made.amount })).body, '[accepted]')
    const answered = await waiting
    t.equal(answered.statusCode, 201, 'the settled outcome, not a 503')
    t.match(answered.json(), { status: 'succeeded', connector: { id: s.adyenId }, connectorReference: made.pspReference })
    t.notOk(s.lines.some((line) => line.includes('could not be recorded')), 'no error about the unknown attempt')
    await s.adyen.stopListening()
    const replayed = await pay(s, 'k-adyen-race')
    t.equal(replayed.statusCode, 201, 'the key was finished: answered without asking Adyen')
    t.equal(replayed.headers['idempotent-replayed'], 'true')
    t.equal(adyenCharges(s), 1)
    t.equal(stripeCharges(s), 0)
  })
}

// Each case has its own fake PSPs, app and database, and most of its time is spent waiting for time-outs: three at once.
const CASES_AT_ONCE = 3
t.test('SQLite', { jobs: CASES_AT_ONCE }, async (t) => { cases(t, sqlite) })
t.test('PostgreSQL', { jobs: CASES_AT_ONCE }, async (t) => {
  if (!await ensurePostgres(t)) return
  cases(t, postgres)
})
