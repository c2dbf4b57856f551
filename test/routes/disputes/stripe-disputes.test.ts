import t, { type Test } from 'tap'
import Stripe from 'stripe'
import { buildTestApp, merchantWithKey, ADMIN_AUTH, type MerchantCredentials } from '../../helpers/app'
import { FakeStripe } from '../../helpers/fake-stripe'
import type { App } from '../../../app/app'

const SECRET_KEY = 'sk_test_51Hx00disputesPART0004242'
const WEBHOOK_SECRET = 'whsec_0123456789abcdefDISPUTES'
const NO_KEY = { authorization: undefined }

interface Setup {
  fake: FakeStripe
  app: App
  merchant: MerchantCredentials
  connectorId: string
  url: string
}

async function setup (t: Test): Promise<Setup> {
  const fake = await FakeStripe.start()
  t.teardown(async () => { await fake.close() })
  fake.keys.add(SECRET_KEY)
  const app = await buildTestApp(t, { STRIPE_API_URL: fake.url })
  const merchant = await merchantWithKey(app)
  const created = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: ADMIN_AUTH, payload: { type: 'stripe', credentials: { secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET } } })
  t.equal(created.statusCode, 201)
  const connectorId = created.json().id as string
  return { fake, app, merchant, connectorId, url: `/connectors/${connectorId}/stripe-events` }
}

let eventCounter = 0
function event (type: string, object: Record<string, unknown>, id = `evt_dispute_${++eventCounter}`) {
  return { id, object: 'event', api_version: '2026-10-28.endive', created: Math.floor(Date.now() / 1000), type, livemode: false, data: { object } }
}

/** A Stripe Dispute object (its documented members), for the charge of PaymentIntent `pi`. */
function dispute (pi: string, fields: Record<string, unknown> = {}) {
  return {
    id: 'dp_1TestDispute',
    object: 'dispute',
    amount: 1000,
    currency: 'usd',
    charge: 'ch_1Test',
    payment_intent: pi,
    reason: 'fraudulent',
    status: 'needs_response',
    is_charge_refundable: false,
    balance_transactions: [],
    evidence_details: { due_by: 1767225599, has_evidence: false, past_due: false, submission_count: 0 },
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    metadata: {},
    ...fields
  }
}

const withdrawal = { id: 'txn_w', object: 'balance_transaction', amount: -1000, currency: 'usd', type: 'adjustment' }
const reinstatement = { id: 'txn_r', object: 'balance_transaction', amount: 1000, currency: 'usd', type: 'adjustment' }

async function deliver (s: Setup, body: unknown) {
  const payload = JSON.stringify(body)
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET })
  const res = await s.app.inject({ method: 'POST', url: s.url, headers: { ...NO_KEY, 'content-type': 'application/json', 'stripe-signature': signature }, payload })
  t.equal(res.statusCode, 200, 'the event is accepted')
  return res
}

async function succeededPayment (s: Setup, merchant = s.merchant): Promise<{ id: string, pi: string }> {
  const res = await s.app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' } })
  t.equal(res.statusCode, 201)
  t.equal(res.json().status, 'succeeded')
  return { id: res.json().id as string, pi: res.json().connectorReference as string }
}

async function get (s: Setup, url: string, merchant = s.merchant) {
  return await s.app.inject({ method: 'GET', url, headers: merchant.auth })
}

async function disputeEvents (s: Setup, disputeId: string): Promise<string[]> {
  const page = await s.app.db.events.list({ merchantId: s.merchant.merchantId, limit: 100 })
  return page.data.filter((e) => e.resourceId === disputeId).map((e) => e.type).reverse()
}

