import t from 'tap'
import {
  applySucceededRefund, canTransition, IllegalTransitionError, newPendingPayment, PAYMENT_STATUSES, refundableMinor,
  releaseFailedRefund, reserveRefund, transition, type Payment, type PaymentStatus
} from '../../src/domain/payments'
import { refundAmountMinor, transitionRefund, IllegalRefundTransitionError, type Refund } from '../../src/domain/refunds'
import { mergeMetadata, metadataErrors } from '../../src/domain/metadata'
import { normalizeInstant, normalizeRange, pageRequestErrors } from '../../src/domain/pagination'

const at = '2026-01-01T00:00:00.000Z'
const payment = (overrides: Partial<Payment> = {}): Payment => ({ ...newPendingPayment({ id: 'p', amountMinor: 1000, currency: 'USD', at }), ...overrides })

t.test('the transition table: exactly the documented moves', async (t) => {
  const allowed: Record<PaymentStatus, PaymentStatus[]> = {
    pending: ['succeeded', 'declined', 'failed', 'canceled', 'requires_capture', 'requires_action'],
    requires_action: ['succeeded', 'requires_capture', 'declined', 'canceled'],
    requires_capture: ['succeeded', 'canceled'],
    succeeded: ['partially_refunded', 'refunded', 'requires_capture'],
    partially_refunded: ['partially_refunded', 'refunded'],
    declined: [],
    failed: [],
    canceled: [],
    refunded: []
  }
  for (const from of PAYMENT_STATUSES) {
    for (const to of PAYMENT_STATUSES) t.equal(canTransition(from, to), allowed[from].includes(to), `${from} → ${to}`)
  }
  t.match(transition(payment(), 'failed', 'b', 'pending_expired'), { status: 'failed', failureCode: 'pending_expired', declineCode: null, updatedAt: 'b' })
  t.throws(() => transition(payment({ status: 'succeeded', amountCapturedMinor: 1000 }), 'refunded', 'b'), IllegalTransitionError, 'refunded needs the whole amount refunded')
  t.throws(() => transition(payment({ status: 'succeeded', amountCapturedMinor: 1000 }), 'partially_refunded', 'b'), IllegalTransitionError, 'partially needs some refunded')
})

t.test('refund holds: reserve, succeed, fail; never beyond the amount', async (t) => {
  const paid = payment({ status: 'succeeded', amountCapturedMinor: 1000 })
  const held = reserveRefund(paid, 400, 'b')
  t.equal(refundableMinor(held), 600)
  t.throws(() => reserveRefund(held, 601, 'c'), { code: 'REFUND_EXCEEDS_REMAINING' })
  t.throws(() => reserveRefund(held, 0, 'c'), { code: 'REFUND_EXCEEDS_REMAINING' }, 'nothing left to refund is not a refund')
  t.throws(() => reserveRefund(payment(), 1, 'c'), { code: 'PAYMENT_NOT_REFUNDABLE' })
  const partly = applySucceededRefund(held, 400, 'c')
  t.match(partly, { status: 'partially_refunded', amountRefundedMinor: 400, refundPendingMinor: 0 })
  const rest = applySucceededRefund(reserveRefund(partly, 600, 'd'), 600, 'd')
  t.match(rest, { status: 'refunded', amountRefundedMinor: 1000 })
  t.throws(() => reserveRefund(rest, 1, 'e'), { code: 'PAYMENT_NOT_REFUNDABLE', message: /already fully refunded/ })
  t.match(releaseFailedRefund(held, 400, 'c'), { status: 'succeeded', refundPendingMinor: 0 })
})

t.test('refund amounts: whole remainder by default, positive, currency precision', async (t) => {
  const paid = payment({ status: 'succeeded', amountCapturedMinor: 1000, amountRefundedMinor: 250 })
  t.same(refundAmountMinor(paid, undefined), { amountMinor: 750 })
  t.same(refundAmountMinor(paid, 2.5), { amountMinor: 250 })
  t.match(refundAmountMinor(paid, 0), { errors: { amount: [/greater than 0/] } })
  t.match(refundAmountMinor(paid, 0.001), { errors: { amount: [/at most 2 decimal places/] } })
  t.match(refundAmountMinor(paid, 1, 3), { errors: { amount: [/at most 2/] } }, 'decimals as written count')
  t.match(refundAmountMinor(payment({ currency: 'JPY' }), 1.5), { errors: { amount: [/whole number/] } })
  const refund: Refund = { id: 'r', paymentId: 'p', amountMinor: 1, currency: 'USD', status: 'pending', reason: null, failureCode: null, metadata: {}, createdAt: at, updatedAt: at }
  t.match(transitionRefund(refund, 'failed', 'b', 'x'), { status: 'failed', failureCode: 'x' })
  t.throws(() => transitionRefund(transitionRefund(refund, 'succeeded', 'b'), 'failed', 'c'), IllegalRefundTransitionError)
})

t.test('metadata rules and merge patch', async (t) => {
  t.same(metadataErrors(undefined), {})
  t.same(metadataErrors({ a: 'b' }), {})
  t.match(metadataErrors(null), { metadata: [/must be an object/] })
  t.match(metadataErrors([]), { metadata: [/must be an object/] })
  t.match(metadataErrors({ a: null }), { metadata: [/must be a string\./] })
  t.same(metadataErrors({ a: null }, { allowNull: true }), {})
  t.match(metadataErrors({ a: 1 }, { allowNull: true }), { metadata: [/or null to remove the key/] })
  const errors = metadataErrors({ ['k'.repeat(41)]: 'v'.repeat(501), '': 'x' })
  t.equal(errors.metadata?.length, 3, 'every violation listed')
  t.same(mergeMetadata({ a: '1', b: '2' }, { b: null, c: '3' }), { a: '1', c: '3' })
})

t.test('page request rules', async (t) => {
  t.same(pageRequestErrors({ limit: 10 }), {})
  t.match(pageRequestErrors({ limit: 0 }), { limit: [/1 to 100/] })
  t.match(pageRequestErrors({ limit: 10, startingAfter: 'a', endingBefore: 'b' }), { endingBefore: [/either/] })
  t.match(pageRequestErrors({ limit: 10, createdGte: 'nope', createdLt: 'x' }), { createdGte: [/ISO 8601/], createdLt: [/ISO 8601/] })
  t.equal(normalizeInstant('2026-01-01T01:00:00+01:00'), '2026-01-01T00:00:00.000Z')
  t.equal(normalizeInstant(undefined), undefined)
  t.same(normalizeRange({ createdGte: '2026-01-01T01:00:00+01:00' }), { createdGte: '2026-01-01T00:00:00.000Z' })
  t.notOk('createdLt' in normalizeRange({ createdGte: '2026-01-01T00:00:00Z' }), 'a bound not sent stays absent')
})
