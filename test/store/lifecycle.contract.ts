import type { Test } from 'tap'
import type { Database, Payment, Refund, RefundDecision } from '../../src/store/types'
import { applySucceededRefund, newPendingPayment, releaseFailedRefund, reserveRefund } from '../../src/domain/payments'
import { transitionRefund } from '../../src/domain/refunds'
import type { MakeDatabase } from './contract'
import { itemAt } from '../helpers/items'

/**
 * The payment-lifecycle part of the store contract (issue 13): refunds held
 * under the payment's lock, cursor listing, metadata, recovery back-off.
 */
const T0 = Date.parse('2026-01-01T00:00:00Z')
const MINUTE = 60_000

async function fresh (t: Test, makeDatabase: MakeDatabase): Promise<Database> {
  const db = await makeDatabase()
  t.teardown(async () => { await db.close() })
  return db
}

let counter = 0
function nextId (prefix: string): string {
  counter++
  return `${prefix}-${process.pid}-${String(counter).padStart(6, '0')}`
}

function iso (ms: number): string {
  return new Date(ms).toISOString()
}

function succeededPayment (overrides: Partial<Payment> = {}): Payment {
  return { ...newPendingPayment({ id: nextId('pay'), amountMinor: 1000, currency: 'USD', at: iso(T0) }), status: 'succeeded', amountCapturedMinor: 1000, ...overrides }
}

function refundOf (payment: Payment, amountMinor: number, at = iso(T0 + 1000)): Refund {
  return { id: nextId('re'), paymentId: payment.id, amountMinor, currency: payment.currency, status: 'pending', reason: null, failureCode: null, metadata: {}, createdAt: at, updatedAt: at }
}

/** The decision the refund service makes under the lock. */
function reserve (amountMinor: number, at = iso(T0 + 1000)) {
  return (payment: Payment): RefundDecision => ({ payment: reserveRefund(payment, amountMinor, at), refund: refundOf(payment, amountMinor, at) })
}

function succeed (at = iso(T0 + 2000)) {
  return (refund: Refund, payment: Payment): RefundDecision => ({
    refund: transitionRefund(refund, 'succeeded', at),
    payment: applySucceededRefund(payment, refund.amountMinor, at)
  })
}