t.test('charge.dispute.* in order: the dispute, the payment\'s amount disputed, the events; GET /api/disputes and /api/disputes/{id}', async (t) => {
  const s = await setup(t)
  const payment = await succeededPayment(s)
  await deliver(s, event('charge.dispute.created', dispute(payment.pi)))
  const list = await get(s, '/api/disputes')
  t.equal(list.statusCode, 200)
  t.equal(list.json().data.length, 1)
  const created = list.json().data[0]
  t.match(created, {
    paymentId: payment.id,
    amount: 10,
    currency: 'USD',
    reason: 'fraudulent',
    status: 'needs_response',
    fundsWithdrawn: false,
    evidenceDueBy: '2025-12-31T23:59:59.000Z',
    connector: { id: s.connectorId, type: 'stripe' },
    connectorReference: 'dp_1TestDispute'
  })
  t.match((await get(s, `/api/payments/${payment.id}`)).json(), { amountDisputed: 0, amountCaptured: 10 })

  await deliver(s, event('charge.dispute.funds_withdrawn', dispute(payment.pi, { balance_transactions: [withdrawal] })))
  t.match((await get(s, `/api/disputes/${String(created.id)}`)).json(), { id: created.id, status: 'needs_response', fundsWithdrawn: true })
  t.match((await get(s, `/api/payments/${payment.id}`)).json(), { amountDisputed: 10 })

  const refused = await s.app.inject({ method: 'POST', url: `/api/payments/${payment.id}/refunds`, headers: s.merchant.auth, payload: { amount: 1 } })
  t.equal(refused.statusCode, 409, 'no refund while the dispute is open')
  t.match(refused.json(), { type: 'urn:problem-type:payment-disputed', paymentId: payment.id })

  await deliver(s, event('charge.dispute.updated', dispute(payment.pi, { status: 'under_review', balance_transactions: [withdrawal] })))
  await deliver(s, event('charge.dispute.closed', dispute(payment.pi, { status: 'won', balance_transactions: [withdrawal] })))
  await deliver(s, event('charge.dispute.funds_reinstated', dispute(payment.pi, { status: 'won', balance_transactions: [withdrawal, reinstatement] })))
  t.match((await get(s, `/api/disputes/${String(created.id)}`)).json(), { status: 'won', fundsWithdrawn: false })
  t.match((await get(s, `/api/payments/${payment.id}`)).json(), { amountDisputed: 0 })
  t.same(await disputeEvents(s, created.id), ['dispute.created', 'dispute.updated', 'dispute.updated', 'dispute.closed', 'dispute.updated'])
  const closed = (await s.app.db.events.list({ merchantId: s.merchant.merchantId, limit: 100, type: 'dispute.closed' })).data[0]
  t.match(closed?.data, { id: created.id, status: 'won' }, 'the event\'s data is the dispute')

  const refund = await s.app.inject({ method: 'POST', url: `/api/payments/${payment.id}/refunds`, headers: s.merchant.auth, payload: { amount: 1 } })
  t.equal(refund.statusCode, 201, 'a won dispute no longer blocks a refund')
})

t.test('the same events twice and in any order end in the same state, with one event per change', async (t) => {
  const s = await setup(t)
  const payment = await succeededPayment(s)
  const lost = event('charge.dispute.closed', dispute(payment.pi, { status: 'lost', balance_transactions: [withdrawal] }))
  const withdrawn = event('charge.dispute.funds_withdrawn', dispute(payment.pi, { balance_transactions: [withdrawal] }))
  const created = event('charge.dispute.created', dispute(payment.pi))
  const review = event('charge.dispute.updated', dispute(payment.pi, { status: 'under_review', balance_transactions: [withdrawal] }))
  for (const body of [lost, review, withdrawn, created, lost, created]) await deliver(s, body)
  const page = (await get(s, '/api/disputes')).json()
  t.equal(page.data.length, 1, 'one dispute')
  t.match(page.data[0], { status: 'lost', fundsWithdrawn: true, amount: 10 })
  t.match((await get(s, `/api/payments/${payment.id}`)).json(), { amountDisputed: 10, amountRefunded: 0 })
  t.same(await disputeEvents(s, page.data[0].id), ['dispute.created'], 'the first (closing) report created it; later ones were older')
  const refused = await s.app.inject({ method: 'POST', url: `/api/payments/${payment.id}/refunds`, headers: s.merchant.auth, payload: {} })
  t.equal(refused.statusCode, 409, 'a lost dispute: the money is gone, no refund')
})

