import type { Test } from 'tap'
import type { ClaimRequest, Database, IdempotencyKeyRef, Payment, StoredResponse } from '../../src/store/types'
import { newPendingPayment } from '../../src/domain/payments'
import { lifecycleStoreContract } from './lifecycle.contract'
import { captureStoreContract } from './captures.contract'
import { paymentCreation } from '../../src/store/rows'

/**
 * The store contract, independent of the database: SQLite (test/store/sqlite/index.test.ts)
 * and PostgreSQL (test/store/postgres/index.test.ts) run these unchanged. `makeDatabase`
 * returns a fresh, empty, migrated database; it is closed here. Merchants have
 * their own contract in merchants.contract.ts.
 */
export type MakeDatabase = () => Promise<Database>

const T0 = Date.parse('2026-01-01T00:00:00Z')
const MINUTE = 60_000
const HOUR = 60 * MINUTE

async function fresh (t: Test, makeDatabase: MakeDatabase): Promise<Database> {
  const db = await makeDatabase()
  t.teardown(async () => { await db.close() })
  return db
}

let counter = 0
function uniqueId (prefix: string): string {
  counter++
  return `${prefix}-${process.pid}-${counter}`
}

function iso (ms: number): string {
  return new Date(ms).toISOString()
}

function pendingPayment (overrides: Partial<Payment> = {}): Payment {
  return { ...newPendingPayment({ id: uniqueId('pay'), amountMinor: 1234, currency: 'USD', at: iso(T0) }), ...overrides }
}

function keyRef (key = uniqueId('key')): IdempotencyKeyRef {
  return { scope: '', method: 'POST', path: '/api/payments', key }
}

function claimRequest (ref: IdempotencyKeyRef, overrides: Partial<Omit<ClaimRequest, 'ref'>> = {}): ClaimRequest {
  const now = overrides.now ?? T0
  return { ref, fingerprint: 'fp-1', now, lockUntil: now + MINUTE, expiresAt: now + 24 * HOUR, ...overrides }
}

function response (body = '{"ok":true}'): StoredResponse {
  return { statusCode: 201, headers: { 'content-type': 'application/json; charset=utf-8', location: '/api/payments/x' }, body }
}

export function productStoreContract (t: Test, makeDatabase: MakeDatabase): void {
  t.test('put creates, get returns it; unknown ids are undefined', async (t) => {
    const db = await fresh(t, makeDatabase)
    t.equal(await db.products.get('nope'), undefined)
    const stored = await db.products.put({ id: 'p-1', name: 'Desk lamp', price: 12.34 })
    t.same(stored, { id: 'p-1', name: 'Desk lamp', price: 12.34 })
    t.same(await db.products.get('p-1'), { id: 'p-1', name: 'Desk lamp', price: 12.34 })
  })

  t.test('put replaces the whole product', async (t) => {
    const db = await fresh(t, makeDatabase)
    await db.products.put({ id: 'p-1', name: 'Old', price: 1 })
    t.same(await db.products.put({ id: 'p-1', name: 'New', price: 0.1 }), { id: 'p-1', name: 'New', price: 0.1 })
    t.same(await db.products.get('p-1'), { id: 'p-1', name: 'New', price: 0.1 }, 'floating point survives exactly')
  })
}

export function ledgerStoreContract (t: Test, makeDatabase: MakeDatabase): void {
  t.test('recordOnce stores once per key and returns the first entry every time', async (t) => {
    const db = await fresh(t, makeDatabase)
    t.equal(await db.ledger.get('k-1'), undefined)
    const first = { idempotencyKey: 'k-1', chargeId: 'ch_1', amountMinor: 12_345_678_901_234, currency: 'USD', outcome: 'succeeded' as const, declineCode: null }
    t.same(await db.ledger.recordOnce(first), first, 'amounts beyond 32 bits come back as exact numbers')
    const again = await db.ledger.recordOnce({ ...first, chargeId: 'ch_2', outcome: 'declined', declineCode: 'card_declined' })
    t.same(again, first, 'the second record is ignored')
    t.same(await db.ledger.get('k-1'), first)
    t.equal(await db.ledger.count(), 1)
  })

  t.test('concurrent recordOnce on one key: one entry, everyone sees it', async (t) => {
    const db = await fresh(t, makeDatabase)
    const results = await Promise.all(Array.from({ length: 20 }, async (_, i) => await db.ledger.recordOnce({
      idempotencyKey: 'k-race', chargeId: `ch_${i}`, amountMinor: 100, currency: 'EUR', outcome: 'succeeded', declineCode: null
    })))
    t.equal(new Set(results.map((entry) => entry.chargeId)).size, 1)
    t.equal(await db.ledger.count(), 1)
  })
}

