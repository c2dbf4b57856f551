import t from 'tap'
import Stripe from 'stripe'
import { STRIPE_SIGNATURE_TOLERANCE_SECONDS, StripeEventVerificationError, verifyStripeEvent } from '../../../src/gateway/stripe/events'

const SECRET = 'whsec_unitTEST00000000'

function signed (body: unknown, timestamp = Math.floor(Date.now() / 1000)): { raw: Buffer, header: string } {
  const payload = JSON.stringify(body)
  return { raw: Buffer.from(payload), header: Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp }) }
}

function read (body: unknown) {
  const { raw, header } = signed(body)
  return verifyStripeEvent(raw, header, SECRET, Date.now())
}

t.test('the tolerance is counted from our clock, not the machine\'s', async (t) => {
  const at = 1_767_225_600
  const { raw, header } = signed({ id: 'evt_1', type: 'customer.created' }, at)
  t.match(verifyStripeEvent(raw, header, SECRET, (at + STRIPE_SIGNATURE_TOLERANCE_SECONDS) * 1000), { id: 'evt_1', effect: { kind: 'none' } })
  t.throws(() => verifyStripeEvent(raw, header, SECRET, (at + STRIPE_SIGNATURE_TOLERANCE_SECONDS + 1) * 1000), StripeEventVerificationError)
  t.throws(() => verifyStripeEvent(raw, undefined, SECRET, at * 1000), StripeEventVerificationError, 'no header')
})

t.test('a signed body that is not an event is refused', async (t) => {
  t.throws(() => read({ type: 'x' }), StripeEventVerificationError)
  t.throws(() => read([1, 2]), StripeEventVerificationError)
})

t.test('what each event says', async (t) => {
  t.same(read({ id: 'evt_1', type: 'payment_intent.succeeded' }).effect, { kind: 'none' }, 'no data object')
  t.same(read({ id: 'evt_2', type: 'payment_intent.succeeded', data: { object: { id: 'cus_1', object: 'customer' } } }).effect, { kind: 'none' }, 'not a PaymentIntent')
  const intent = { id: 'pi_1', object: 'payment_intent', amount: 1000, amount_received: 600, currency: 'jpy', status: 'succeeded', metadata: { payment_id: 'p1' } }
  t.same(read({ id: 'evt_3', type: 'payment_intent.succeeded', data: { object: intent } }).effect,
    { kind: 'charge', reference: 'pi_1', paymentId: 'p1', amountMinor: 1000, amountReceivedMinor: 600, currency: 'JPY', result: { outcome: 'succeeded', chargeId: 'pi_1', amountCapturedMinor: 600 } },
    'zero-decimal amounts as they are; what Stripe took beside what it was for')
  t.match(read({ id: 'evt_3b', type: 'payment_intent.succeeded', data: { object: { ...intent, amount_received: undefined } } }).effect, { amountReceivedMinor: 0 }, 'nothing received said: 0')
  t.same(read({ id: 'evt_4', type: 'payment_intent.succeeded', data: { object: { ...intent, currency: 'zzz' } } }).effect, { kind: 'none' }, 'an unknown currency')
  t.same(read({ id: 'evt_5', type: 'payment_intent.succeeded', data: { object: { ...intent, amount: '10' } } }).effect, { kind: 'none' }, 'a malformed intent')
  t.same(read({ id: 'evt_6', type: 'payment_intent.created', data: { object: intent } }).effect, { kind: 'none' }, 'an event we do not act on')
  const refund = { id: 're_1', object: 'refund', status: 'canceled', failure_reason: null, metadata: null }
  t.same(read({ id: 'evt_7', type: 'refund.updated', data: { object: refund } }).effect,
    { kind: 'refund', gatewayRefundId: 're_1', refundId: undefined, paymentId: undefined, result: { outcome: 'failed', gatewayRefundId: 're_1', failureCode: 'refund_failed' } })
  t.same(read({ id: 'evt_8', type: 'refund.updated', data: { object: { ...refund, status: 'requires_action' } } }).effect, { kind: 'none' }, 'not an outcome yet')
  t.same(read({ id: 'evt_9', type: 'refund.updated', data: { object: { ...refund, id: '' } } }).effect, { kind: 'none' })
})