t.test('filters, pages, tenancy: another merchant\'s dispute is 404; a dispute on no payment of ours is ignored', async (t) => {
  const s = await setup(t)
  const first = await succeededPayment(s)
  const second = await succeededPayment(s)
  await deliver(s, event('charge.dispute.created', dispute(first.pi, { id: 'dp_first' })))
  await deliver(s, event('charge.dispute.created', dispute(second.pi, { id: 'dp_second', status: 'warning_needs_response', reason: 'general' })))
  await deliver(s, event('charge.dispute.closed', dispute(first.pi, { id: 'dp_first', status: 'won' })))
  await deliver(s, event('charge.dispute.created', dispute('pi_not_ours', { id: 'dp_elsewhere' })))
  const all = (await get(s, '/api/disputes')).json()
  t.same(all.data.map((d: { connectorReference: string }) => d.connectorReference), ['dp_second', 'dp_first'], 'newest first')
  t.same((await get(s, '/api/disputes?status=won')).json().data.map((d: { connectorReference: string }) => d.connectorReference), ['dp_first'])
  t.same((await get(s, `/api/disputes?paymentId=${second.id.toUpperCase()}`)).json().data.map((d: { connectorReference: string }) => d.connectorReference), ['dp_second'])
  const page = (await get(s, '/api/disputes?limit=1')).json()
  t.equal(page.hasMore, true)
  t.same((await get(s, `/api/disputes?limit=1&startingAfter=${String(page.data[0].id)}`)).json().data.map((d: { connectorReference: string }) => d.connectorReference), ['dp_first'])
  t.equal((await get(s, '/api/disputes?status=open')).statusCode, 400)
  t.equal((await get(s, '/api/disputes?color=red')).statusCode, 400)

  const other = await merchantWithKey(s.app)
  t.equal((await get(s, `/api/disputes/${String(page.data[0].id)}`, other)).statusCode, 404, 'another merchant\'s dispute')
  t.same((await get(s, '/api/disputes', other)).json(), { data: [], hasMore: false })
  t.equal((await get(s, `/api/disputes?startingAfter=${String(page.data[0].id)}`, other)).statusCode, 400, 'another merchant\'s dispute is no cursor')
  t.equal((await get(s, '/api/disputes/not-a-guid')).statusCode, 404)
  t.equal((await get(s, '/api/disputes/019ab0c2-5d1e-7f20-8a31-b4c5d6e7f809')).statusCode, 404)
  t.equal((await s.app.inject({ method: 'GET', url: '/api/disputes', headers: ADMIN_AUTH })).statusCode, 403, 'the admin key acts for no merchant')
  t.equal((await s.app.inject({ method: 'GET', url: '/api/disputes', headers: NO_KEY })).statusCode, 401)
  t.equal((await s.app.inject({ method: 'DELETE', url: '/api/disputes', headers: s.merchant.auth })).statusCode, 405)
})

async function accept (s: Setup, id: string, key?: string, merchant = s.merchant) {
  return await s.app.inject({ method: 'POST', url: `/api/disputes/${id}/accept`, headers: { ...merchant.auth, ...(key === undefined ? {} : { 'idempotency-key': key }) } })
}

const closeRequests = (s: Setup) => s.fake.requests.filter((request) => request.method === 'POST' && request.path.endsWith('/close'))

t.test('accept: closes the dispute at Stripe under a key derived from it; accepted (dispute.closed once) whatever Stripe reports later', async (t) => {
  const s = await setup(t)
  const payment = await succeededPayment(s)
  await deliver(s, event('charge.dispute.created', dispute(payment.pi)))
  await deliver(s, event('charge.dispute.funds_withdrawn', dispute(payment.pi, { balance_transactions: [withdrawal] })))
  s.fake.disputes.set('dp_1TestDispute', dispute(payment.pi, { balance_transactions: [withdrawal] }))
  const id = (await get(s, '/api/disputes')).json().data[0].id as string

  const accepted = await accept(s, id, 'accept-1')
  t.equal(accepted.statusCode, 200, accepted.body)
  t.match(accepted.json(), { id, status: 'accepted', fundsWithdrawn: true, connectorReference: 'dp_1TestDispute' })
  t.match(closeRequests(s), [{ path: '/v1/disputes/dp_1TestDispute/close', headers: { 'idempotency-key': `dispute-${id}:accept` } }], 'one close, under the derived key')
  t.equal(s.fake.disputes.get('dp_1TestDispute')?.status, 'lost', 'Stripe records a closed dispute as lost')

  const replayed = await accept(s, id, 'accept-1')
  t.equal(replayed.headers['idempotent-replayed'], 'true')
  t.equal(replayed.body, accepted.body)
  const again = await accept(s, id)
  t.equal(again.statusCode, 200)
  t.equal(again.json().status, 'accepted')
  t.equal(closeRequests(s).length, 1, 'an accepted dispute answers again without asking Stripe')

  await deliver(s, event('charge.dispute.closed', dispute(payment.pi, { status: 'lost', balance_transactions: [withdrawal] })))
  t.match((await get(s, `/api/disputes/${id}`)).json(), { status: 'accepted', fundsWithdrawn: true }, 'Stripe\'s own `lost` does not turn it back')
  t.same(await disputeEvents(s, id), ['dispute.created', 'dispute.updated', 'dispute.closed'])
  const closed = (await s.app.db.events.list({ merchantId: s.merchant.merchantId, limit: 100, type: 'dispute.closed' })).data[0]
  t.match(closed?.data, { id, status: 'accepted' })
  t.match((await get(s, `/api/payments/${payment.id}`)).json(), { amountDisputed: 10 }, 'the money stays with the cardholder')
  const refund = await s.app.inject({ method: 'POST', url: `/api/payments/${payment.id}/refunds`, headers: s.merchant.auth, payload: { amount: 1 } })
  t.equal(refund.statusCode, 409, 'an accepted dispute is not won: no refund of the disputed money')
})

