/**
 * Customer-present payments through a Stripe account (issue 37), against the local stand-in speaking Stripe's wire
 * format: confirmed with return_url (never off_session), requires_action with next_action.redirect_to_url, settled by
 * the return (a retrieve) or by Stripe's signed events, whichever comes first; cancel and abandonment cancel the
 * PaymentIntent. The exact requests sent are asserted.
 */
import t, { type Test } from 'tap'
import Stripe from 'stripe'
import { buildTestApp, merchantWithKey, ADMIN_AUTH, type MerchantCredentials } from '../../helpers/app'
import { FakeStripe } from '../../helpers/fake-stripe'
import { manualClock } from '../../helpers/payments'
import { ensurePostgres, freshSchema } from '../../helpers/postgres'
import type { App } from '../../../app/app'

const SECRET_KEY = 'sk_test_51Hx00threeDSecure0004242'
const WEBHOOK_SECRET = 'whsec_0123456789abcdef3DSECURE'
const BASE = 'https://pay.example.com'
const RETURN = 'https://shop.example.com/done?order=A-7'

interface Setup { app: App, fake: FakeStripe, merchant: MerchantCredentials, events: string, clock: ReturnType<typeof manualClock> }

type Backend = (t: Test) => Promise<Record<string, string>>
const sqlite: Backend = async () => ({})
const postgres: Backend = async (t) => ({ DATABASE_URL: (await freshSchema(t)).url })

async function setup (t: Test, backend: Backend, env: Record<string, string> = {}): Promise<Setup> {
  const database = await backend(t)
  const fake = await FakeStripe.start()
  t.teardown(async () => { await fake.close() })
  fake.keys.add(SECRET_KEY)
  const clock = manualClock(Date.now())
  const app = await buildTestApp(t, { STRIPE_API_URL: fake.url, PUBLIC_BASE_URL: BASE, ...database, ...env }, { clock: clock.read })
  const merchant = await merchantWithKey(app)
  const created = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: ADMIN_AUTH, payload: { type: 'stripe', credentials: { secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET } } })
  t.equal(created.statusCode, 201)
  return { app, fake, merchant, events: `/connectors/${String(created.json().id)}/stripe-events`, clock }
}

/** A customer-present payment with Stripe's 3-D Secure test card: 201 requires_action, nextAction to Stripe's page. */
async function waiting (t: Test, s: Setup, body: Record<string, unknown> = {}): Promise<{ id: string, intentId: string, returnAddress: string }> {
  const res = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 25, currency: 'EUR', paymentMethod: 'pm_card_authenticationRequired', returnUrl: RETURN, ...body } })
  t.equal(res.statusCode, 201, res.body)
  const payment = res.json()
  t.match(payment, { status: 'requires_action', connector: { type: 'stripe' }, connectorReference: /^pi_/, nextAction: { type: 'redirect', method: 'GET', url: `${s.fake.url}/3ds2/${String(payment.connectorReference)}` } })
  const create = s.fake.requests.filter((request) => request.method === 'POST' && request.path === '/v1/payment_intents').at(-1)
  t.equal(create?.headers['idempotency-key'], `payment-${String(payment.id)}`, 'under the key derived from the payment')
  const sent = create?.body as Record<string, unknown>
  t.match(sent, { amount: '2500', currency: 'eur', payment_method: 'pm_card_authenticationRequired', confirm: 'true', capture_method: body.captureMethod ?? 'automatic', metadata: { payment_id: payment.id } })
  t.match(sent.return_url, new RegExp(`^${BASE}/checkout/return/[A-Za-z0-9_-]{43}$`), 'Stripe returns the shopper to the service')
  t.notOk('off_session' in sent, 'never off_session')
  return { id: payment.id, intentId: payment.connectorReference, returnAddress: String(sent.return_url) }
}

