import t from 'tap'
import { disputeEventType, mergeDispute, withDisputes, type Dispute, type DisputeReport } from '../../src/domain/disputes'
import { newPendingPayment, refundableMinor, reserveRefund, type Payment } from '../../src/domain/payments'

const AT = '2026-11-26T10:00:00.000Z'
const LATER = '2026-11-26T11:00:00.000Z'
const connector = { id: '0199a000-0000-7000-8000-0000000000c1', type: 'stripe' as const }
const payment: Payment = { ...newPendingPayment({ id: 'p', amountMinor: 1000, currency: 'USD', at: AT, merchantId: 'm' }), status: 'succeeded', amountCapturedMinor: 1000 }

function report (fields: Partial<DisputeReport> = {}): DisputeReport {
  return { connectorReference: 'dp_1', amountMinor: 1000, currency: 'USD', reason: 'fraudulent', status: 'needs_response', stage: 1, evidenceDueBy: null, ...fields }
}

function replay (reports: DisputeReport[]): Dispute | undefined {
  let dispute: Dispute | undefined
  for (const r of reports) dispute = mergeDispute(dispute, r, { id: 'd', payment, connector, at: AT })
  return dispute
}

t.test('mergeDispute: a later stage wins, an earlier one changes nothing (the same object), money movements only grow', async (t) => {
  const created = mergeDispute(undefined, report({ fundsStage: 1, evidenceDueBy: '2026-12-01T00:00:00.000Z' }), { id: 'd', payment, connector, at: AT })
  t.match(created, { id: 'd', merchantId: 'm', paymentId: 'p', status: 'needs_response', fundsWithdrawn: true, fundsStage: 1, createdAt: AT, updatedAt: AT })
  t.equal(mergeDispute(created, report(), { id: 'x', payment, connector, at: LATER }), created, 'a duplicate changes nothing')
  const won = mergeDispute(created, report({ status: 'won', stage: 3, fundsStage: 2 }), { id: 'x', payment, connector, at: LATER })
  t.match(won, { id: 'd', status: 'won', fundsWithdrawn: false, updatedAt: LATER, createdAt: AT, evidenceDueBy: '2026-12-01T00:00:00.000Z' })
  t.equal(mergeDispute(won, report({ status: 'under_review', stage: 2, fundsStage: 1 }), { id: 'x', payment, connector, at: LATER }), won, 'an older report changes nothing')
  t.equal(mergeDispute(won, report({ status: 'needs_response', stage: 3 }), { id: 'x', payment, connector, at: LATER }).status, 'won', 'within a stage the later status wins')
})

t.test('mergeDispute: every order of the same reports ends in the same dispute', async (t) => {
  const reports = [report({ fundsStage: 1 }), report({ status: 'under_review', stage: 2, fundsStage: 1 }), report({ status: 'lost', stage: 3, fundsStage: 1, reason: 'general' })]
  const orders = [[0, 1, 2], [2, 1, 0], [1, 2, 0], [2, 0, 1, 2], [0, 2, 1, 0]]
  const expected = replay(reports)
  for (const order of orders) t.same(replay(order.map((i) => reports[i]!)), expected, `order ${order.join(',')}`)
  t.match(expected, { status: 'lost', fundsWithdrawn: true, reason: 'general' })
})

t.test('withDisputes: the amount disputed, capped by refunds; disputeOpen until won; refunds refused meanwhile', async (t) => {
  const dispute = replay([report({ fundsStage: 1 })])!
  const disputed = withDisputes(payment, [dispute], LATER)
  t.match(disputed, { amountDisputedMinor: 1000, disputeOpen: true, updatedAt: LATER })
  t.equal(refundableMinor(disputed), 0)
  t.throws(() => reserveRefund(disputed, 1, LATER), { code: 'PAYMENT_DISPUTED' })
  t.equal(withDisputes(disputed, [dispute], LATER), disputed, 'nothing to change: the same payment')
  const refunded = { ...payment, amountRefundedMinor: 300, refundPendingMinor: 200 }
  t.equal(withDisputes(refunded, [dispute], LATER).amountDisputedMinor, 500, 'refunded and pending refunds keep their money')
  const won = mergeDispute(dispute, report({ status: 'won', stage: 3, fundsStage: 2 }), { id: 'd', payment, connector, at: LATER })
  const after = withDisputes(disputed, [won], LATER)
  t.equal(after.amountDisputedMinor, 0)
  t.notOk('disputeOpen' in after, 'won: no open dispute')
  t.equal(withDisputes(payment, [{ ...dispute, currency: 'EUR' }], LATER).amountDisputedMinor, 0, 'another currency is not counted')
})

t.test('disputeEventType', async (t) => {
  const dispute = replay([report()])!
  t.equal(disputeEventType({ dispute, previous: undefined }), 'dispute.created')
  t.equal(disputeEventType({ dispute: { ...dispute, status: 'under_review' }, previous: dispute }), 'dispute.updated')
  t.equal(disputeEventType({ dispute: { ...dispute, status: 'lost' }, previous: dispute }), 'dispute.closed')
  t.equal(disputeEventType({ dispute: { ...dispute, status: 'lost', fundsWithdrawn: true }, previous: { ...dispute, status: 'lost' } }), 'dispute.updated')
})
