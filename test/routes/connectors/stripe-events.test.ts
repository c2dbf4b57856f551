import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import Stripe from 'stripe'
import { buildTestApp, merchantWithKey, ADMIN_AUTH, type MerchantCredentials } from '../../helpers/app'
import { FakeStripe } from '../../helpers/fake-stripe'
import type { App } from '../../../app/app'
import { newId } from '../../../src/domain/ids'

const SECRET_KEY = 'sk_test_51Hx00webhookPART0004242'
const WEBHOOK_SECRET = 'whsec_0123456789abcdefWEBHOOK'
const NO_KEY = { authorization: undefined }

interface Setup {
  app: App
  fake: FakeStripe
  merchant: MerchantCredentials
  connectorId: string
  url: string
  lines: string[]
}

async function setup (t: Test, credentials: Record<string, string> = { secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET }): Promise<Setup> {
  const fake = await FakeStripe.start()
  t.teardown(async () => { await fake.close() })
  fake.keys.add(SECRET_KEY)
  const lines: string[] = []
  const logger = { level: 'info', stream: new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } }) }
  const app = await buildTestApp(t, { STRIPE_API_URL: fake.url }, { logger })
  const merchant = await merchantWithKey(app)
  const created = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: ADMIN_AUTH, payload: { type: 'stripe', credentials } })
  t.equal(created.statusCode, 201)
  const connectorId = created.json().id as string
  return { app, fake, merchant, connectorId, url: `/connectors/${connectorId}/stripe-events`, lines }
}

function event (type: string, object: Record<string, unknown>, id = `evt_${Math.random().toString(36).slice(2, 12)}`) {
  return { id, object: 'event', api_version: '2026-10-28.endive', created: Math.floor(Date.now() / 1000), type, livemode: false, data: { object } }
}

function intent (fields: Record<string, unknown>) {
  return { id: `pi_${Math.random().toString(36).slice(2, 14)}`, object: 'payment_intent', amount: 1000, currency: 'usd', status: 'succeeded', capture_method: 'automatic', last_payment_error: null, metadata: {}, ...fields }
}

/** POSTs `body` as Stripe does: raw JSON, signed with `secret` at `timestamp` (seconds). */
async function deliver (app: App, url: string, body: unknown, options: { secret?: string, timestamp?: number, signature?: string | null } = {}) {
  const payload = JSON.stringify(body)
  const signature = options.signature !== undefined
    ? options.signature
    : Stripe.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? WEBHOOK_SECRET, ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }) })
  return await app.inject({
    method: 'POST',
    url,
    headers: { ...NO_KEY, 'content-type': 'application/json; charset=utf-8', ...(signature === null ? {} : { 'stripe-signature': signature }) },
    payload
  })
}

/** A payment left pending on the connector: Stripe answered 500, so its outcome is unknown. */
async function pendingPayment (s: Setup, fields: Record<string, unknown> = {}): Promise<string> {
  s.fake.failNext('status500')
  const res = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa', ...fields } })
  t.equal(res.statusCode, 503)
  return res.json().paymentId as string
}

async function paymentOf (s: Setup, id: string) {
  return (await s.app.inject({ method: 'GET', url: `/api/payments/${id}`, headers: s.merchant.auth })).json()
}

async function eventTypes (s: Setup, paymentOrRefundId: string): Promise<string[]> {
  const page = await s.app.db.events.list({ merchantId: s.merchant.merchantId, limit: 100 })
  return page.data.filter((e) => e.resourceId === paymentOrRefundId).map((e) => e.type).reverse()
}

t.test('no API key: the route is public, its Stripe-Signature is the authentication', async (t) => {
  const s = await setup(t)
  t.equal(s.app.routeAccess().find((route) => route.url === '/connectors/:connectorId/stripe-events')?.auth, 'public')
  const res = await deliver(s.app, s.url, event('customer.created', { id: 'cus_1', object: 'customer' }, 'evt_public'))
  t.equal(res.statusCode, 200)
  t.same(res.json(), { received: true })
  t.match(await s.app.db.connectorEvents.get(s.connectorId, 'evt_public'), { type: 'customer.created', processedAt: String }, 'other events are recorded (and ignored)')
})

