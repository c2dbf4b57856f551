/**
 * Database failures a retry can cure become the domain's StoreUnavailableError (503 with
 * Retry-After, rendered in each area's shape); anything else stays a bug (500). Keys whose
 * release failed in an outage are freed once the database answers again.
 */
import t, { type Test } from 'tap'
import { StoreUnavailableError } from '../../src/domain/errors'
import { guardStore, STORE_RETRY_AFTER_SECONDS, toStoreError, unavailableReason } from '../../src/store/unavailable'
import { guardDatabase, releasingAfterOutages } from '../../src/store/guard'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { migrateSqlite, openSqlite } from '../../src/store/sqlite/connection'
import { sqliteMigrations } from '../../src/store/sqlite/migrations'
import { groupCommit } from '../../src/store/sqlite/group-commit'
import { sqliteIdempotencyStore } from '../../src/store/sqlite/idempotency'
import { sqliteProductStore } from '../../src/store/sqlite/products'
import type { Database, IdempotencyKeyRef, IdempotencyStore } from '../../src/store/types'
import { buildTestApp, defaultMerchantOf } from '../helpers/app'

const coded = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code })

t.test('which errors mean "the database cannot serve right now"', async (t) => {
  const cases: Array<[Error, string | undefined]> = [
    [coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5499'), 'unreachable'],
    [coded('ECONNRESET'), 'unreachable'],
    [coded('57P01', 'terminating connection due to administrator command'), 'unreachable'],
    [coded('57P03', 'the database system is starting up'), 'unreachable'],
    [coded('08006'), 'unreachable'],
    [coded('57014', 'canceling statement due to statement timeout'), 'timeout'],
    [coded('53100'), 'full'],
    [coded('53300', 'too many connections'), 'busy'],
    [coded('40001'), 'busy'],
    [coded('58030'), 'io'],
    [coded('SQLITE_FULL', 'database or disk is full'), 'full'],
    [coded('SQLITE_IOERR_WRITE'), 'io'],
    [coded('SQLITE_BUSY'), 'busy'],
    [coded('SQLITE_READONLY_DBMOVED'), 'io'],
    [new Error('Connection terminated unexpectedly'), 'unreachable'],
    [new Error('timeout exceeded when trying to connect'), 'unreachable'],
    [new Error('Client has encountered a connection error and is not queryable'), 'unreachable'],
    [new Error('Query read timeout'), 'timeout'],
    // Bugs and client errors stay what they are.
    [coded('23505', 'duplicate key'), undefined],
    [coded('42P01', 'relation does not exist'), undefined],
    [coded('SQLITE_CONSTRAINT_UNIQUE'), undefined],
    [coded('SQLITE_CORRUPT'), undefined],
    [new TypeError('x is undefined'), undefined]
  ]
  for (const [error, reason] of cases) t.equal(unavailableReason(error), reason, `${(error as { code?: string }).code ?? error.message} → ${reason}`)
  t.equal(unavailableReason('not an error'), undefined)

  const mapped = toStoreError(coded('SQLITE_FULL', 'database or disk is full'))
  t.ok(mapped instanceof StoreUnavailableError)
  const error = mapped as StoreUnavailableError
  t.equal(error.kind, 'unavailable')
  t.equal(error.reason, 'full')
  t.equal(error.retryAfterSeconds, STORE_RETRY_AFTER_SECONDS.full)
  t.match(error.message, /out of storage space/)
  t.equal((error.cause as Error).message, 'database or disk is full', 'the driver error is kept as the cause (logged, never shown)')
  t.equal(toStoreError(error), error, 'mapped once')
  const bug = new Error('bug')
  t.equal(toStoreError(bug), bug)
})

t.test('guardStore maps failures of every method and passes results and other errors through', async (t) => {
  const store = guardStore({
    value: 1,
    async ok () { return 'fine' },
    async down () { throw coded('ECONNREFUSED') },
    async bug () { throw new Error('bug') }
  })
  t.equal(store.value, 1)
  t.equal(await store.ok(), 'fine')
  await t.rejects(store.down(), { code: 'STORE_UNAVAILABLE' })
  await t.rejects(store.bug(), { message: 'bug' })
})

/** An SQLite database whose every store method fails with `error` while `down` is set. */
function flaky (db: Database): { db: Database, state: { down: boolean, error: () => Error } } {
  const state = { down: false, error: () => coded('ECONNREFUSED', 'connect ECONNREFUSED') }
  const wrap = <T extends object>(store: T): T => Object.fromEntries(Object.entries(store).map(([name, member]) => [name,
    typeof member === 'function'
      ? async (...args: unknown[]) => {
        if (state.down) throw state.error()
        return await (member as (...a: unknown[]) => Promise<unknown>).apply(store, args)
      }
      : member])) as T
  return {
    state,
    db: { kind: db.kind, products: wrap(db.products), merchants: wrap(db.merchants), payments: wrap(db.payments), refunds: wrap(db.refunds), idempotency: wrap(db.idempotency), ledger: wrap(db.ledger), apiKeys: wrap(db.apiKeys), events: wrap(db.events), webhooks: wrap(db.webhooks), instances: wrap(db.instances), ping: wrap({ ping: db.ping }).ping, close: db.close }
  }
}

t.test('a key whose release failed in an outage is freed once the database is back, and only if still ours', async (t) => {
  const inner = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await inner.close() })
  const { db, state } = flaky(inner)
  const keys: IdempotencyStore & { stop: () => void } = releasingAfterOutages(guardStore(db.idempotency))
  t.teardown(() => { keys.stop() })
  const ref: IdempotencyKeyRef = { scope: '', method: 'POST', path: '/api/payments', key: 'k1' }
  const claim = { ref, fingerprint: 'f', now: 1000, lockUntil: 61_000, expiresAt: 10_000_000 }
  t.equal((await keys.claim(claim)).kind, 'new')

  state.down = true
  await t.rejects(keys.release(ref), { code: 'STORE_UNAVAILABLE' }, 'the release fails while the database is away')
  state.down = false
  t.equal((await inner.idempotency.get(ref))?.lockedUntil, 61_000, 'still locked right after the outage')
  await new Promise((resolve) => setTimeout(resolve, 700))
  t.equal((await inner.idempotency.get(ref))?.lockedUntil, null, 'freed by the retry once the database answered')
  t.equal((await keys.claim({ ...claim, now: 2000 })).kind, 'resumed', 'a retry resumes at once instead of 409 for the lock time')

  // Failed again; meanwhile the lock expired and another instance took the key: the late release must not free that lock.
  state.down = true
  await t.rejects(keys.abandon(ref), { code: 'STORE_UNAVAILABLE' })
  state.down = false
  await inner.idempotency.release(ref)
  t.equal((await inner.idempotency.claim({ ...claim, now: 70_000, lockUntil: 130_000 })).kind, 'resumed', 'someone else resumed it')
  // The next claim by this process first retries the pending release (conditional: a no-op now).
  t.equal((await keys.claim({ ...claim, now: 71_000, lockUntil: 131_000 })).kind, 'in_flight')
  t.equal((await inner.idempotency.get(ref))?.lockedUntil, 130_000, 'the other owner keeps its lock')

  // A failure that is not an outage is not retried.
  state.error = () => new Error('bug')
  state.down = true
  await t.rejects(keys.release(ref), { message: 'bug' })
  state.down = false
})

