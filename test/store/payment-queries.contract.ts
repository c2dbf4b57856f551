import type { Test } from 'tap'
import { applySucceededRefund, newPendingPayment, reserveRefund, type PaymentStatus } from '../../src/domain/payments'
import { transitionRefund } from '../../src/domain/refunds'
import type { Database, Payment, RefundDecision } from '../../src/store/types'

/** Payment list queries added for the dashboard (issue 30): SQLite and PostgreSQL run them unchanged. */
export function paymentQueryContract (t: Test, makeDatabase: () => Promise<Database>): void {
  t.test('list by one metadata entry: exact key and value, any key characters, combined with the owner', async (t) => {
    const db = await makeDatabase()
    t.teardown(async () => { await db.close() })
    const at = '2026-11-25T10:00:00.000Z'
    const pay = (id: string, metadata: Record<string, string>) => ({ ...newPendingPayment({ id, amountMinor: 100, currency: 'EUR', at }), metadata })
    await db.payments.create(pay('p1', { orderId: 'A-1', 'odd "key".x': 'v' }))
    await db.payments.create(pay('p2', { orderId: 'A-10' }))
    await db.payments.create(pay('p3', { other: 'A-1' }))
    const ids = async (key: string, value: string) =>
      (await db.payments.list({ limit: 10, metadata: { key, value } })).data.map((p) => p.id)
    t.same(await ids('orderId', 'A-1'), ['p1'], 'exact value, not a prefix; not another key with that value')
    t.same(await ids('orderId', 'a-1'), [], 'case-sensitive')
    t.same(await ids('odd "key".x', 'v'), ['p1'], 'a key with quotes and dots')
    t.same(await ids('missing', 'A-1'), [])
    t.same((await db.payments.list({ limit: 10, merchantId: '00000000-0000-4000-8000-000000000001', metadata: { key: 'orderId', value: 'A-1' } })).data, [])
  })

  t.test('daily summary: per UTC day and currency, the merchant\'s own, succeeded by captured amount, refunds on their own day, to inclusive', async (t) => {
    const db = await makeDatabase()
    t.teardown(async () => { await db.close() })
    const merchantId = 'm-summary'
    let n = 0
    const pay = async (status: PaymentStatus, amountMinor: number, currency: string, at: string, fields: Partial<Payment> = {}): Promise<Payment> => {
      const payment: Payment = {
        ...newPendingPayment({ id: `sum-${++n}`, amountMinor, currency, at, merchantId }),
        status,
        amountCapturedMinor: ['succeeded', 'partially_refunded', 'refunded'].includes(status) ? amountMinor : 0,
        ...fields
      }
      await db.payments.create(payment)
      return payment
    }
    const refund = async (payment: Payment, amountMinor: number, at: string, outcome: 'succeeded' | 'pending') => {
      const decided = await db.refunds.create(payment.id, (p): RefundDecision => ({
        payment: reserveRefund(p, amountMinor, at),
        refund: { id: `re-${++n}`, paymentId: p.id, amountMinor, currency: p.currency, status: 'pending', reason: null, failureCode: null, metadata: {}, createdAt: at, updatedAt: at }
      }))
      if (decided === undefined || outcome === 'pending') return
      await db.refunds.complete(decided.refund.id, (r, p) => ({ refund: transitionRefund(r, 'succeeded', at), payment: applySucceededRefund(p, r.amountMinor, at) }))
    }
    const refunded = await pay('succeeded', 1000, 'EUR', '2026-11-01T00:00:00.000Z')
    await pay('succeeded', 250, 'EUR', '2026-11-01T23:59:59.999Z')
    await pay('succeeded', 700, 'EUR', '2026-11-01T12:00:00.000Z', { amountCapturedMinor: 400 })
    await pay('declined', 300, 'EUR', '2026-11-01T08:00:00.000Z')
    await pay('requires_capture', 900, 'EUR', '2026-11-01T08:00:00.000Z')
    await pay('pending', 900, 'EUR', '2026-11-01T08:00:00.000Z')
    await pay('failed', 900, 'EUR', '2026-11-01T08:00:00.000Z')
    await pay('canceled', 900, 'EUR', '2026-11-01T08:00:00.000Z')
    await pay('succeeded', 5000, 'JPY', '2026-11-03T23:59:59.999Z')
    await pay('succeeded', 111, 'EUR', '2026-11-04T00:00:00.000Z')
    await pay('succeeded', 222, 'EUR', '2026-10-31T23:59:59.999Z')
    await db.payments.create({ ...newPendingPayment({ id: 'other-merchant', amountMinor: 999, currency: 'EUR', at: '2026-11-01T10:00:00.000Z', merchantId: 'm-other' }), status: 'succeeded', amountCapturedMinor: 999 })
    await refund(refunded, 300, '2026-11-03T10:00:00.000Z', 'succeeded')
    await refund(refunded, 200, '2026-11-03T11:00:00.000Z', 'pending')
    await refund(refunded, 100, '2026-11-04T00:00:00.000Z', 'succeeded')

    const figures = await db.payments.dailySummary({ merchantId, createdGte: '2026-11-01T00:00:00.000Z', createdLt: '2026-11-04T00:00:00.000Z' })
    const sorted = <T extends { day: string, currency: string }>(rows: T[]) => [...rows].sort((a, b) => `${a.day}${a.currency}`.localeCompare(`${b.day}${b.currency}`))
    t.same(sorted(figures.succeeded), [
      { day: '2026-11-01', currency: 'EUR', count: 3, amountMinor: 1650 },
      { day: '2026-11-03', currency: 'JPY', count: 1, amountMinor: 5000 }
    ], 'succeeded (now partially refunded) included, the captured amount of a partial capture, day boundaries, no other merchant, not the next day')
    t.same(figures.declined, [{ day: '2026-11-01', currency: 'EUR', count: 1, amountMinor: 300 }])
    t.same(figures.refunded, [{ day: '2026-11-03', currency: 'EUR', count: 1, amountMinor: 300 }], 'a succeeded refund on its own day; not the pending one, not after the range')
    t.same(await db.payments.dailySummary({ merchantId: 'm-none', createdGte: '2026-11-01T00:00:00.000Z', createdLt: '2026-11-04T00:00:00.000Z' }),
      { succeeded: [], declined: [], refunded: [] })
  })
}