async function shopperReturns (t: Test, s: Setup, returnAddress: string): Promise<URL> {
  const url = new URL(returnAddress)
  // What Stripe appends; never trusted.
  const res = await s.app.inject({ method: 'GET', url: `${url.pathname}?payment_intent=pi_forged&redirect_status=succeeded` })
  t.equal(res.statusCode, 303)
  return new URL(String(res.headers.location))
}

async function deliver (t: Test, s: Setup, type: string, object: unknown) {
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

const retrievals = (s: Setup, intentId: string) => s.fake.requests.filter((request) => request.method === 'GET' && request.path === `/v1/payment_intents/${intentId}`).length

function cases (t: Test, backend: Backend): void {
  t.test('authenticated, return before webhook: the return retrieves the PaymentIntent → succeeded; the late webhook and a second return change nothing', async (t) => {
    const s = await setup(t, backend)
    const { id, intentId, returnAddress } = await waiting(t, s)
    const early = await shopperReturns(t, s, returnAddress)
    t.equal(early.searchParams.get('status'), 'requires_action', 'Stripe still waits: nothing is taken from the query')
    const intent = s.fake.authenticate(intentId, true)
    const back = await shopperReturns(t, s, returnAddress)
    t.equal(back.searchParams.get('status'), 'succeeded')
    t.equal(back.searchParams.get('paymentId'), id)
    t.equal(back.searchParams.get('order'), 'A-7')
    t.equal(retrievals(s, intentId), 2, 'each return asked Stripe')
    await deliver(t, s, 'payment_intent.succeeded', intent)
    t.equal((await shopperReturns(t, s, returnAddress)).searchParams.get('status'), 'succeeded', 'a second return only redirects')
    t.equal(retrievals(s, intentId), 2, 'a settled payment is not asked about again')
    const settled = await paymentOf(s, id)
    t.match(settled, { status: 'succeeded', amountCaptured: 25 })
    t.same(settled.paymentMethodDetails, { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2034, country: 'US' } }, 'the card, from the retrieve with its charge expanded')
    t.same(await eventTypes(s, id), ['payment.requires_action', 'payment.succeeded'], 'settled once')
  })

  t.test('manual, captured in part in Stripe\'s Dashboard before the shopper returns: the return records what Stripe took', async (t) => {
    const s = await setup(t, backend)
    const { id, intentId, returnAddress } = await waiting(t, s, { captureMethod: 'manual' })
    const intent = s.fake.authenticate(intentId, true)
    Object.assign(intent, { status: 'succeeded', amount_received: 1000, amount_capturable: 0 })
    t.equal((await shopperReturns(t, s, returnAddress)).searchParams.get('status'), 'succeeded')
    t.match(await paymentOf(s, id), { status: 'succeeded', amount: 25, amountCaptured: 10, amountCapturable: 0 })
  })

  t.test('webhook before return: payment_intent.succeeded settles it, with the card read from the PaymentIntent\'s charge; the return only redirects', async (t) => {
    const s = await setup(t, backend)
    const { id, intentId, returnAddress } = await waiting(t, s)
    const before = s.fake.requests.length
    const intent = s.fake.authenticate(intentId, true)
    t.type(intent.latest_charge, 'string', 'an event\'s PaymentIntent names its charge by id')
    await deliver(t, s, 'payment_intent.succeeded', intent)
    t.same(s.fake.requests.slice(before).map((request) => ({ method: request.method, path: request.path, query: request.query })),
      [{ method: 'GET', path: `/v1/payment_intents/${intentId}`, query: { 'expand[0]': 'latest_charge' } }], 'one read of the PaymentIntent with its charge expanded, no write')
    const settled = await paymentOf(s, id)
    t.equal(settled.status, 'succeeded')
    t.same(settled.paymentMethodDetails, { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2034, country: 'US' } }, 'only the members a payment keeps')
    await deliver(t, s, 'charge.succeeded', { id: intent.latest_charge, object: 'charge', payment_intent: intentId, payment_method_details: { type: 'card', card: { brand: 'mastercard', last4: '4444' } } })
    await deliver(t, s, 'payment_intent.succeeded', intent)
    t.equal((await shopperReturns(t, s, returnAddress)).searchParams.get('status'), 'succeeded')
    t.equal(s.fake.requests.length, before + 1, 'a settled payment is not read again (events and return alike)')
    t.same((await paymentOf(s, id)).paymentMethodDetails, settled.paymentMethodDetails, 'unchanged by later events')
    t.same(await eventTypes(s, id), ['payment.requires_action', 'payment.succeeded'])
  })

  t.test('manual capture: amount_capturable_updated → requires_capture with the card; Stripe not answering the read settles it without', async (t) => {
    const s = await setup(t, backend)
    const manual = await waiting(t, s, { captureMethod: 'manual' })
    await deliver(t, s, 'payment_intent.amount_capturable_updated', s.fake.authenticate(manual.intentId, true))
    t.match(await paymentOf(s, manual.id), { status: 'requires_capture', paymentMethodDetails: { type: 'card', card: { brand: 'visa', last4: '4242' } } })
    t.equal(retrievals(s, manual.intentId), 1)

    const unread = await waiting(t, s)
    s.fake.failNext('status500')
    await deliver(t, s, 'payment_intent.succeeded', s.fake.authenticate(unread.intentId, true))
    const settled = await paymentOf(s, unread.id)
    t.equal(settled.status, 'succeeded', 'the money rule first: the event settles the payment')
    t.notOk('paymentMethodDetails' in settled, 'no details rather than invented ones')
    t.equal(retrievals(s, unread.intentId), 1, 'asked once')
    t.notOk(s.fake.requests.some((request) => request.method === 'POST' && request.path !== '/v1/payment_intents'), 'nothing written at Stripe')
  })

  t.test('unknown outcome (the answer to the creation lost), settled only by payment_intent.succeeded: the card read with the charge expanded', async (t) => {
    const s = await setup(t, backend)
    s.fake.failNext('dropAfterWork')
    const res = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 25, currency: 'EUR', paymentMethod: 'pm_card_visa' } })
    t.equal(res.statusCode, 503)
    const id = res.json().paymentId as string
    t.equal((await paymentOf(s, id)).status, 'pending')
    const [intent] = s.fake.intentsOf(id)
    if (intent === undefined) throw new Error('Stripe made no PaymentIntent')
    const before = s.fake.requests.length
    await deliver(t, s, 'payment_intent.succeeded', intent)
    t.same(s.fake.requests.slice(before).map((request) => ({ method: request.method, path: request.path, query: request.query })),
      [{ method: 'GET', path: `/v1/payment_intents/${intent.id}`, query: { 'expand[0]': 'latest_charge' } }])
    t.match(await paymentOf(s, id), { status: 'succeeded', connectorReference: intent.id, paymentMethodDetails: { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2034, country: 'US' } } })
    t.same(await eventTypes(s, id), ['payment.pending', 'payment.succeeded'])
  })

  t.test('failed authentication → declined authentication_failed (return or payment_intent.payment_failed); manual → requires_capture by amount_capturable_updated', async (t) => {
    const s = await setup(t, backend)
    const failed = await waiting(t, s)
    const intent = s.fake.authenticate(failed.intentId, false)
    t.equal((await shopperReturns(t, s, failed.returnAddress)).searchParams.get('status'), 'declined')
    t.match(await paymentOf(s, failed.id), { status: 'declined', declineCode: 'authentication_failed' })
    await deliver(t, s, 'payment_intent.payment_failed', intent)
    t.same(await eventTypes(s, failed.id), ['payment.requires_action', 'payment.declined'])

    const byWebhook = await waiting(t, s)
    await deliver(t, s, 'payment_intent.payment_failed', s.fake.authenticate(byWebhook.intentId, false))
    t.match(await paymentOf(s, byWebhook.id), { status: 'declined', declineCode: 'authentication_failed' })

    const manual = await waiting(t, s, { captureMethod: 'manual' })
    await deliver(t, s, 'payment_intent.amount_capturable_updated', s.fake.authenticate(manual.intentId, true))
    t.match(await paymentOf(s, manual.id), { status: 'requires_capture', amountCapturable: 25 })
    t.equal((await shopperReturns(t, s, manual.returnAddress)).searchParams.get('status'), 'requires_capture')
  })

  t.test('cancel while waiting: the PaymentIntent is canceled under a derived key → canceled requested', async (t) => {
    const s = await setup(t, backend)
    const { id, intentId, returnAddress } = await waiting(t, s)
    const res = await s.app.inject({ method: 'POST', url: `/api/payments/${id}/cancel`, headers: s.merchant.auth })
    t.equal(res.statusCode, 200)
    t.match(res.json(), { status: 'canceled', cancellationReason: 'requested' })
    const cancel = s.fake.requests.find((request) => request.path === `/v1/payment_intents/${intentId}/cancel`)
    t.equal(cancel?.headers['idempotency-key'], `payment-${id}:void`)
    t.equal((await shopperReturns(t, s, returnAddress)).searchParams.get('status'), 'canceled')
  })

  t.test('abandoned: after ACTION_TTL_SECONDS the recovery worker cancels the PaymentIntent → canceled abandoned; one authenticated meanwhile succeeds', async (t) => {
    const s = await setup(t, backend, { ACTION_TTL_SECONDS: '900' })
    const abandoned = await waiting(t, s)
    const late = await waiting(t, s)
    s.clock.now += 901_000
    s.fake.authenticate(late.intentId, true)
    t.same(await s.app.backgroundJobs.recoverActions(), { settled: 1, abandoned: 1, waiting: 0 })
    t.match(await paymentOf(s, abandoned.id), { status: 'canceled', cancellationReason: 'abandoned' })
    t.ok(s.fake.requests.some((request) => request.path === `/v1/payment_intents/${abandoned.intentId}/cancel`), 'canceled at Stripe')
    t.equal((await paymentOf(s, late.id)).status, 'succeeded', 'success at Stripe wins')
    t.notOk(s.fake.requests.some((request) => request.path === `/v1/payment_intents/${late.intentId}/cancel`))
  })

  t.test('abandoned, captured in part in Stripe\'s Dashboard meanwhile, Stripe not answering the read: the cancel finds what Stripe took', async (t) => {
    const s = await setup(t, backend, { ACTION_TTL_SECONDS: '900' })
    const { id, intentId } = await waiting(t, s, { captureMethod: 'manual' })
    const intent = s.fake.authenticate(intentId, true)
    Object.assign(intent, { status: 'succeeded', amount_received: 1000, amount_capturable: 0 })
    s.clock.now += 901_000
    s.fake.failNext('status500')
    t.same(await s.app.backgroundJobs.recoverActions(), { settled: 1, abandoned: 0, waiting: 0 })
    t.match(await paymentOf(s, id), { status: 'succeeded', amount: 25, amountCaptured: 10, amountCapturable: 0 })
  })

  t.test('off-session (no returnUrl) stays as it was: off_session, a 402 authentication_required', async (t) => {
    const s = await setup(t, backend)
    const res = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 25, currency: 'EUR', paymentMethod: 'pm_card_authenticationRequired' } })
    t.equal(res.statusCode, 402)
    t.match(res.json(), { declineCode: 'authentication_required' })
    const create = s.fake.requests.filter((request) => request.path === '/v1/payment_intents').at(-1)
    t.match(create?.body, { off_session: 'true' })
    t.notOk('return_url' in (create?.body as Record<string, unknown>))
  })
}

t.test('SQLite', async (t) => { cases(t, sqlite) })
t.test('PostgreSQL', async (t) => {
  if (!await ensurePostgres(t)) return
  cases(t, postgres)
})
