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

  t.test('customer and payment method details: stored, read back, completed; listed by customerEmail, amount and last4 (issue 44)', async (t) => {
    const db = await makeDatabase()
    t.teardown(async () => { await db.close() })
    const merchantId = 'm-customers'
    let n = 0
    const at = (i: number) => `2026-11-25T10:00:0${i}.000Z`
    const card = (last4: string) => ({ type: 'card', card: { brand: 'visa', last4, expMonth: 12, expYear: 2034, country: 'US' } })
    const pay = async (amountMinor: number, currency: string, email: string | undefined, last4: string | undefined): Promise<string> => {
      const id = `cust-${++n}`
      const pending = newPendingPayment({ id, amountMinor, currency, at: at(n), merchantId, ...(email === undefined ? {} : { customer: { email, name: 'Jane Doe' } }) })
      await db.payments.create(pending)
      const final: Payment = { ...pending, status: 'succeeded', amountCapturedMinor: amountMinor, updatedAt: at(n), ...(last4 === undefined ? {} : { paymentMethodDetails: card(last4) }) }
      await db.payments.complete(final)
      return id
    }
    const usd35 = await pay(3500, 'USD', 'Jane.Doe@Example.com', '4242')
    const jpy35 = await pay(35, 'JPY', 'jane.doe@example.com', '4444')
    const bhd35 = await pay(35000, 'BHD', undefined, '4242')
    const usd10 = await pay(1050, 'USD', 'other@example.com', undefined)
    const jpy1050 = await pay(1050, 'JPY', undefined, undefined)
    await db.payments.create(newPendingPayment({ id: 'other-merchant', amountMinor: 3500, currency: 'USD', at: at(9), merchantId: 'm-other', customer: { email: 'jane.doe@example.com' } }))

    const stored = await db.payments.get(usd35)
    t.same(stored?.customer, { email: 'Jane.Doe@Example.com', name: 'Jane Doe' }, 'the customer as sent')
    t.same(stored?.paymentMethodDetails, card('4242'), 'the details the completion wrote')
    t.equal((await db.payments.get(usd10))?.paymentMethodDetails, undefined)
    t.equal((await db.payments.get(jpy1050))?.customer, undefined)

    const ids = async (query: { customerEmail?: string, amount?: number, last4?: string, status?: 'succeeded' }) =>
      (await db.payments.list({ limit: 10, merchantId, ...query })).data.map((p) => p.id)
    t.same(await ids({ customerEmail: 'jane.doe@example.com' }), [jpy35, usd35], 'case-insensitive, the merchant\'s own only')
    t.same(await ids({ customerEmail: ' JANE.DOE@example.COM ' }), [jpy35, usd35], 'trimmed')
    t.same(await ids({ customerEmail: 'jane' }), [], 'exact, not a prefix')
    t.same(await ids({ amount: 35 }), [bhd35, jpy35, usd35], '35 in each currency\'s own units: USD 35.00, JPY 35, BHD 35.000')
    t.same(await ids({ amount: 10.5 }), [usd10], '10.50 cannot be a JPY amount: JPY 1050 is not 10.5')
    t.same(await ids({ amount: 1050 }), [jpy1050])
    t.same(await ids({ amount: 0.0001 }), [], 'more decimals than any currency: nothing')
    t.same(await ids({ last4: '4242' }), [bhd35, usd35])
    t.same(await ids({ last4: '4242', customerEmail: 'jane.doe@example.com', amount: 35, status: 'succeeded' }), [usd35], 'filters combine')
    t.same(await ids({ last4: '0000' }), [])
  })

  t.test('a merchant\'s refunds of all its payments: newest first, paged, by status and creation time, no other merchant\'s (issue 44)', async (t) => {
    const db = await makeDatabase()
    t.teardown(async () => { await db.close() })
    let n = 0
    const paid = async (merchantId: string): Promise<Payment> => {
      const payment: Payment = { ...newPendingPayment({ id: `rp-${++n}`, amountMinor: 1000, currency: 'EUR', at: '2026-11-01T00:00:00.000Z', merchantId }), status: 'succeeded', amountCapturedMinor: 1000 }
      await db.payments.create(payment)
      return payment
    }
    const refund = async (payment: Payment, at: string, outcome: 'succeeded' | 'pending'): Promise<string> => {
      const id = `rf-${++n}`
      await db.refunds.create(payment.id, (p): RefundDecision => ({
        payment: reserveRefund(p, 100, at),
        refund: { id, paymentId: p.id, amountMinor: 100, currency: p.currency, status: 'pending', reason: null, failureCode: null, metadata: {}, createdAt: at, updatedAt: at }
      }))
      if (outcome === 'succeeded') await db.refunds.complete(id, (r, p) => ({ refund: transitionRefund(r, 'succeeded', at), payment: applySucceededRefund(p, r.amountMinor, at) }))
      return id
    }
    const [one, two, other] = [await paid('m-r'), await paid('m-r'), await paid('m-other')]
    const r1 = await refund(one, '2026-11-02T00:00:00.000Z', 'succeeded')
    const r2 = await refund(two, '2026-11-03T00:00:00.000Z', 'pending')
    const r3 = await refund(one, '2026-11-04T00:00:00.000Z', 'succeeded')
    await refund(other, '2026-11-05T00:00:00.000Z', 'succeeded')
    const ids = async (query: Partial<Parameters<Database['refunds']['listForMerchant']>[0]>) =>
      (await db.refunds.listForMerchant({ merchantId: 'm-r', limit: 10, ...query })).data.map((r) => r.id)
    t.same(await ids({}), [r3, r2, r1], 'newest first, both payments, not the other merchant\'s')
    t.same(await ids({ status: 'succeeded' }), [r3, r1])
    t.same(await ids({ createdGte: '2026-11-03T00:00:00.000Z', createdLt: '2026-11-04T00:00:00.000Z' }), [r2])
    const first = await db.refunds.listForMerchant({ merchantId: 'm-r', limit: 2 })
    t.same([first.data.map((r) => r.id), first.hasMore], [[r3, r2], true])
    t.same(await ids({ limit: 2, startingAfter: r2 }), [r1])
    t.same(await ids({ limit: 2, endingBefore: r1 }), [r3, r2])
    t.same((await db.refunds.listForMerchant({ merchantId: 'm-nobody', limit: 10 })).data, [])
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