t.test('unverified deliveries are 400 problems and record nothing', async (t) => {
  const s = await setup(t)
  const paymentId = await pendingPayment(s)
  const body = event('payment_intent.succeeded', intent({ metadata: { payment_id: paymentId } }), 'evt_forged')
  const cases: Array<[string, Awaited<ReturnType<typeof deliver>>]> = [
    ['no signature', await deliver(s.app, s.url, body, { signature: null })],
    ['a malformed signature', await deliver(s.app, s.url, body, { signature: 'v1=abc' })],
    ['signed with another secret', await deliver(s.app, s.url, body, { secret: 'whsec_someoneELSEsecret00' })],
    ['older than the 5-minute tolerance', await deliver(s.app, s.url, body, { timestamp: Math.floor(Date.now() / 1000) - 301 })],
    ['an unknown connector', await deliver(s.app, '/connectors/019ab0c2-5d1e-7f20-8a31-b4c5d6e7f809/stripe-events', body)],
    ['a connector id that is no id', await deliver(s.app, '/connectors/nope/stripe-events', body)]
  ]
  for (const [name, res] of cases) {
    t.equal(res.statusCode, 400, name)
    t.match(res.json(), { type: 'urn:problem-type:connector-event-unverified', status: 400 }, name)
    t.notOk(res.body.includes(WEBHOOK_SECRET), `${name}: the secret is never quoted`)
  }
  // The body is signed as sent: one changed byte fails.
  const payload = JSON.stringify(body)
  const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET })
  const tampered = await s.app.inject({ method: 'POST', url: s.url, headers: { ...NO_KEY, 'content-type': 'application/json', 'stripe-signature': header }, payload: payload.replace('1000', '1001') })
  t.equal(tampered.statusCode, 400, 'a tampered body')
  t.equal(await s.app.db.connectorEvents.get(s.connectorId, 'evt_forged'), undefined, 'nothing recorded')
  t.equal((await paymentOf(s, paymentId)).status, 'pending', 'nothing changed')
  t.ok(s.lines.join('').includes('Stripe event refused'), 'the refusal is logged')
  t.notOk(s.lines.join('').includes(WEBHOOK_SECRET), 'the secret is in no log line')
})

t.test('accounts without a signing secret, and simulated accounts, refuse every event', async (t) => {
  const s = await setup(t, { secretKey: SECRET_KEY })
  const body = event('customer.created', { id: 'cus_1', object: 'customer' })
  t.equal((await deliver(s.app, s.url, body)).statusCode, 400, 'no webhookSecret')
  const simulated = await s.app.inject({ method: 'POST', url: `/merchants/${s.merchant.merchantId}/connectors`, headers: ADMIN_AUTH, payload: { type: 'simulated' } })
  t.equal((await deliver(s.app, `/connectors/${String(simulated.json().id)}/stripe-events`, body)).statusCode, 400, 'a simulated account')
  const notJson = await s.app.inject({ method: 'POST', url: s.url, headers: { ...NO_KEY, 'content-type': 'text/plain' }, payload: 'hello' })
  t.equal(notJson.statusCode, 415)
})

t.test('payment_intent.succeeded settles a payment pending on this connector (found by metadata), once', async (t) => {
  const s = await setup(t)
  const paymentId = await pendingPayment(s)
  t.match(await paymentOf(s, paymentId), { status: 'pending', connector: { id: s.connectorId, type: 'stripe' } })
  const body = event('payment_intent.succeeded', intent({ metadata: { payment_id: paymentId } }), 'evt_paid')
  const res = await deliver(s.app, s.url, body)
  t.equal(res.statusCode, 200)
  const settled = await paymentOf(s, paymentId)
  t.match(settled, { status: 'succeeded', connectorReference: body.data.object.id, connector: { id: s.connectorId, type: 'stripe' } })
  t.match(settled.attempts.at(-1), { connectorId: s.connectorId, connectorType: 'stripe', outcome: 'succeeded' }, 'the outcome is an attempt')
  t.same(await eventTypes(s, paymentId), ['payment.pending', 'payment.succeeded'], 'payment.succeeded written with the change')
  t.match(await s.app.db.connectorEvents.get(s.connectorId, 'evt_paid'), { type: 'payment_intent.succeeded', processedAt: String })

  const again = await deliver(s.app, s.url, body)
  t.equal(again.statusCode, 200, 'a redelivery is acknowledged')
  t.same(await eventTypes(s, paymentId), ['payment.pending', 'payment.succeeded'], 'and does nothing again')

  const retry = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' } })
  t.equal(retry.statusCode, 201, 'other payments are unaffected')
})

t.test('an event recorded but not processed (a crash in between) is processed when it comes again', async (t) => {
  const s = await setup(t)
  const paymentId = await pendingPayment(s)
  await s.app.db.connectorEvents.record({ connectorId: s.connectorId, eventId: 'evt_crash', type: 'payment_intent.succeeded', receivedAt: new Date().toISOString() })
  const res = await deliver(s.app, s.url, event('payment_intent.succeeded', intent({ metadata: { payment_id: paymentId } }), 'evt_crash'))
  t.equal(res.statusCode, 200)
  t.equal((await paymentOf(s, paymentId)).status, 'succeeded')
  t.match(await s.app.db.connectorEvents.get(s.connectorId, 'evt_crash'), { processedAt: String })
})