/*
 * The disk-full regression (issue 16), fast: a write that fills the database (SQLITE_FULL, for real:
 * max_page_count caps the file) shares a group commit with key claims. SQLite rolls the whole batch
 * transaction back; a claim queued after that write once ran on its own (autocommit) and committed, then
 * heard "cannot commit - no transaction is active" (a 500): the key stayed locked, its retries 409 for
 * the whole lock time although nothing ran. Every claim's answer must match the database.
 */
t.test('a key claimed in the same group commit as a write that fills the database: every claim\'s answer matches the database', async (t) => {
  const handle = openSqlite('file::memory:', { synchronous: 'FULL' })
  t.teardown(() => { handle.close() })
  await migrateSqlite(handle, sqliteMigrations)
  const writes = groupCommit(handle)
  const products = guardStore(sqliteProductStore(handle, writes))
  const inner = sqliteIdempotencyStore(handle, writes)
  const keys = releasingAfterOutages(guardStore(inner))
  t.teardown(() => { keys.stop() })
  const claimOf = (key: string, now = 1000) => ({
    ref: { scope: 'merchant:m', method: 'POST', path: '/api/payments', key }, fingerprint: 'f', now, lockUntil: now + 30_000, expiresAt: now + 86_400_000
  })
  t.equal((await keys.claim(claimOf('warm-up'))).kind, 'new')
  handle.pragma(`max_page_count = ${Number(handle.pragma('page_count', { simple: true })) + 2}`)
  const filling = { id: 'p1', name: 'x'.repeat(200_000), price: 1 }

  const [before, full, after] = await Promise.allSettled([keys.claim(claimOf('before')), products.put(filling), keys.claim(claimOf('after'))])
  t.match(full, { status: 'rejected', reason: { code: 'STORE_UNAVAILABLE', reason: 'full' } }, 'the filling write is a 503 (full)')
  t.match(before, { status: 'rejected', reason: { code: 'STORE_UNAVAILABLE', reason: 'full' } }, 'a claim undone with the batch hears why (503, never a 500)')
  t.equal(await inner.get(claimOf('before').ref), undefined, '...and is not in the database')
  t.match(after, { status: 'fulfilled', value: { kind: 'new' } }, 'a claim queued after it runs in a new batch and succeeds')
  t.equal((await inner.get(claimOf('after').ref))?.lockedUntil, 31_000, '...and is in the database, as answered')

  const retried = await keys.claim(claimOf('before', 2000))
  t.equal(retried.kind, 'new', 'the retry of the undone claim is served at once, not 409 for the lock time')
})

