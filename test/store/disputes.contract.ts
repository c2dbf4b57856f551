import type { Test } from 'tap'
import { newPendingPayment, reserveRefund, applySucceededRefund } from '../../src/domain/payments'
import { mergeDispute, withDisputes, type Dispute, type DisputeReport } from '../../src/domain/disputes'
import { transitionRefund } from '../../src/domain/refunds'
import type { Database, Payment } from '../../src/store/types'
import type { NewEvent } from '../../src/domain/events'

const AT = '2026-11-26T10:00:00.000Z'
const CONNECTOR = { id: '0199a000-0000-7000-8000-0000000000c1', type: 'stripe' as const }

function report (fields: Partial<DisputeReport> = {}): DisputeReport {
  return { connectorReference: 'dp_1', amountMinor: 1000, currency: 'USD', reason: 'fraudulent', status: 'needs_response', stage: 1, evidenceDueBy: '2026-12-10T00:00:00.000Z', ...fields }
}

/** The DisputeStore contract (issue 40): SQLite and PostgreSQL run it unchanged. */
export function disputeStoreContract (t: Test, makeDatabase: () => Promise<Database>): void {
  async function fresh (t: Test): Promise<Database> {
    const db = await makeDatabase()
    t.teardown(async () => { await db.close() })
    return db
  }

  async function succeeded (db: Database, id: string, amountMinor = 1000, merchantId = 'm-disputes', at = AT): Promise<Payment> {
    const pending = newPendingPayment({ id, amountMinor, currency: 'USD', at, merchantId, connector: CONNECTOR })
    await db.payments.create(pending)
    return await db.payments.complete({ ...pending, status: 'succeeded', amountCapturedMinor: amountMinor, connectorReference: `pi_${id}` })
  }

  /** Records `r` the way the service does: merge, then the payment's dispute members from all its disputes. */
  async function apply (db: Database, paymentId: string, r: DisputeReport, at = AT, id = `d-${r.connectorReference}`) {
    return await db.disputes.record(paymentId, { id: CONNECTOR.id, reference: r.connectorReference }, (payment, existing, all) => {
      const dispute = mergeDispute(existing, r, { id, payment, connector: CONNECTOR, at })
      if (dispute === existing) return undefined
      return { dispute, payment: withDisputes(payment, [...all.filter((d) => d.id !== dispute.id), dispute], at) }
    }, ({ dispute }): NewEvent => ({ id: `ev-${dispute.id}-${dispute.updatedAt}-${dispute.status}`, merchantId: dispute.merchantId ?? '', type: 'dispute.created', resourceType: 'dispute', resourceId: dispute.id, data: { status: dispute.status }, dataFormat: 'snapshot', createdAt: at }))
  }

  t.test('record creates a dispute with the payment locked; get, listForPayment; the payment carries the amount disputed', async (t) => {
    const db = await fresh(t)
    await succeeded(db, 'p1')
    t.equal(await db.disputes.record('missing', { id: CONNECTOR.id, reference: 'dp_x' }, () => { throw new Error('not called') }), undefined, 'no such payment')
    const created = await apply(db, 'p1', report({ fundsStage: 1 }))
    t.equal(created?.previous, undefined, 'created')
    const expected: Dispute = {
      id: 'd-dp_1',
      merchantId: 'm-disputes',
      paymentId: 'p1',
      amountMinor: 1000,
      currency: 'USD',
      reason: 'fraudulent',
      status: 'needs_response',
      fundsWithdrawn: true,
      evidenceDueBy: '2026-12-10T00:00:00.000Z',
      connector: CONNECTOR,
      connectorReference: 'dp_1',
      stage: 1,
      fundsStage: 1,
      createdAt: AT,
      updatedAt: AT
    }
    t.same(await db.disputes.get('d-dp_1'), expected)
    t.same(await db.disputes.listForPayment('p1'), [expected])
    t.equal(await db.disputes.get('nope'), undefined)
    const payment = await db.payments.get('p1')
    t.equal(payment?.amountDisputedMinor, 1000)
    t.equal(payment?.disputeOpen, true)
    t.equal((await db.events.list({ merchantId: 'm-disputes', limit: 10 })).data.filter((e) => e.resourceId === 'd-dp_1').length, 1, 'its event, in the same transaction')
  })

  t.test('a payment without disputes has no amount disputed; duplicates change nothing; any order ends in the same state', async (t) => {
    const db = await fresh(t)
    await succeeded(db, 'p2')
    const before = await db.payments.get('p2')
    t.equal(before?.amountDisputedMinor, undefined)
    t.equal(before?.disputeOpen, undefined)
    const reports = [report({ fundsStage: 1 }), report({ status: 'under_review', stage: 2 }), report({ status: 'won', stage: 3, fundsStage: 2 })]
    for (const r of [reports[2], reports[0], reports[1], reports[2], reports[0]]) await apply(db, 'p2', r!, AT)
    const dispute = await db.disputes.get('d-dp_1')
    t.match(dispute, { status: 'won', stage: 3, fundsStage: 2, fundsWithdrawn: false })
    const payment = await db.payments.get('p2')
    t.equal(payment?.amountDisputedMinor, 0, 'reinstated')
    t.equal(payment?.disputeOpen, undefined, 'won: refundable again')
    t.equal((await db.events.list({ merchantId: 'm-disputes', limit: 10 })).data.filter((e) => e.resourceId === 'd-dp_1').length, 1, 'only the first report changed it')
  })

  t.test('the amount disputed never takes refunded money: refunded + disputed ≤ captured, and a CHECK refuses more', async (t) => {
    const db = await fresh(t)
    await succeeded(db, 'p3', 1000)
    const decision = await db.refunds.create('p3', (payment) => ({
      payment: reserveRefund(payment, 400, AT),
      refund: { id: 'r1', paymentId: 'p3', amountMinor: 400, currency: 'USD', status: 'pending', reason: null, failureCode: null, metadata: {}, createdAt: AT, updatedAt: AT }
    }))
    t.ok(decision)
    await apply(db, 'p3', report({ connectorReference: 'dp_3', fundsStage: 1 }))
    t.equal((await db.payments.get('p3'))?.amountDisputedMinor, 600, 'the pending refund keeps its 400')
    await db.refunds.complete('r1', (refund, payment) => ({ refund: transitionRefund(refund, 'succeeded', AT), payment: applySucceededRefund(payment, refund.amountMinor, AT) }))
    const payment = await db.payments.get('p3')
    t.equal(payment!.amountRefundedMinor + payment!.amountDisputedMinor!, 1000)
    await t.rejects(db.disputes.record('p3', { id: CONNECTOR.id, reference: 'dp_3' }, (p, existing) => ({ dispute: existing!, payment: { ...p, amountDisputedMinor: 700 } })),
      'the database refuses refunded + disputed > captured')
    t.equal((await db.payments.get('p3'))?.amountDisputedMinor, 600, 'rolled back')
  })

  t.test('a refund racing a withdrawal, many times at once: never more out than captured', async (t) => {
    const db = await fresh(t)
    for (let round = 0; round < 10; round++) {
      const id = `race-${round}`
      await succeeded(db, id, 1000)
      const refund = db.refunds.create(id, (payment) => ({
        payment: reserveRefund(payment, 700, AT),
        refund: { id: `r-${id}`, paymentId: id, amountMinor: 700, currency: 'USD', status: 'pending', reason: null, failureCode: null, metadata: {}, createdAt: AT, updatedAt: AT }
      })).catch((err: unknown) => err)
      const withdrawal = apply(db, id, report({ connectorReference: `dp-${id}`, fundsStage: 1 }))
      const [refunded] = await Promise.all([refund, withdrawal])
      const payment = await db.payments.get(id)
      const out = payment!.amountRefundedMinor + payment!.refundPendingMinor + payment!.amountDisputedMinor!
      t.ok(out <= 1000, `round ${round}: refunded + pending + disputed = ${out} ≤ 1000`)
      t.ok(refunded instanceof Error ? (refunded as { code?: string }).code === 'PAYMENT_DISPUTED' : payment!.refundPendingMinor === 700,
        `round ${round}: the refund went first (its 700 kept) or was refused as disputed`)
    }
  })

  t.test('list: a merchant\'s disputes, newest first, cursor pages, filters status and paymentId', async (t) => {
    const db = await fresh(t)
    await succeeded(db, 'pa')
    await succeeded(db, 'pb')
    await succeeded(db, 'pc', 1000, 'm-other')
    await apply(db, 'pa', report({ connectorReference: 'dp_a' }), '2026-11-26T10:00:01.000Z')
    await apply(db, 'pb', report({ connectorReference: 'dp_b', status: 'lost', stage: 3 }), '2026-11-26T10:00:02.000Z')
    await apply(db, 'pa', report({ connectorReference: 'dp_a2' }), '2026-11-26T10:00:03.000Z')
    await apply(db, 'pc', report({ connectorReference: 'dp_c' }), '2026-11-26T10:00:04.000Z')
    const ids = (page: { data: Dispute[] }) => page.data.map((d) => d.id)
    t.same(ids(await db.disputes.list({ merchantId: 'm-disputes', limit: 10 })), ['d-dp_a2', 'd-dp_b', 'd-dp_a'])
    const first = await db.disputes.list({ merchantId: 'm-disputes', limit: 2 })
    t.same(ids(first), ['d-dp_a2', 'd-dp_b'])
    t.equal(first.hasMore, true)
    t.same(ids(await db.disputes.list({ merchantId: 'm-disputes', limit: 2, startingAfter: 'd-dp_b' })), ['d-dp_a'])
    t.same(ids(await db.disputes.list({ merchantId: 'm-disputes', limit: 2, endingBefore: 'd-dp_a' })), ['d-dp_a2', 'd-dp_b'])
    t.same(ids(await db.disputes.list({ merchantId: 'm-disputes', limit: 10, status: 'lost' })), ['d-dp_b'])
    t.same(ids(await db.disputes.list({ merchantId: 'm-disputes', limit: 10, paymentId: 'pa' })), ['d-dp_a2', 'd-dp_a'])
    t.same(ids(await db.disputes.list({ merchantId: 'm-other', limit: 10 })), ['d-dp_c'])
    await t.rejects(db.disputes.list({ merchantId: 'm-disputes', limit: 10, startingAfter: 'd-dp_c' }), { message: /is not one/ }, 'another merchant\'s dispute is no cursor')
  })
}