t.test('disputes (issue 40): Stripe\'s statuses as ours, money movements from balance_transactions and the event type', async (t) => {
  const dispute = { id: 'dp_1', object: 'dispute', amount: 1050, currency: 'usd', payment_intent: 'pi_1', reason: 'fraudulent', status: 'needs_response', balance_transactions: [], evidence_details: { due_by: 1767225599 } }
  t.same(read({ id: 'evt_d1', type: 'charge.dispute.created', data: { object: dispute } }).effect, {
    kind: 'dispute',
    paymentIntent: 'pi_1',
    report: { connectorReference: 'dp_1', amountMinor: 1050, currency: 'USD', reason: 'fraudulent', status: 'needs_response', stage: 1, fundsStage: 0, evidenceDueBy: '2025-12-31T23:59:59.000Z' }
  })
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['charge.dispute.updated', { status: 'warning_under_review', payment_intent: { id: 'pi_2' } }, { paymentIntent: 'pi_2', report: { status: 'under_review', stage: 2 } }],
    ['charge.dispute.closed', { status: 'warning_closed' }, { report: { status: 'won', stage: 3 } }],
    ['charge.dispute.closed', { status: 'lost', balance_transactions: ['txn_1'] }, { report: { status: 'lost', stage: 3, fundsStage: 1 } }],
    ['charge.dispute.funds_withdrawn', {}, { report: { fundsStage: 1 } }],
    ['charge.dispute.funds_reinstated', { status: 'won', balance_transactions: ['txn_1'] }, { report: { status: 'won', fundsStage: 2 } }],
    ['charge.dispute.updated', { reason: '', evidence_details: null, payment_intent: null }, { paymentIntent: undefined, report: { reason: null, evidenceDueBy: null } }]
  ]
  for (const [type, fields, expected] of cases) t.match(read({ id: `evt_${type}`, type, data: { object: { ...dispute, ...fields } } }).effect, { kind: 'dispute', ...expected }, `${type} ${JSON.stringify(fields)}`)
  for (const fields of [{ status: 'prevented_unknown' }, { currency: 'zzz' }, { amount: '10' }, { id: '' }]) {
    t.same(read({ id: 'evt_none', type: 'charge.dispute.updated', data: { object: { ...dispute, ...fields } } }).effect, { kind: 'none' }, JSON.stringify(fields))
  }
  t.same(read({ id: 'evt_obj', type: 'charge.dispute.created', data: { object: { ...dispute, object: 'charge' } } }).effect, { kind: 'none' }, 'not a Dispute')
})

t.test('charge.refunded (issue 40): the total Stripe took back, the refunds the charge lists (older API versions), its PaymentIntent', async (t) => {
  const refund = { id: 're_1', object: 'refund', amount: 300, currency: 'usd', payment_intent: 'pi_1', status: 'succeeded', metadata: {} }
  const charge = { id: 'ch_1', object: 'charge', amount: 1000, amount_refunded: 300, currency: 'usd', payment_intent: 'pi_1', refunds: { object: 'list', data: [refund, { ...refund, id: 're_2', status: 'pending' }, 'x'] } }
  t.match(read({ id: 'evt_r1', type: 'charge.refunded', data: { object: charge } }).effect, {
    kind: 'charge_refunded', paymentIntent: 'pi_1', amountRefundedMinor: 300, currency: 'USD', refunds: [{ kind: 'refund', gatewayRefundId: 're_1', paymentIntent: 'pi_1', amountMinor: 300 }]
  })
  t.equal((read({ id: 'evt_r1b', type: 'charge.refunded', data: { object: charge } }).effect as { refunds: unknown[] }).refunds.length, 1, 'a pending refund is not an outcome yet')
  t.match(read({ id: 'evt_r2', type: 'charge.refunded', data: { object: { ...charge, refunds: undefined, payment_intent: { id: 'pi_2' } } } }).effect,
    { kind: 'charge_refunded', paymentIntent: 'pi_2', refunds: [] }, 'later API versions list none')
  t.match(read({ id: 'evt_r2b', type: 'charge.refunded', data: { object: { ...charge, refunds: { data: [{ ...refund, payment_intent: null }] } } } }).effect,
    { refunds: [{ gatewayRefundId: 're_1', paymentIntent: 'pi_1' }] }, 'a listed refund that names no PaymentIntent is the charge\'s')
  t.same(read({ id: 'evt_r3', type: 'charge.refunded', data: { object: { ...charge, currency: 'zzz' } } }).effect, { kind: 'none' }, 'an unknown currency')
  t.same(read({ id: 'evt_r4', type: 'charge.refunded', data: { object: { ...charge, amount_refunded: '3' } } }).effect, { kind: 'none' }, 'malformed')
})