t.test('routes answer 503 with Retry-After in their area\'s shape while the database is away', async (t) => {
  const { db, state } = flaky(await createSqliteDatabase('file::memory:', { synchronous: 'FULL' }))
  const app = await buildTestApp(t, {}, { database: guardDatabase(db) })
  await defaultMerchantOf(app) // its API key exists before the outage; authenticating it during the outage is a 503 too
  state.down = true

  const product = await app.inject({ method: 'GET', url: '/products/p1' })
  t.equal(product.statusCode, 503)
  t.equal(product.headers['retry-after'], '2')
  t.same(product.json(), { error: product.json().error, code: 'STORE_UNAVAILABLE' })
  t.match(product.json().error, /database is unreachable/)

  const payment = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'idempotency-key': 'k' }, payload: { amount: 5, currency: 'EUR' } })
  t.equal(payment.statusCode, 503)
  t.equal(payment.headers['retry-after'], '2')
  t.match(payment.headers['content-type'], /^application\/problem\+json/)
  t.match(payment.json(), { type: 'urn:problem-type:service-unavailable', title: 'The service is temporarily unavailable.', status: 503, instance: '/api/payments' })
  t.notMatch(payment.body, /ECONNREFUSED/, 'driver details stay in the log')

  state.error = () => coded('SQLITE_FULL', 'database or disk is full')
  // Refused (unreachable) at once until an answer comes: the heartbeat's probe hears the disk-full error.
  t.equal(app.db.health?.away, true, 'no answer: the next calls fail at once')
  while (app.db.health?.away === true) await new Promise((resolve) => setTimeout(resolve, 50))
  const merchant = await app.inject({ method: 'POST', url: '/merchants', payload: { name: 'A', email: 'a@example.com' } })
  t.equal(merchant.statusCode, 503)
  t.equal(merchant.headers['retry-after'], String(STORE_RETRY_AFTER_SECONDS.full))
  t.match(merchant.json(), { type: 'urn:problem-type:service-unavailable', detail: /out of storage space/ })

  const ready = await app.inject({ method: 'GET', url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  t.same(ready.json().checks, { database: 'full' }, 'readiness names the reason')

  state.down = false
  t.equal((await app.inject({ method: 'POST', url: '/api/payments', headers: { 'idempotency-key': 'k' }, payload: { amount: 5, currency: 'EUR' } })).statusCode, 201, 'served again at once')
})

