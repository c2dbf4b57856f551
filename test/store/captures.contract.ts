import type { Test } from 'tap'
import type { Database, IdempotencyKeyRef, Payment } from '../../src/store/types'
import { newPendingPayment, transition } from '../../src/domain/payments'
import { applyCapture, captureResourceId, releaseCapture, reserveCapture } from '../../src/domain/captures'
import type { NewEvent } from '../../src/domain/events'
import type { MakeDatabase } from './contract'
import { itemAt } from '../helpers/items'

/** The manual-capture part of the store contract (issue 24): both dialects run it unchanged. */
const T0 = Date.parse('2026-01-01T00:00:00Z')
const MINUTE = 60_000

let counter = 0
function nextId (prefix: string): string {
  counter++
  return `${prefix}-${process.pid}-${String(counter).padStart(6, '0')}`
}

async function fresh (t: Test, makeDatabase: MakeDatabase): Promise<Database> {
  const db = await makeDatabase()
  t.teardown(async () => { await db.close() })
  return db
}

/** An authorization (requires_capture) stored as the payment service stores it. */
async function authorization (db: Database, ttlSeconds = 3600): Promise<Payment> {
  const pending = newPendingPayment({ id: nextId('pay'), amountMinor: 1000, currency: 'USD', at: new Date(T0).toISOString(), captureMethod: 'manual', authorizationTtlSeconds: ttlSeconds, merchantId: 'm-1' })
  await db.payments.create(pending)
  return await db.payments.complete(transition(pending, 'requires_capture', new Date(T0).toISOString()))
}

const reserve = (amount?: number, now = T0 + MINUTE) => (payment: Payment, state: { voidInFlight: boolean }) =>
  reserveCapture(payment, { amount, voidInFlight: state.voidInFlight, now }, new Date(now).toISOString())

function event (payment: Payment): NewEvent {
  return { id: nextId('ev'), merchantId: 'm-1', type: 'payment.succeeded', resourceType: 'payment', resourceId: payment.id, data: {}, dataFormat: 'snapshot', createdAt: payment.updatedAt }
}