export function paymentStoreContract (t: Test, makeDatabase: MakeDatabase): void {
  t.test('create without a key, get, count; unknown ids are undefined', async (t) => {
    const db = await fresh(t, makeDatabase)
    t.equal(await db.payments.count(), 0)
    const payment = pendingPayment({ amountMinor: 9_007_199_254_740 })
    await db.payments.create(payment)
    t.same(await db.payments.get(payment.id), payment, 'exact round trip, BIGINT money as a number')
    t.equal(await db.payments.get('nope'), undefined)
    t.equal(await db.payments.count(), 1)
    await t.rejects(db.payments.create(payment), 'a duplicate id is refused')
  })

  t.test('appendAttempt adds to a payment in any status, only over the attempts it read; withMoneyHeld lists those holding money', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = pendingPayment()
    await db.payments.create(payment)
    const settled = { ...payment, status: 'canceled' as const, updatedAt: iso(T0 + 1) }
    await db.payments.complete(settled)
    const stored = await db.payments.get(payment.id)
    if (stored === undefined) return t.fail('the payment was not stored')
    const held = { connectorId: null, connectorType: 'simulated' as const, outcome: 'held' as const, code: 'succeeded', at: iso(T0 + 2), connectorReference: 'ch_1' }
    t.equal(await db.payments.appendAttempt(stored, held), true, 'added to a canceled payment')
    t.equal(await db.payments.appendAttempt(stored, held), false, 'not over attempts that changed since they were read')
    const holding = await db.payments.get(payment.id)
    t.match(holding, { status: 'canceled', attempts: [held], updatedAt: held.at })
    t.same((await db.payments.withMoneyHeld(10)).map((each) => each.id), [payment.id])
    if (holding === undefined) return
    t.equal(await db.payments.appendAttempt(holding, { ...held, outcome: 'released', code: 'refunded', at: iso(T0 + 3) }), true)
    t.same(await db.payments.withMoneyHeld(10), [], 'given back: no longer listed')
  })

  t.test('countPending counts only the payments still pending', async (t) => {
    const db = await fresh(t, makeDatabase)
    t.equal(await db.payments.countPending(), 0)
    const first = pendingPayment()
    const second = pendingPayment()
    await db.payments.create(first)
    await db.payments.create(second)
    t.equal(await db.payments.countPending(), 2)
    await db.payments.complete({ ...first, status: 'succeeded', updatedAt: iso(T0 + 1000) })
    t.equal(await db.payments.countPending(), 1)
    t.equal(await db.payments.count(), 2)
  })

  t.test('create with a key records the recovery point in the same step', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    await db.idempotency.claim(claimRequest(ref))
    const payment = pendingPayment()
    await db.payments.create(payment, ref)
    t.match(await db.idempotency.get(ref), { recoveryPoint: 'resource_created', resourceId: payment.id })
    t.match(await db.idempotency.findByResource(payment.id), { ...ref, resourceId: payment.id })
  })

  t.test('complete moves a pending payment once and stores the key response with it', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    await db.idempotency.claim(claimRequest(ref))
    const payment = pendingPayment()
    await db.payments.create(payment, ref)
    const succeeded: Payment = { ...payment, status: 'succeeded', updatedAt: iso(T0 + 1000) }
    t.same(await db.payments.complete(succeeded, { ref, response: response('first') }), succeeded)
    t.match(await db.idempotency.get(ref), { recoveryPoint: 'finished', lockedUntil: null, response: { statusCode: 201, body: 'first' } })

    const late: Payment = { ...payment, status: 'declined', declineCode: 'card_declined', updatedAt: iso(T0 + 2000) }
    t.same(await db.payments.complete(late, { ref, response: response('second') }), succeeded, 'guarded: only from pending; returns what is stored')
    t.match(await db.idempotency.get(ref), { response: { body: 'first' } }, 'a finished key keeps its first response')
  })

  t.test('complete with a charge call writes its log row in the same write, also when another completion won', async (t) => {
    const db = await fresh(t, makeDatabase)
    // The log is by merchant (the call's merchantId); the payment itself may have none.
    const merchantId = uniqueId('merchant')
    const payment = pendingPayment()
    await db.payments.create(payment)
    const call = (outcome: 'succeeded' | 'declined', at: number) => ({
      id: uniqueId('call'),
      paymentId: payment.id,
      merchantId,
      connectorId: null,
      connectorType: 'simulated' as const,
      outcome,
      code: outcome === 'declined' ? 'card_declined' : null,
      startedAt: iso(at),
      answeredAt: iso(at + 40),
      durationMs: 40
    })
    const succeeded: Payment = { ...payment, status: 'succeeded', updatedAt: iso(T0 + 1000) }
    t.same(await db.payments.complete(succeeded, undefined, undefined, 'pending', call('succeeded', T0 + 900)), succeeded)
    const late: Payment = { ...payment, status: 'declined', declineCode: 'card_declined', updatedAt: iso(T0 + 2000) }
    t.same(await db.payments.complete(late, undefined, undefined, 'pending', call('declined', T0 + 1900)), succeeded, 'the first completion stands')
    const [figures] = await db.connectors.attemptStats({ merchantId, createdGte: iso(T0), createdLt: iso(T0 + HOUR) })
    t.match(figures, { connectorId: null, connectorType: 'simulated', counts: { succeeded: 1, declined: 1 }, p50Ms: 40 }, 'both calls happened: both are logged')

    // One write: a completion that fails (a status the table refuses) leaves no call row either.
    const other = pendingPayment()
    await db.payments.create(other)
    const refused = { ...call('succeeded', T0 + 3000), paymentId: other.id, merchantId: uniqueId('merchant') }
    await t.rejects(db.payments.complete({ ...other, status: 'bogus' as Payment['status'], updatedAt: iso(T0 + 3000) }, undefined, undefined, 'pending', refused))
    t.same(await db.connectors.attemptStats({ merchantId: refused.merchantId, createdGte: iso(T0), createdLt: iso(T0 + HOUR) }), [], 'the failed completion wrote no call row')
    t.match(await db.payments.get(other.id), { status: 'pending' })
  })

  t.test('complete without a key; concurrent completions: exactly one wins', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payment = pendingPayment()
    await db.payments.create(payment)
    const outcomes = await Promise.all(Array.from({ length: 10 }, async (_, i) => await db.payments.complete(
      i % 2 === 0
        ? { ...payment, status: 'succeeded', updatedAt: iso(T0 + i) }
        : { ...payment, status: 'declined', declineCode: 'card_declined', updatedAt: iso(T0 + i) }
    )))
    const stored = await db.payments.get(payment.id)
    t.not(stored?.status, 'pending')
    t.ok(outcomes.every((outcome) => outcome.status === stored?.status && outcome.updatedAt === stored?.updatedAt), 'every caller sees the winner')
  })

  t.test('leaseAbandoned leases old pending payments once, with their keys', async (t) => {
    const db = await fresh(t, makeDatabase)
    const old = pendingPayment({ createdAt: iso(T0 - 10 * MINUTE) })
    const older = pendingPayment({ createdAt: iso(T0 - 20 * MINUTE) })
    const young = pendingPayment({ createdAt: iso(T0 - 10) })
    const settled = pendingPayment({ createdAt: iso(T0 - 30 * MINUTE), status: 'succeeded' })
    const ref = keyRef()
    await db.idempotency.claim(claimRequest(ref, { now: T0 - 10 * MINUTE, owner: 'crashed-instance' }))
    await db.payments.create(old, ref)
    for (const payment of [older, young, settled]) await db.payments.create(payment)

    const options = { createdBefore: iso(T0 - MINUTE), now: T0, leaseUntil: T0 + 5 * MINUTE, limit: 10 }
    const leased = await db.payments.leaseAbandoned(options)
    t.same(leased.map((p) => p.id), [older.id, old.id], 'pending, old enough, oldest first')
    t.same(leased[1], old)
    t.equal((await db.idempotency.get(ref))?.lockedUntil, T0 + 5 * MINUTE, 'the key is locked for the lease')
    t.equal((await db.idempotency.get(ref))?.lockedBy, null, 'the lease names no holder: no claim takes it over from the crashed request\'s instance')
    t.match(await db.idempotency.claim(claimRequest(ref, { now: T0 + MINUTE, owner: 'other', takeoverBefore: T0 })), { kind: 'in_flight' }, 'clients get in_flight meanwhile')

    t.same(await db.payments.leaseAbandoned({ ...options, now: T0 + MINUTE }), [], 'never leased twice while the lease runs')
    const after = await db.payments.leaseAbandoned({ ...options, now: T0 + 6 * MINUTE, leaseUntil: T0 + 11 * MINUTE })
    t.same(after.map((p) => p.id), [older.id, old.id], 'leased again once the lease ran out')

    t.same((await db.payments.leaseAbandoned({ ...options, now: T0 + 12 * MINUTE, limit: 1 })).map((p) => p.id), [older.id], 'limit')
    await db.payments.complete({ ...old, status: 'succeeded', updatedAt: iso(T0) })
    t.same(await db.payments.leaseAbandoned({ ...options, now: T0 + 20 * MINUTE }), [older].map((p) => ({ ...p })), 'settled payments are not leased')
  })

  t.test('leaseAbandoned skips a payment whose key a live request holds', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    await db.idempotency.claim(claimRequest(ref, { now: T0 - 10 * MINUTE }))
    const payment = pendingPayment({ createdAt: iso(T0 - 10 * MINUTE) })
    await db.payments.create(payment, ref)
    // A retry resumes the key just now: it holds it until T0 + 1 minute.
    await db.idempotency.release(ref)
    t.match(await db.idempotency.claim(claimRequest(ref, { now: T0 })), { kind: 'resumed' })

    const options = { createdBefore: iso(T0 - MINUTE), now: T0 + 30_000, leaseUntil: T0 + 5 * MINUTE, limit: 10 }
    t.same(await db.payments.leaseAbandoned(options), [], 'skipped while the key is locked')
    t.equal((await db.idempotency.get(ref))?.lockedUntil, T0 + MINUTE, 'the live lock is untouched')
    t.same((await db.payments.leaseAbandoned({ ...options, now: T0 + 2 * MINUTE })).map((p) => p.id), [payment.id], 'leased once the lock expired')
  })

  t.test('concurrent leaseAbandoned calls never lease the same payment twice', async (t) => {
    const db = await fresh(t, makeDatabase)
    const payments = Array.from({ length: 30 }, (_, i) => pendingPayment({ createdAt: iso(T0 - HOUR + i) }))
    for (const payment of payments) await db.payments.create(payment)
    const options = { createdBefore: iso(T0), now: T0, leaseUntil: T0 + MINUTE, limit: 7 }
    const batches = await Promise.all(Array.from({ length: 6 }, async () => await db.payments.leaseAbandoned(options)))
    const ids = batches.flat().map((p) => p.id)
    t.equal(new Set(ids).size, ids.length, 'no payment in two batches')
    t.equal(ids.length, 30, 'all of them leased between the workers')
  })
}