t.test('payment_failed declines with the decline code; amount_capturable_updated authorizes; canceled is declined payment_voided', async (t) => {
  const s = await setup(t)
  const declined = await pendingPayment(s)
  const failure = { code: 'card_declined', decline_code: 'insufficient_funds', type: 'card_error' }
  t.equal((await deliver(s.app, s.url, event('payment_intent.payment_failed', intent({ status: 'requires_payment_method', last_payment_error: failure, metadata: { payment_id: declined } })))).statusCode, 200)
  t.match(await paymentOf(s, declined), { status: 'declined', declineCode: 'insufficient_funds' })
  t.same(await eventTypes(s, declined), ['payment.pending', 'payment.declined'])

  const codeOnly = await pendingPayment(s)
  await deliver(s.app, s.url, event('payment_intent.payment_failed', intent({ status: 'requires_payment_method', last_payment_error: { code: 'expired_card' }, metadata: { payment_id: codeOnly } })))
  t.match(await paymentOf(s, codeOnly), { status: 'declined', declineCode: 'expired_card' }, 'the code when there is no decline_code')

  const manual = await pendingPayment(s, { captureMethod: 'manual' })
  await deliver(s.app, s.url, event('payment_intent.amount_capturable_updated', intent({ status: 'requires_capture', capture_method: 'manual', amount_capturable: 1000, metadata: { payment_id: manual } })))
  t.match(await paymentOf(s, manual), { status: 'requires_capture' })

  const canceled = await pendingPayment(s)
  await deliver(s.app, s.url, event('payment_intent.canceled', intent({ status: 'canceled', metadata: { payment_id: canceled } })))
  t.match(await paymentOf(s, canceled), { status: 'declined', declineCode: 'payment_voided' }, 'as the connector answers a resumed charge')

  const still = await pendingPayment(s)
  await deliver(s.app, s.url, event('payment_intent.succeeded', intent({ status: 'processing', metadata: { payment_id: still } })))
  t.equal((await paymentOf(s, still)).status, 'pending', 'a PaymentIntent that is still processing settles nothing')
})

t.test('only a pending payment of this connector, with the same amount, moves', async (t) => {
  const s = await setup(t)
  const paymentId = await pendingPayment(s)
  const other = await s.app.inject({ method: 'POST', url: `/merchants/${s.merchant.merchantId}/connectors`, headers: ADMIN_AUTH, payload: { type: 'stripe', credentials: { secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET } } })
  const otherUrl = `/connectors/${String(other.json().id)}/stripe-events`
  t.equal((await deliver(s.app, otherUrl, event('payment_intent.succeeded', intent({ metadata: { payment_id: paymentId } })))).statusCode, 200)
  t.equal((await paymentOf(s, paymentId)).status, 'pending', 'another connector\'s event does not touch it')

  await deliver(s.app, s.url, event('payment_intent.succeeded', intent({ amount: 999, metadata: { payment_id: paymentId } })))
  t.equal((await paymentOf(s, paymentId)).status, 'pending', 'a different amount is not settled')
  t.ok(s.lines.some((line) => line.includes('"level":50') && line.includes(paymentId)), 'it is logged as an error for follow-up')

  await deliver(s.app, s.url, event('payment_intent.succeeded', intent({ metadata: { payment_id: 'not-ours' } })))
  await deliver(s.app, s.url, event('payment_intent.succeeded', intent({ id: 'pi_unknown' })))
  t.equal((await paymentOf(s, paymentId)).status, 'pending', 'events naming no payment of ours are ignored')

  await deliver(s.app, s.url, event('payment_intent.payment_failed', intent({ status: 'requires_payment_method', last_payment_error: { code: 'card_declined' }, metadata: { payment_id: paymentId } })))
  await deliver(s.app, s.url, event('payment_intent.succeeded', intent({ metadata: { payment_id: paymentId } })))
  t.match(await paymentOf(s, paymentId), { status: 'declined' }, 'the first outcome stands: a settled payment does not move again')
})

t.test('a pending payment is found by the connector reference it recorded, without metadata', async (t) => {
  const s = await setup(t)
  const template = await s.app.payments.get(await pendingPayment(s))
  // A PaymentIntent an earlier answer named (e.g. one still processing then), then settled by Stripe.
  const recorded = { ...template, id: newId(), connectorReference: 'pi_recorded01' }
  await s.app.db.payments.create(recorded)
  await deliver(s.app, s.url, event('payment_intent.succeeded', intent({ id: 'pi_recorded01' })))
  t.match(await paymentOf(s, recorded.id), { status: 'succeeded', connectorReference: 'pi_recorded01' })
})