export function captureStoreContract (t: Test, makeDatabase: MakeDatabase): void {
  t.test('reserve: under the lock, once; the key records the capture; a refusal writes nothing', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = await authorization(db)
    t.match(await db.payments.get(payment.id), { status: 'requires_capture', captureMethod: 'manual', captureBefore: '2026-01-01T01:00:00.000Z', amountCapturedMinor: 0 })
    t.equal(await db.captures.reserve('missing', reserve(), { now: T0 }), undefined)
    t.equal(await db.captures.reserve(payment.id, reserve(), { now: T0, merchantId: 'm-2' }), undefined, 'another merchant\'s payment is not found')
    const ref: IdempotencyKeyRef = { scope: 'merchant:m-1', method: 'POST', path: '/api/payments/:id/capture', key: nextId('key') }
    await db.idempotency.claim({ ref, fingerprint: 'fp', now: T0, lockUntil: T0 + MINUTE, expiresAt: T0 + 60 * MINUTE })
    const reserved = await db.captures.reserve(payment.id, reserve(6), { now: T0 + MINUTE, key: ref })
    t.match(reserved, { capturePendingMinor: 600, captureAttempts: 1 })
    t.match(await db.payments.get(payment.id), { status: 'requires_capture', capturePendingMinor: 600, captureAttempts: 1 })
    t.match(await db.idempotency.get(ref), { recoveryPoint: 'resource_created', resourceId: captureResourceId(payment.id, 1) })
    await t.rejects(db.captures.reserve(payment.id, reserve(), { now: T0 + MINUTE }), { code: 'PAYMENT_NOT_CAPTURABLE' }, 'a capture in flight refuses another')
    t.match(await db.payments.get(payment.id), { capturePendingMinor: 600, captureAttempts: 1 }, 'the refusal wrote nothing')
  })

  t.test('settle: captured (with event and key) or released, only while a capture is reserved', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = await authorization(db)
    const reserved = await db.captures.reserve(payment.id, reserve(4), { now: T0 + MINUTE }) as Payment
    const released = await db.captures.settle(releaseCapture(reserved, new Date(T0 + 2 * MINUTE).toISOString()))
    t.match(released, { status: 'requires_capture', capturePendingMinor: null })
    t.match(await db.payments.get(payment.id), { status: 'requires_capture', capturePendingMinor: null, captureAttempts: 1 })
    const second = await db.captures.reserve(payment.id, reserve(7), { now: T0 + 3 * MINUTE }) as Payment
    t.equal(second.captureAttempts, 2, 'a new attempt after a refusal')
    const captured = applyCapture(second, 700, new Date(T0 + 4 * MINUTE).toISOString())
    t.same(await db.captures.settle(captured, undefined, event), captured)
    t.match(await db.payments.get(payment.id), { status: 'succeeded', amountCapturedMinor: 700, capturePendingMinor: null })
    const late = await db.captures.settle(applyCapture(second, 1000, new Date(T0 + 5 * MINUTE).toISOString()), undefined, event)
    t.match(late, { status: 'succeeded', amountCapturedMinor: 700 }, 'a second settlement changes nothing and answers what is stored')
    t.equal((await db.events.list({ merchantId: 'm-1', limit: 10 })).data.length, 1, 'one event')
  })

  t.test('voids: a hold excludes captures and other voids; expiry holds authorizations past captureBefore only', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = await authorization(db, 60)
    const later = await authorization(db, 3600)
    const hold = await db.captures.holdForVoid(payment.id, { now: T0, leaseUntil: T0 + MINUTE })
    t.match(hold, { held: true, payment: { id: payment.id } })
    t.match(await db.captures.holdForVoid(payment.id, { now: T0 + 1000, leaseUntil: T0 + MINUTE }), { held: false }, 'one void at a time')
    await t.rejects(db.captures.reserve(payment.id, reserve(undefined, T0 + 1000), { now: T0 + 1000 }), { code: 'PAYMENT_NOT_CAPTURABLE', message: /being canceled/ })
    await db.captures.releaseHold(payment.id)
    t.same(await db.captures.holdExpired({ now: T0 + 30_000, leaseUntil: T0 + 2 * MINUTE, limit: 10 }), [], 'none past captureBefore yet')
    const due = await db.captures.holdExpired({ now: T0 + 61_000, leaseUntil: T0 + 2 * MINUTE, limit: 10 })
    t.same(due.map((p) => p.id), [payment.id], 'only the one past captureBefore')
    t.same(await db.captures.holdExpired({ now: T0 + 62_000, leaseUntil: T0 + 2 * MINUTE, limit: 10 }), [], 'held: not taken twice')
    const canceled = transition(itemAt(due, 0), 'canceled', new Date(T0 + 62_000).toISOString(), 'authorization_expired')
    t.same(await db.captures.finishVoid(canceled, event), canceled)
    t.match(await db.payments.get(payment.id), { status: 'canceled', cancellationReason: 'authorization_expired' })
    t.match(await db.captures.finishVoid(canceled), { status: 'canceled' }, 'idempotent')
    await db.captures.reserve(later.id, reserve(), { now: T0 + MINUTE })
    t.match(await db.captures.holdForVoid(later.id, { now: T0 + MINUTE, leaseUntil: T0 + 2 * MINUTE }), { held: false }, 'a capture in flight excludes a void')
    const notVoided = await db.captures.finishVoid(transition(later, 'canceled', new Date(T0 + MINUTE).toISOString()))
    t.match(notVoided, { status: 'requires_capture', capturePendingMinor: 1000 }, 'the guarded write leaves a capturing payment alone')
    t.same(await db.captures.holdExpired({ now: T0 + 2 * 3600_000, leaseUntil: T0 + 3 * 3600_000, limit: 10 }), [], 'nor does the expiry take it')
  })

  t.test('leaseInFlight: captures in flight since before the age, their key locked; a key held by a live request is left alone', async (t) => {
    const db = await fresh(t, makeDatabase)
    const stuck = await authorization(db)
    const live = await authorization(db)
    await db.captures.reserve(stuck.id, reserve(), { now: T0 + MINUTE })
    const ref: IdempotencyKeyRef = { scope: 'merchant:m-1', method: 'POST', path: '/api/payments/:id/capture', key: nextId('key') }
    await db.idempotency.claim({ ref, fingerprint: 'fp', now: T0 + MINUTE, lockUntil: T0 + 100 * MINUTE, expiresAt: T0 + 200 * MINUTE })
    await db.captures.reserve(live.id, reserve(), { now: T0 + MINUTE, key: ref })
    t.same(await db.captures.leaseInFlight({ updatedBefore: new Date(T0).toISOString(), now: T0 + 2 * MINUTE, leaseUntil: T0 + 3 * MINUTE, limit: 10 }), [], 'too recent')
    const leased = await db.captures.leaseInFlight({ updatedBefore: new Date(T0 + 2 * MINUTE).toISOString(), now: T0 + 2 * MINUTE, leaseUntil: T0 + 3 * MINUTE, limit: 10 })
    t.same(leased.map((p) => p.id), [stuck.id], 'the live request\'s capture is not leased')
    t.same(await db.captures.leaseInFlight({ updatedBefore: new Date(T0 + 2 * MINUTE).toISOString(), now: T0 + 2 * MINUTE + 1, leaseUntil: T0 + 3 * MINUTE, limit: 10 }), [], 'leased once')
    const afterLock = await db.captures.leaseInFlight({ updatedBefore: new Date(T0 + 2 * MINUTE).toISOString(), now: T0 + 101 * MINUTE, leaseUntil: T0 + 102 * MINUTE, limit: 10 })
    t.same(afterLock.map((p) => p.id).sort(), [stuck.id, live.id].sort(), 'once the request\'s lock and the lease ended')
    t.equal((await db.idempotency.get(ref))?.lockedUntil, T0 + 102 * MINUTE, 'its key is locked for the lease')
  })
}