export function lifecycleStoreContract (t: Test, makeDatabase: MakeDatabase): void {
  t.test('customer-present payments (issue 37): return URL, action token and next action round-trip; complete moves from requires_action only when asked to', async (t) => {
    const db = await fresh(t, makeDatabase)
    const token = `tok-${nextId('a')}`
    const payment = newPendingPayment({ id: nextId('pay'), amountMinor: 600100, currency: 'EUR', at: iso(T0), merchantId: 'm-1', returnUrl: 'https://shop.example.com/done?o=1', actionToken: token })
    await db.payments.create(payment)
    t.same(await db.payments.get(payment.id), payment)
    const waiting: Payment = {
      ...payment,
      status: 'requires_action',
      nextAction: { type: 'redirect', url: 'https://bank.example.com/3ds?x=1', method: 'POST', data: { PaReq: 'abc', MD: 'def' } },
      connectorReference: 'ch_1',
      attempts: [{ connectorId: null, connectorType: 'simulated', outcome: 'requires_action', code: null, at: iso(T0 + 1) }],
      updatedAt: iso(T0 + 1)
    }
    t.same(await db.payments.complete(waiting), waiting, 'pending → requires_action, with its next action')
    t.same(await db.payments.findByActionToken(token), waiting, 'found by its token')
    t.equal(await db.payments.findByActionToken('tok-unknown'), undefined)
    t.same((await db.payments.awaitingAction({ updatedBefore: iso(T0 + 2), limit: 10 })).map((p) => p.id), [payment.id])
    t.same(await db.payments.awaitingAction({ updatedBefore: iso(T0 + 1), limit: 10 }), [], 'only those unchanged since before the cut-off')
    const succeeded: Payment = { ...waiting, status: 'succeeded', amountCapturedMinor: 600100, nextAction: null, updatedAt: iso(T0 + 3) }
    t.same(await db.payments.complete(succeeded), waiting, 'a completion from pending does not move a payment waiting for its shopper')
    t.same(await db.payments.complete(succeeded, undefined, undefined, 'requires_action'), succeeded, 'requires_action → succeeded')
    const declined: Payment = { ...waiting, status: 'declined', declineCode: 'authentication_failed', nextAction: null, updatedAt: iso(T0 + 4) }
    t.same(await db.payments.complete(declined, undefined, undefined, 'requires_action'), succeeded, 'the first settlement wins (a late webhook or return)')
    t.same(await db.payments.awaitingAction({ updatedBefore: iso(T0 + 10), limit: 10 }), [])
  })

  t.test('payments: lifecycle columns and metadata round-trip exactly', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = { ...newPendingPayment({ id: nextId('pay'), amountMinor: 500, currency: 'EUR', at: iso(T0), metadata: { orderId: 'A-1', ünïcödé: '✓', zeta: '', alpha: 'first' }, merchantId: 'm-1' }) }
    await db.payments.create(payment)
    const stored = await db.payments.get(payment.id)
    t.same(stored, payment)
    t.same(Object.keys(stored?.metadata ?? {}), ['orderId', 'ünïcödé', 'zeta', 'alpha'], 'key order as sent')
    const failed = { ...payment, status: 'failed' as const, failureCode: 'pending_expired', updatedAt: iso(T0 + 1) }
    t.same(await db.payments.complete(failed), failed, 'complete stores failureCode')
  })

  t.test('refunds: create holds the money under the lock; complete moves refund and payment', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = succeededPayment()
    await db.payments.create(payment)
    t.equal(await db.refunds.create('nope', reserve(100)), undefined, 'unknown payment')
    const created = await db.refunds.create(payment.id, reserve(300))
    t.match(created?.payment, { refundPendingMinor: 300, amountRefundedMinor: 0, status: 'succeeded' })
    t.match(await db.payments.get(payment.id), { refundPendingMinor: 300 })
    const refund = created?.refund as Refund
    t.same(await db.refunds.get(payment.id, refund.id), refund)
    t.equal(await db.refunds.get('other-payment', refund.id), undefined, 'a refund is only found under its payment')

    const done = await db.refunds.complete(refund.id, succeed())
    t.match(done, { refund: { status: 'succeeded' }, payment: { status: 'partially_refunded', amountRefundedMinor: 300, refundPendingMinor: 0 } })
    t.match(await db.payments.get(payment.id), { status: 'partially_refunded', amountRefundedMinor: 300, refundPendingMinor: 0 })
    const again = await db.refunds.complete(refund.id, () => { throw new Error('must not be called for a settled refund') })
    t.match(again, { refund: { status: 'succeeded' } }, 'a settled refund is left as it is')

    const rest = await db.refunds.create(payment.id, reserve(700)) as RefundDecision
    await db.refunds.complete(rest.refund.id, succeed())
    t.match(await db.payments.get(payment.id), { status: 'refunded', amountRefundedMinor: 1000 })
    await t.rejects(db.refunds.create(payment.id, reserve(1)), { code: 'PAYMENT_NOT_REFUNDABLE' })
  })

  t.test('refunds: a failed refund releases its hold; a refused decision writes nothing', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = succeededPayment()
    await db.payments.create(payment)
    await t.rejects(db.refunds.create(payment.id, reserve(1001)), { code: 'REFUND_EXCEEDS_REMAINING' })
    t.same(await db.refunds.list(payment.id, { limit: 10 }), { data: [], hasMore: false }, 'no refund row')
    const { refund } = await db.refunds.create(payment.id, reserve(1000)) as RefundDecision
    await t.rejects(db.refunds.create(payment.id, reserve(1)), { code: 'REFUND_EXCEEDS_REMAINING' }, 'the pending refund holds everything')
    const failed = await db.refunds.complete(refund.id, (r, p) => ({ refund: transitionRefund(r, 'failed', iso(T0 + 5), 'refund_declined'), payment: releaseFailedRefund(p, r.amountMinor, iso(T0 + 5)) }))
    t.match(failed, { refund: { status: 'failed', failureCode: 'refund_declined' }, payment: { status: 'succeeded', refundPendingMinor: 0, amountRefundedMinor: 0 } })
    t.ok(await db.refunds.create(payment.id, reserve(1000)), 'the money can be refunded again')
  })

  t.test('refunds: 20 concurrent 1.00 refunds of a 10.00 payment: exactly 10 are held', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = succeededPayment({ amountMinor: 1000 })
    await db.payments.create(payment)
    const results = await Promise.allSettled(Array.from({ length: 20 }, async () => await db.refunds.create(payment.id, reserve(100))))
    t.equal(results.filter((r) => r.status === 'fulfilled').length, 10)
    t.ok(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason.code === 'REFUND_EXCEEDS_REMAINING'))
    t.match(await db.payments.get(payment.id), { refundPendingMinor: 1000 })
    const all = await db.refunds.list(payment.id, { limit: 100 })
    t.equal(all.data.length, 10)
    await Promise.all(all.data.map(async (refund) => await db.refunds.complete(refund.id, succeed())))
    t.match(await db.payments.get(payment.id), { status: 'refunded', amountRefundedMinor: 1000, refundPendingMinor: 0 })
  })

  t.test('refunds: create with merchantId only finds that merchant\'s payment; a key records the refund', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = succeededPayment({ merchantId: 'm-1' })
    await db.payments.create(payment)
    t.equal(await db.refunds.create(payment.id, reserve(100), { merchantId: 'm-2' }), undefined)
    const ref = { scope: 'm-1', method: 'POST', path: '/api/payments/:id/refunds', key: nextId('k') }
    await db.idempotency.claim({ ref, fingerprint: 'fp', now: T0, lockUntil: T0 + MINUTE, expiresAt: T0 + 60 * MINUTE })
    const created = await db.refunds.create(payment.id, reserve(100), { merchantId: 'm-1', key: ref }) as RefundDecision
    t.match(await db.idempotency.get(ref), { recoveryPoint: 'resource_created', resourceId: created.refund.id })
    t.equal(await db.idempotency.reap(T0 + 2 * 60 * MINUTE), 0, 'the key of a pending refund is kept')
    const response = { statusCode: 201, headers: {}, body: '{}' }
    await db.refunds.complete(created.refund.id, succeed(), { ref, response })
    t.match(await db.idempotency.get(ref), { recoveryPoint: 'finished', response: { statusCode: 201 } })
    t.equal(await db.idempotency.reap(T0 + 2 * 60 * MINUTE), 1)
  })

  t.test('refunds: leasePending leases old pending refunds once', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = succeededPayment()
    await db.payments.create(payment)
    const old = await db.refunds.create(payment.id, reserve(100, iso(T0 - 10 * MINUTE))) as RefundDecision
    await db.refunds.create(payment.id, reserve(100, iso(T0)))
    const options = { createdBefore: iso(T0 - MINUTE), now: T0, leaseUntil: T0 + MINUTE, limit: 10 }
    t.same((await db.refunds.leasePending(options)).map((r) => r.id), [old.refund.id])
    t.same(await db.refunds.leasePending(options), [], 'not twice while leased')
    t.same((await db.refunds.leasePending({ ...options, now: T0 + 2 * MINUTE })).map((r) => r.id), [old.refund.id], 'again after the lease')
    await db.refunds.complete(old.refund.id, succeed())
    t.same(await db.refunds.leasePending({ ...options, now: T0 + 5 * MINUTE }), [], 'settled refunds are not leased')
  })

  t.test('payments: deferRecovery keeps a pending payment out of leaseAbandoned until then', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = newPendingPayment({ id: nextId('pay'), amountMinor: 100, currency: 'USD', at: iso(T0 - 10 * MINUTE) })
    await db.payments.create(payment)
    const options = { createdBefore: iso(T0), now: T0, leaseUntil: T0 + MINUTE, limit: 10 }
    t.equal((await db.payments.leaseAbandoned(options)).length, 1)
    await db.payments.deferRecovery(payment.id, T0 + 10 * MINUTE)
    t.same(await db.payments.leaseAbandoned({ ...options, now: T0 + 5 * MINUTE }), [], 'deferred')
    t.equal((await db.payments.leaseAbandoned({ ...options, now: T0 + 10 * MINUTE })).length, 1, 'due again')
  })

  t.test('listing: newest first, cursors both ways, no skip or repeat while payments arrive', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payments: Payment[] = []
    // Five share one timestamp: the id breaks the tie.
    for (let i = 0; i < 25; i++) {
      const payment = succeededPayment({ createdAt: iso(T0 + (i < 5 ? 0 : i) * 1000), merchantId: 'm-1' })
      payments.push(payment)
      await db.payments.create(payment)
    }
    await db.payments.create(succeededPayment({ merchantId: 'm-2', createdAt: iso(T0 + 500) }))
    const order = [...payments].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id)).map((p) => p.id)

    const seen: string[] = []
    let page = await db.payments.list({ merchantId: 'm-1', limit: 10 })
    seen.push(...page.data.map((p) => p.id))
    t.equal(page.hasMore, true)
    // A new payment arrives between pages: it is newer than everything, so later pages never show it.
    await db.payments.create(succeededPayment({ createdAt: iso(T0 + 100_000), merchantId: 'm-1' }))
    while (page.hasMore) {
      page = await db.payments.list({ merchantId: 'm-1', limit: 10, startingAfter: itemAt(seen, seen.length - 1) })
      seen.push(...page.data.map((p) => p.id))
    }
    t.same(seen, order, 'every payment once, in order')

    const back = await db.payments.list({ merchantId: 'm-1', limit: 3, endingBefore: itemAt(order, 10) })
    t.same(back.data.map((p) => p.id), order.slice(7, 10), 'endingBefore: the page just before, still newest first')
    t.equal(back.hasMore, true)
    t.same((await db.payments.list({ merchantId: 'm-1', limit: 100, endingBefore: itemAt(order, 2) })).data.map((p) => p.id).slice(-2), order.slice(0, 2))

    await t.rejects(db.payments.list({ merchantId: 'm-2', limit: 10, startingAfter: itemAt(order, 0) }), { code: 'VALIDATION' }, 'another merchant\'s payment is no cursor')
    await t.rejects(db.payments.list({ limit: 10, startingAfter: 'nope' }), { code: 'VALIDATION' })
    t.equal((await db.payments.list({ limit: 100 })).data.length, 27, 'no merchant: every payment')
  })

  t.test('listing: status and created range filters', async (t) => {
    const db = await fresh(t, makeDatabase)
    const a = succeededPayment({ createdAt: iso(T0) })
    const b = succeededPayment({ createdAt: iso(T0 + 1000), status: 'declined', declineCode: 'card_declined' })
    const c = succeededPayment({ createdAt: iso(T0 + 2000) })
    for (const p of [a, b, c]) await db.payments.create(p)
    t.same((await db.payments.list({ limit: 10, status: 'succeeded' })).data.map((p) => p.id), [c.id, a.id])
    t.same((await db.payments.list({ limit: 10, createdGte: iso(T0 + 1000) })).data.map((p) => p.id), [c.id, b.id], 'gte is inclusive')
    t.same((await db.payments.list({ limit: 10, createdLt: iso(T0 + 2000) })).data.map((p) => p.id), [b.id, a.id], 'lt is exclusive')
    t.same((await db.payments.list({ limit: 1, status: 'succeeded', startingAfter: c.id })), { data: [a], hasMore: false })
  })

  t.test('listing: refunds of one payment and merchants', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = succeededPayment()
    await db.payments.create(payment)
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push((await db.refunds.create(payment.id, reserve(100, iso(T0 + i * 1000))) as RefundDecision).refund.id)
    const first = await db.refunds.list(payment.id, { limit: 3 })
    t.same(first.data.map((r) => r.id), ids.slice(1).reverse())
    t.equal(first.hasMore, true)
    t.same(await db.refunds.list(payment.id, { limit: 3, startingAfter: itemAt(ids, 1) }), { data: [await db.refunds.get(payment.id, itemAt(ids, 0))], hasMore: false })

    for (let i = 0; i < 3; i++) {
      await db.merchants.create({ id: nextId('m'), name: `M${i}`, email: `list-${i}-${counter}@example.com`, country: null, defaultCurrency: null, status: 'active', metadata: { i: String(i) }, apiVersion: '2026-11-25', version: 1, createdAt: iso(T0 + i), updatedAt: iso(T0 + i) })
    }
    const merchants = await db.merchants.list({ limit: 2 })
    t.same(merchants.data.map((m) => m.name), ['M2', 'M1'])
    t.same(itemAt(merchants.data, 0).metadata, { i: '2' })
    t.same((await db.merchants.list({ limit: 2, startingAfter: itemAt(merchants.data, 1).id })).data.map((m) => m.name), ['M0'])
  })
}