/** An SQLite idempotency store whose release fails with `releaseError`, and whose claim commits and then fails with `claimError`. */
async function faultyKeys (t: Test): Promise<{ inner: IdempotencyStore, faults: { releaseError?: () => Error, claimError?: () => Error } }> {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const faults: { releaseError?: () => Error, claimError?: () => Error } = {}
  const real = db.idempotency
  const inner: IdempotencyStore = {
    ...real,
    async claim (request, creation) {
      const result = await real.claim(request, creation)
      // The statement ran and committed, but its answer never came (a paused server: "Query read timeout").
      if (faults.claimError !== undefined) throw faults.claimError()
      return result
    },
    async release (ref, lockedUntil) {
      if (faults.releaseError !== undefined) throw faults.releaseError()
      return await real.release(ref, lockedUntil)
    }
  }
  return { inner, faults }
}

const ME = 'instance-me'
const OTHER = 'instance-other'

t.test('a lock of this instance that no request of it works under is not "in use": the claim frees it, or says why it cannot (disk full: 503, not 409)', async (t) => {
  const { inner, faults } = await faultyKeys(t)
  const keys = releasingAfterOutages(guardStore(inner))
  t.teardown(() => { keys.stop() })
  const ref: IdempotencyKeyRef = { scope: 'merchant:m', method: 'POST', path: '/api/payments', key: 'full' }
  const claim = (now: number, owner = ME) => ({ ref, fingerprint: 'f', now, lockUntil: now + 30_000, expiresAt: now + 86_400_000, owner })
  t.equal((await keys.claim(claim(1000))).kind, 'new')
  t.match(await keys.claim(claim(1100)), { kind: 'in_flight' }, 'while our own request holds it: in flight')

  faults.releaseError = () => coded('SQLITE_FULL', 'database or disk is full')
  await t.rejects(keys.release(ref), { code: 'STORE_UNAVAILABLE', reason: 'full' }, 'the release fails on the full disk')
  await t.rejects(keys.claim(claim(2000)), { code: 'STORE_UNAVAILABLE', reason: 'full', retryAfterSeconds: STORE_RETRY_AFTER_SECONDS.full },
    'the retry hears that the disk is full, with its Retry-After (not 409 in use for the lock time)')
  faults.releaseError = undefined
  t.match(await keys.claim(claim(3000)), { kind: 'resumed', record: { lockedBy: ME, lockedUntil: 33_000 } }, 'once it can write, the retry resumes at once')
})

t.test('a claim that committed after its request answered 503 (a read time-out) leaves no lock behind', async (t) => {
  const { inner, faults } = await faultyKeys(t)
  const keys = releasingAfterOutages(guardStore(inner))
  t.teardown(() => { keys.stop() })
  const claim = (key: string, now: number, owner = ME) => ({
    ref: { scope: 'merchant:m', method: 'POST', path: '/api/payments', key }, fingerprint: 'f', now, lockUntil: now + 60_000, expiresAt: now + 86_400_000, owner, takeoverBefore: now - 5000
  })

  faults.claimError = () => new Error('Query read timeout')
  await t.rejects(keys.claim(claim('elsewhere', 1000)), { code: 'STORE_UNAVAILABLE', reason: 'timeout', retryAfterSeconds: 2 })
  await t.rejects(keys.claim(claim('here', 1000)), { code: 'STORE_UNAVAILABLE', reason: 'timeout' })
  faults.claimError = undefined
  t.match(await inner.get(claim('elsewhere', 0).ref), { lockedBy: ME, lockedUntil: 61_000 }, 'the claim committed anyway: locked by this (live) instance')

  t.match(await keys.claim(claim('here', 2000)), { kind: 'resumed', record: { lockedBy: ME } }, 'a retry on this instance resumes at once')
  await new Promise((resolve) => setTimeout(resolve, 800))
  t.match(await inner.get(claim('elsewhere', 0).ref), { lockedUntil: null }, 'freed in the background within a second, for a retry on another instance')
  t.match(await inner.claim(claim('elsewhere', 3000, OTHER)), { kind: 'resumed', record: { lockedBy: OTHER } }, 'which resumes it')
})