/** A succeeded payment with a refund left pending at Stripe. */
async function pendingRefund (s: Setup): Promise<{ paymentId: string, refundId: string }> {
  const paid = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' } })
  t.equal(paid.statusCode, 201)
  const paymentId = paid.json().id as string
  s.fake.failNext('refundPending')
  const refunded = await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/refunds`, headers: s.merchant.auth, payload: { amount: 4 } })
  t.equal(refunded.statusCode, 503, 'Stripe\'s refund is pending: so is ours')
  const refundId = refunded.json().refundId as string
  const stripeRefund = [...s.fake.refunds.values()].at(-1)
  t.same(stripeRefund?.metadata, { refund_id: refundId, payment_id: paymentId }, 'Stripe\'s refund names ours')
  return { paymentId, refundId }
}

function refundObject (ids: { paymentId: string, refundId: string }, fields: Record<string, unknown>) {
  return { id: 're_webhook0001', object: 'refund', amount: 400, currency: 'usd', payment_intent: 'pi_x', status: 'succeeded', failure_reason: null, metadata: { refund_id: ids.refundId, payment_id: ids.paymentId }, ...fields }
}

t.test('refund.failed fails a pending refund and releases its hold; refund.updated succeeds one', async (t) => {
  const s = await setup(t)
  const first = await pendingRefund(s)
  t.equal((await s.app.db.payments.get(first.paymentId))?.refundPendingMinor, 400, 'the refund holds its amount')
  t.equal((await deliver(s.app, s.url, event('refund.failed', refundObject(first, { status: 'failed', failure_reason: 'expired_or_canceled_card' })))).statusCode, 200)
  const refund = (await s.app.inject({ method: 'GET', url: `/api/payments/${first.paymentId}/refunds/${first.refundId}`, headers: s.merchant.auth })).json()
  t.match(refund, { status: 'failed', failureCode: 'expired_or_canceled_card' })
  t.match(await paymentOf(s, first.paymentId), { status: 'succeeded', amountRefunded: 0 })
  t.equal((await s.app.db.payments.get(first.paymentId))?.refundPendingMinor, 0, 'the hold is released')
  t.same(await eventTypes(s, first.refundId), ['refund.failed'])

  const second = await pendingRefund(s)
  await deliver(s.app, s.url, event('charge.refund.updated', refundObject(second, { status: 'pending' })))
  t.match((await s.app.db.refunds.get(second.paymentId, second.refundId))?.status, 'pending', 'still pending at Stripe: nothing settles')
  await deliver(s.app, s.url, event('refund.updated', refundObject(second, { status: 'succeeded' })))
  t.match(await s.app.db.refunds.get(second.paymentId, second.refundId), { status: 'succeeded' })
  t.match(await paymentOf(s, second.paymentId), { status: 'partially_refunded', amountRefunded: 4 })
})

t.test('a refund Stripe reports failed after we recorded it succeeded is logged for follow-up and left unchanged', async (t) => {
  const s = await setup(t)
  const paid = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' } })
  const paymentId = paid.json().id as string
  const refunded = await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/refunds`, headers: s.merchant.auth, payload: { amount: 4 } })
  t.equal(refunded.statusCode, 201)
  const refundId = refunded.json().id as string
  const res = await deliver(s.app, s.url, event('refund.failed', refundObject({ paymentId, refundId }, { status: 'failed', failure_reason: 'lost_or_stolen_card' }), 'evt_late_failure'))
  t.equal(res.statusCode, 200, 'acknowledged, so Stripe does not retry what a person must resolve')
  t.match(await s.app.db.refunds.get(paymentId, refundId), { status: 'succeeded' }, 'succeeded is terminal: unchanged')
  t.match(await paymentOf(s, paymentId), { status: 'partially_refunded', amountRefunded: 4 })
  const logged = s.lines.find((line) => line.includes('"level":50') && line.includes(refundId))
  t.ok(logged, 'an error names the refund')
  t.match(logged, /evt_late_failure/)
  t.match(logged, new RegExp(paymentId))
  t.match(await s.app.db.connectorEvents.get(s.connectorId, 'evt_late_failure'), { processedAt: String }, 'the event is recorded')

  await deliver(s.app, s.url, event('refund.updated', refundObject({ paymentId, refundId }, { status: 'succeeded' })))
  t.match(await s.app.db.refunds.get(paymentId, refundId), { status: 'succeeded' }, 'the same outcome again changes nothing')
  await deliver(s.app, s.url, event('refund.failed', refundObject({ paymentId: 'x', refundId: 'y' }, { status: 'failed' })))
  await deliver(s.app, s.url, event('refund.failed', { id: 're_old', object: 'refund', status: 'failed', metadata: {} }))
  t.pass('refunds that are not ours (or carry no ids) are ignored')
})
