/**
 * A dispute event that names a payment whose charge, capture or refunds are not all recorded here yet is answered 503
 * `connector-event-not-matched` (nothing applied) and applies when the PSP sends it again: found by the simulator
 * (seeds 183704 and 2936067), where such a dispute was capped to what our records had left, for good.
 */
import t, { type Test } from 'tap'
import Stripe from 'stripe'
import { buildTestApp, merchantWithKey, ADMIN_AUTH, type MerchantCredentials } from '../../helpers/app'
import { FakeStripe } from '../../helpers/fake-stripe'
import type { App } from '../../../app/app'

const SECRET_KEY = 'sk_test_51Hx00disputesNOTMATCHED042'
const WEBHOOK_SECRET = 'whsec_0123456789abcdefNOTMATCHED'

interface Setup { app: App, fake: FakeStripe, merchant: MerchantCredentials, url: string }

async function setup (t: Test): Promise<Setup> {
  const fake = await FakeStripe.start()
  t.teardown(async () => { await fake.close() })
  fake.keys.add(SECRET_KEY)
  const app = await buildTestApp(t, { STRIPE_API_URL: fake.url })
  const merchant = await merchantWithKey(app)
  const created = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: ADMIN_AUTH, payload: { type: 'stripe', credentials: { secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET } } })
  t.equal(created.statusCode, 201)
  return { app, fake, merchant, url: `/connectors/${String(created.json().id)}/stripe-events` }
}

function disputeEvent (id: string, pi: string) {
  return {
    id,
    object: 'event',
    api_version: '2026-10-28.endive',
    created: Math.floor(Date.now() / 1000),
    type: 'charge.dispute.created',
    livemode: false,
    data: {
      object: {
        id: `dp_${id}`,
        object: 'dispute',
        amount: 1000,
        currency: 'usd',
        charge: 'ch_1Test',
        payment_intent: pi,
        reason: 'fraudulent',
        status: 'needs_response',
        balance_transactions: [{ id: 'txn_w', object: 'balance_transaction', amount: -1000, currency: 'usd' }],
        evidence_details: { due_by: 1767225599 },
        metadata: {}
      }
    }
  }
}

async function send (s: Setup, body: unknown) {
  const payload = JSON.stringify(body)
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET })
  return await s.app.inject({ method: 'POST', url: s.url, headers: { authorization: undefined, 'content-type': 'application/json', 'stripe-signature': signature }, payload })
}

async function disputesOf (s: Setup, paymentId: string): Promise<unknown[]> {
  const res = await s.app.inject({ method: 'GET', url: `/api/disputes?paymentId=${paymentId}`, headers: s.merchant.auth })
  t.equal(res.statusCode, 200)
  return res.json().data as unknown[]
}

t.test('a dispute of a payment whose capture is not recorded yet: 503, nothing applied, then applied when sent again', async (t) => {
  const s = await setup(t)
  const created = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa', captureMethod: 'manual' } })
  t.equal(created.statusCode, 201)
  t.equal(created.json().status, 'requires_capture')
  const { id, connectorReference } = created.json() as { id: string, connectorReference: string }

  const early = await send(s, disputeEvent('evt_not_matched_1', connectorReference))
  t.equal(early.statusCode, 503)
  t.match(early.json(), { type: 'urn:problem-type:connector-event-not-matched', status: 503 })
  t.equal(early.headers['retry-after'], '60')
  t.same(await disputesOf(s, id), [], 'nothing applied')

  const captured = await s.app.inject({ method: 'POST', url: `/api/payments/${id}/capture`, headers: { ...s.merchant.auth, 'idempotency-key': 'capture-not-matched-1' }, payload: {} })
  t.equal(captured.statusCode, 200)
  const again = await send(s, disputeEvent('evt_not_matched_1', connectorReference))
  t.equal(again.statusCode, 200, 'the same event, sent again, applies')
  t.match(await disputesOf(s, id), [{ paymentId: id, status: 'needs_response', fundsWithdrawn: true }])
  const payment = await s.app.inject({ method: 'GET', url: `/api/payments/${id}`, headers: s.merchant.auth })
  t.equal(payment.json().amountDisputed, payment.json().amountCaptured, 'the whole withdrawal is recorded, not a capped part')
  t.equal(Number(payment.json().amountDisputed), 10)
})

t.test('a Stripe dispute naming no PaymentIntent of ours: 503 while a payment is pending, ignored (200) when none is', async (t) => {
  const s = await setup(t)
  t.equal((await send(s, disputeEvent('evt_not_ours_1', 'pi_not_ours'))).statusCode, 200, 'nothing pending: ignored')

  s.fake.failNext('dropAfterWork')
  const pending = await s.app.inject({ method: 'POST', url: '/api/payments', headers: { ...s.merchant.auth, 'idempotency-key': 'pending-not-matched' }, payload: { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' } })
  t.equal(pending.statusCode, 503, 'the answer was lost: the payment is pending')
  const answer = await send(s, disputeEvent('evt_not_ours_2', 'pi_maybe_ours'))
  t.equal(answer.statusCode, 503)
  t.match(answer.json(), { type: 'urn:problem-type:connector-event-not-matched' })
})

t.test('a refund made at Stripe for a payment whose capture is not recorded yet: 503, then recorded when sent again', async (t) => {
  const s = await setup(t)
  const created = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa', captureMethod: 'manual' } })
  const { id, connectorReference } = created.json() as { id: string, connectorReference: string }
  const refundEvent = {
    id: 'evt_refund_not_matched',
    object: 'event',
    api_version: '2026-10-28.endive',
    created: Math.floor(Date.now() / 1000),
    type: 'charge.refund.updated',
    livemode: false,
    data: { object: { id: 're_dashboard_1', object: 'refund', amount: 400, currency: 'usd', status: 'succeeded', payment_intent: connectorReference, charge: 'ch_1Test', metadata: {} } }
  }
  const early = await send(s, refundEvent)
  t.equal(early.statusCode, 503)
  t.match(early.json(), { type: 'urn:problem-type:connector-event-not-matched' })
  const captured = await s.app.inject({ method: 'POST', url: `/api/payments/${id}/capture`, headers: { ...s.merchant.auth, 'idempotency-key': 'capture-refund-not-matched' }, payload: {} })
  t.equal(captured.statusCode, 200)
  t.equal((await send(s, refundEvent)).statusCode, 200, 'sent again, it is recorded')
  const payment = await s.app.inject({ method: 'GET', url: `/api/payments/${id}`, headers: s.merchant.auth })
  t.equal(Number(payment.json().amountRefunded), 4)
  t.equal(payment.json().status, 'partially_refunded')
})