export function idempotencyStoreContract (t: Test, makeDatabase: MakeDatabase): void {
  t.test('claim of a fresh key is new, locked and started', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    const result = await db.idempotency.claim(claimRequest(ref))
    t.equal(result.kind, 'new')
    t.same(result.record, {
      ...ref,
      fingerprint: 'fp-1',
      recoveryPoint: 'started',
      resourceId: null,
      response: null,
      lockedUntil: T0 + MINUTE,
      lockedBy: null,
      createdAt: T0,
      expiresAt: T0 + 24 * HOUR
    })
    t.same(await db.idempotency.get(ref), result.record)
    t.equal(await db.idempotency.get(keyRef('other')), undefined)
    t.equal(await db.idempotency.findByResource('nothing'), undefined)
  })

  t.test('a claim with a creation writes the resource in its transaction only when it owns a key without one', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    const payment = pendingPayment()
    const created = await db.idempotency.claim(claimRequest(ref), paymentCreation(payment))
    t.equal(created.kind, 'created', 'create-under-key: the claim says it wrote the resource')
    t.match(created.record, { recoveryPoint: 'resource_created', resourceId: payment.id, lockedUntil: T0 + MINUTE, response: null })
    t.same(await db.idempotency.get(ref), created.record, 'the record returned is the one stored')
    t.same(await db.payments.get(payment.id), payment, 'the pending payment is stored')

    const other = pendingPayment()
    t.match(await db.idempotency.claim(claimRequest(ref, { now: T0 + 1000 }), paymentCreation(other)), { kind: 'in_flight' })
    t.match(await db.idempotency.claim(claimRequest(ref, { now: T0 + 1000, fingerprint: 'fp-2' }), paymentCreation(other)), { kind: 'mismatch' })
    await db.idempotency.release(ref)
    const resumed = await db.idempotency.claim(claimRequest(ref, { now: T0 + 2000 }), paymentCreation(other))
    t.match(resumed, { kind: 'resumed', record: { recoveryPoint: 'resource_created', resourceId: payment.id } }, 'a resumed key keeps its payment')
    await db.idempotency.finish(ref, response())
    t.match(await db.idempotency.claim(claimRequest(ref, { now: T0 + 3000 }), paymentCreation(other)), { kind: 'replay' })
    t.equal(await db.payments.get(other.id), undefined, 'no other outcome writes the payment')
    t.equal(await db.payments.count(), 1)

    // A key left at 'started' (claimed without a creation, its request gone) gets the payment when resumed.
    const started = keyRef()
    await db.idempotency.claim(claimRequest(started))
    const late = await db.idempotency.claim(claimRequest(started, { now: T0 + 2 * MINUTE }), paymentCreation(other))
    t.match(late, { kind: 'created', record: { recoveryPoint: 'resource_created', resourceId: other.id } }, 'a resumed key without a resource: the claim writes it')
    t.match(await db.idempotency.get(started), { recoveryPoint: 'resource_created', resourceId: other.id })
    t.same(await db.payments.get(other.id), other)
  })

  t.test('a claim whose resource cannot be written leaves neither the key nor the resource', async (t) => {
    const db = await fresh(t, makeDatabase)
    const existing = pendingPayment()
    await db.payments.create(existing)
    const ref = keyRef()
    // The same payment id again: the insert fails, and the key's insert is undone with it.
    await t.rejects(db.idempotency.claim(claimRequest(ref), paymentCreation(existing)))
    t.equal(await db.idempotency.get(ref), undefined, 'the key was not claimed')
    t.equal(await db.payments.count(), 1)
  })

  t.test('keys are distinct per scope, method, path and key', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    await db.idempotency.claim(claimRequest(ref))
    for (const other of [{ ...ref, scope: 'client-2' }, { ...ref, method: 'PUT' }, { ...ref, path: '/api/other' }, { ...ref, key: `${ref.key}x` }]) {
      t.equal((await db.idempotency.claim(claimRequest(other))).kind, 'new', JSON.stringify(other))
    }
  })

  t.test('same fingerprint while locked is in_flight; another fingerprint is mismatch', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    await db.idempotency.claim(claimRequest(ref))
    t.match(await db.idempotency.claim(claimRequest(ref, { now: T0 + 1000 })), { kind: 'in_flight', record: { lockedUntil: T0 + MINUTE } })
    t.match(await db.idempotency.claim(claimRequest(ref, { now: T0 + 1000, fingerprint: 'fp-2' })), { kind: 'mismatch', record: { fingerprint: 'fp-1' } })
  })

  t.test('release keeps the recovery point; the next claim resumes and locks again', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    await db.idempotency.claim(claimRequest(ref))
    const payment = pendingPayment()
    await db.payments.create(payment, ref)
    await db.idempotency.release(ref)
    t.match(await db.idempotency.get(ref), { lockedUntil: null, recoveryPoint: 'resource_created', resourceId: payment.id })
    const resumed = await db.idempotency.claim(claimRequest(ref, { now: T0 + 5000 }))
    t.equal(resumed.kind, 'resumed')
    t.match(resumed.record, { recoveryPoint: 'resource_created', resourceId: payment.id, lockedUntil: T0 + 5000 + MINUTE, createdAt: T0 })
    t.match(await db.idempotency.claim(claimRequest(ref, { now: T0 + 6000 })), { kind: 'in_flight' })
  })

  t.test('a live lock whose holder stopped beating is taken over; a beating holder\'s never is', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    await db.instances.beat('instance-a', T0, T0)
    await db.instances.beat('instance-b', T0, T0)
    const byA = await db.idempotency.claim(claimRequest(ref, { owner: 'instance-a' }))
    t.match(byA, { kind: 'new', record: { lockedBy: 'instance-a', lockedUntil: T0 + MINUTE } })
    t.match(await db.idempotency.get(ref), { lockedBy: 'instance-a' }, 'the holder is stored')
    const byB = (now: number, takeoverBefore: number | undefined): ClaimRequest => claimRequest(ref, { now, owner: 'instance-b', takeoverBefore })

    t.match(await db.idempotency.claim(byB(T0 + 1000, T0 - 4000)), { kind: 'in_flight', record: { lockedBy: 'instance-a' } }, 'A beat after the cut-off: still in flight')
    t.match(await db.idempotency.claim(byB(T0 + 1000, undefined)), { kind: 'in_flight' }, 'a claimant that cannot judge heartbeats never takes over')
    await db.instances.beat('instance-a', T0, T0 + 9000)
    t.match(await db.idempotency.claim(byB(T0 + 10_000, T0 + 5000)), { kind: 'in_flight' }, 'A kept beating: its lock stays, however long it holds it')
    t.match(await db.idempotency.claim(claimRequest(ref, { now: T0 + 20_000, owner: 'instance-a', takeoverBefore: T0 + 15_000 })), { kind: 'in_flight' },
      'the holder itself is answered in_flight by the store (plugins decide on their own locks)')

    const takeover = await db.idempotency.claim(byB(T0 + 20_000, T0 + 15_000))
    t.match(takeover, { kind: 'resumed', takenOverFrom: 'instance-a', record: { lockedBy: 'instance-b', lockedUntil: T0 + 20_000 + MINUTE, recoveryPoint: 'started' } },
      'A silent since T0 + 9 s: B takes the key over, long before the lock time')
    t.equal(await db.idempotency.release(ref, T0 + MINUTE), false, 'A\'s late release (conditional on its lock) frees nothing')
    await db.idempotency.abandon(ref, T0 + MINUTE)
    t.ok(await db.idempotency.get(ref), 'nor does its late abandon (after a refusal) forget the key B now works under')
    t.match(await db.idempotency.get(ref), { lockedBy: 'instance-b', lockedUntil: T0 + 20_000 + MINUTE })

    await db.instances.remove('instance-b', T0)
    t.match(await db.idempotency.claim(claimRequest(ref, { now: T0 + 21_000, owner: 'instance-c', takeoverBefore: T0 + 16_000 })), { kind: 'resumed', takenOverFrom: 'instance-b' },
      'a holder without a heartbeat row (removed) has stopped')

    const unowned = keyRef()
    await db.idempotency.claim(claimRequest(unowned))
    t.match(await db.idempotency.claim(claimRequest(unowned, { now: T0 + 21_000, owner: 'instance-c', takeoverBefore: T0 + 16_000 })), { kind: 'in_flight', record: { lockedBy: null } },
      'a lock without a holder (the recovery worker\'s lease, or taken before holders were recorded) ends only with its time')
    t.equal(await db.idempotency.release(unowned), true, 'release says it freed a lock')
    t.equal(await db.idempotency.release(unowned), false, '...and that there was none the second time')
    t.match(await db.idempotency.get(unowned), { lockedUntil: null, lockedBy: null })
  })

  t.test('a lock that ran out (a crashed request) is resumed', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    await db.idempotency.claim(claimRequest(ref))
    const later = T0 + 2 * MINUTE
    t.match(await db.idempotency.claim(claimRequest(ref, { now: later })), { kind: 'resumed', record: { recoveryPoint: 'started', lockedUntil: later + MINUTE } })
  })

  t.test('finish stores the response; same fingerprint replays it, another is mismatch', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    await db.idempotency.claim(claimRequest(ref))
    const stored = { statusCode: 402, headers: { 'content-type': 'application/problem+json', 'retry-after': '5' }, body: '{"status":402}' }
    await db.idempotency.finish(ref, stored)
    t.match(await db.idempotency.get(ref), { recoveryPoint: 'finished', lockedUntil: null })
    const replay = await db.idempotency.claim(claimRequest(ref, { now: T0 + 1000 }))
    t.equal(replay.kind, 'replay')
    t.same(replay.record.response, stored, 'status, headers and body exactly')
    t.match(await db.idempotency.claim(claimRequest(ref, { now: T0 + 1000, fingerprint: 'fp-2' })), { kind: 'mismatch' })
    await db.idempotency.finish(ref, response('later'))
    t.same((await db.idempotency.get(ref))?.response, stored, 'finish does not overwrite a finished key')
  })

  t.test('abandon forgets the key; it can be claimed anew with any body', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    await db.idempotency.claim(claimRequest(ref))
    await db.idempotency.abandon(ref)
    t.equal(await db.idempotency.get(ref), undefined)
    t.match(await db.idempotency.claim(claimRequest(ref, { fingerprint: 'fp-2' })), { kind: 'new', record: { fingerprint: 'fp-2' } })
  })

  t.test('an expired finished key is reused as new; an expired key of a pending payment is not', async (t) => {
    const db = await fresh(t, makeDatabase)
    const finished = keyRef()
    await db.idempotency.claim(claimRequest(finished, { expiresAt: T0 + HOUR }))
    await db.idempotency.finish(finished, response())
    const reused = await db.idempotency.claim(claimRequest(finished, { now: T0 + HOUR, fingerprint: 'fp-2' }))
    t.equal(reused.kind, 'new', 'expiry is inclusive: expiresAt <= now')
    t.match(reused.record, { fingerprint: 'fp-2', recoveryPoint: 'started', response: null, createdAt: T0 + HOUR })

    const abandoned = keyRef()
    await db.idempotency.claim(claimRequest(abandoned, { expiresAt: T0 + HOUR }))
    t.equal((await db.idempotency.claim(claimRequest(abandoned, { now: T0 + 2 * HOUR, fingerprint: 'fp-3' }))).kind, 'new',
      'an expired key that never created anything is reused too')

    const pending = keyRef()
    await db.idempotency.claim(claimRequest(pending, { expiresAt: T0 + HOUR }))
    await db.payments.create(pendingPayment(), pending)
    await db.idempotency.release(pending)
    t.equal((await db.idempotency.claim(claimRequest(pending, { now: T0 + 2 * HOUR }))).kind, 'resumed', 'its payment still needs it')
    t.equal((await db.idempotency.claim(claimRequest(pending, { now: T0 + 2 * HOUR, fingerprint: 'fp-2' }))).kind, 'mismatch')
  })

  t.test('reap deletes expired keys but never one whose payment is pending', async (t) => {
    const db = await fresh(t, makeDatabase)
    const claimAt = async (ref: IdempotencyKeyRef, expiresAt: number): Promise<void> => {
      await db.idempotency.claim(claimRequest(ref, { expiresAt }))
    }
    const done = keyRef()
    await claimAt(done, T0 + HOUR)
    await db.idempotency.finish(done, response())
    const started = keyRef()
    await claimAt(started, T0 + HOUR)
    const live = keyRef()
    await claimAt(live, T0 + 3 * HOUR)
    const pendingKey = keyRef()
    await claimAt(pendingKey, T0 + HOUR)
    const pending = pendingPayment()
    await db.payments.create(pending, pendingKey)
    const settledKey = keyRef()
    await claimAt(settledKey, T0 + HOUR)
    const settled = pendingPayment()
    await db.payments.create(settled, settledKey)
    await db.payments.complete({ ...settled, status: 'succeeded' }, { ref: settledKey, response: response() })

    t.equal(await db.idempotency.reap(T0 + HOUR - 1), 0, 'nothing is expired yet')
    t.equal(await db.idempotency.reap(T0 + 2 * HOUR), 3)
    t.equal(await db.idempotency.get(done), undefined)
    t.equal(await db.idempotency.get(started), undefined)
    t.equal(await db.idempotency.get(settledKey), undefined)
    t.ok(await db.idempotency.get(live), 'within retention')
    t.ok(await db.idempotency.get(pendingKey), 'its payment is pending: the recovery worker needs it')
    t.equal(await db.idempotency.reap(T0 + 2 * HOUR), 0)

    await db.payments.complete({ ...pending, status: 'succeeded' })
    t.equal(await db.idempotency.reap(T0 + 2 * HOUR), 1, 'reaped once its payment settled')
  })

  t.test('many concurrent claims of one key: exactly one new, the rest in_flight', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    const results = await Promise.all(Array.from({ length: 50 }, async () => await db.idempotency.claim(claimRequest(ref))))
    t.equal(results.filter((r) => r.kind === 'new').length, 1)
    t.equal(results.filter((r) => r.kind === 'in_flight').length, 49)
  })

  t.test('concurrent claims of an expired key: exactly one re-creates it', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    await db.idempotency.claim(claimRequest(ref, { expiresAt: T0 + HOUR }))
    await db.idempotency.finish(ref, response())
    const results = await Promise.all(Array.from({ length: 20 }, async () =>
      await db.idempotency.claim(claimRequest(ref, { now: T0 + 2 * HOUR, fingerprint: 'fp-new' }))))
    t.equal(results.filter((r) => r.kind === 'new').length, 1)
    t.equal(results.filter((r) => r.kind === 'in_flight').length, 19)
  })

  t.test('concurrent claims racing an abandon never fail and never give two owners', async (t) => {
    const db = await fresh(t, makeDatabase)
    const ref = keyRef()
    for (let round = 0; round < 10; round++) {
      await db.idempotency.claim(claimRequest(ref))
      const [, ...results] = await Promise.all([
        db.idempotency.abandon(ref),
        ...Array.from({ length: 5 }, async () => await db.idempotency.claim(claimRequest(ref)))
      ])
      t.ok(results.filter((r) => r !== undefined && r.kind === 'new').length <= 1, `round ${round}`)
      await db.idempotency.abandon(ref)
    }
  })
}

/** Every contract in this file, as subtests of `t`. */
export function storeContract (t: Test, makeDatabase: MakeDatabase): void {
  t.test('products', async (t) => { productStoreContract(t, makeDatabase) })
  t.test('payments', async (t) => { paymentStoreContract(t, makeDatabase) })
  t.test('idempotency keys', async (t) => { idempotencyStoreContract(t, makeDatabase) })
  t.test('gateway ledger', async (t) => { ledgerStoreContract(t, makeDatabase) })
  t.test('payment lifecycle', async (t) => { lifecycleStoreContract(t, makeDatabase) })
  t.test('manual capture', async (t) => { captureStoreContract(t, makeDatabase) })
}