t.test('accept: a closed dispute, or one Stripe refuses, is 409 and unchanged; Stripe down is 503 and unchanged, then accepted; tenancy', async (t) => {
  const s = await setup(t)
  const won = await succeededPayment(s)
  await deliver(s, event('charge.dispute.created', dispute(won.pi, { id: 'dp_won' })))
  await deliver(s, event('charge.dispute.closed', dispute(won.pi, { id: 'dp_won', status: 'won' })))
  const wonId = (await get(s, `/api/disputes?paymentId=${won.id}`)).json().data[0].id as string
  const closedHere = await accept(s, wonId)
  t.equal(closedHere.statusCode, 409)
  t.match(closedHere.json(), { type: 'urn:problem-type:dispute-not-acceptable', disputeId: wonId, disputeStatus: 'won' })
  t.equal(closeRequests(s).length, 0, 'a dispute closed here is not asked of Stripe')

  const stale = await succeededPayment(s)
  await deliver(s, event('charge.dispute.created', dispute(stale.pi, { id: 'dp_stale' })))
  s.fake.disputes.set('dp_stale', dispute(stale.pi, { id: 'dp_stale', status: 'won' }))
  const staleId = (await get(s, `/api/disputes?paymentId=${stale.id}`)).json().data[0].id as string
  const refused = await accept(s, staleId)
  t.equal(refused.statusCode, 409)
  t.match(refused.json(), { type: 'urn:problem-type:dispute-not-acceptable', disputeStatus: 'needs_response', detail: /dispute_already_closed/ })
  t.equal((await get(s, `/api/disputes/${staleId}`)).json().status, 'needs_response', 'unchanged until Stripe tells its outcome')

  const open = await succeededPayment(s)
  await deliver(s, event('charge.dispute.created', dispute(open.pi, { id: 'dp_open' })))
  s.fake.disputes.set('dp_open', dispute(open.pi, { id: 'dp_open' }))
  const openId = (await get(s, `/api/disputes?paymentId=${open.id}`)).json().data[0].id as string
  t.equal((await accept(s, openId, undefined, await merchantWithKey(s.app))).statusCode, 404, 'another merchant\'s dispute')
  t.equal((await s.app.inject({ method: 'POST', url: `/api/disputes/${openId}/accept`, headers: ADMIN_AUTH })).statusCode, 403)
  t.equal((await accept(s, 'not-a-guid')).statusCode, 404)
  s.fake.failNext('status500')
  const down = await accept(s, openId, 'accept-open')
  t.equal(down.statusCode, 503)
  t.match(down.json(), { type: 'urn:problem-type:gateway-unavailable', paymentId: open.id })
  t.ok(Number(down.headers['retry-after']) > 0)
  t.equal((await get(s, `/api/disputes/${openId}`)).json().status, 'needs_response')
  const retried = await accept(s, openId, 'accept-open')
  t.equal(retried.statusCode, 200, 'the retry with the same key asks again')
  t.equal(retried.json().status, 'accepted')
  t.ok(closeRequests(s).filter((request) => request.path === '/v1/disputes/dp_open/close').every((request) => request.headers['idempotency-key'] === `dispute-${openId}:accept`))
})
