/**
 * The database as routes and services see it (guard.ts): failures a retry can cure are
 * StoreUnavailableError in every area's shape, and keys whose release failed in an outage are freed
 * once the database answers again.
 */
import t, { type Test } from 'tap'
import { guardStore, STORE_RETRY_AFTER_SECONDS } from '../../src/store/unavailable'
import { guardDatabase, releasingAfterOutages } from '../../src/store/guard'
import { createSqliteDatabase } from '../../src/store/sqlite'
import type { Database, IdempotencyKeyRef, IdempotencyStore } from '../../src/store/types'
import { buildTestApp, defaultMerchantOf } from '../helpers/app'

const coded = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code })

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
    db: { kind: db.kind, products: wrap(db.products), merchants: wrap(db.merchants), payments: wrap(db.payments), refunds: wrap(db.refunds), captures: wrap(db.captures), idempotency: wrap(db.idempotency), ledger: wrap(db.ledger), apiKeys: wrap(db.apiKeys), events: wrap(db.events), webhooks: wrap(db.webhooks), instances: wrap(db.instances), connectors: wrap(db.connectors), connectorEvents: wrap(db.connectorEvents), dashboardSessions: wrap(db.dashboardSessions), disputes: wrap(db.disputes), users: wrap(db.users), signInFailures: wrap(db.signInFailures), auditLog: wrap(db.auditLog), ping: wrap({ ping: db.ping }).ping, close: db.close }
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
  delete faults.releaseError
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
  delete faults.claimError
  t.match(await inner.get(claim('elsewhere', 0).ref), { lockedBy: ME, lockedUntil: 61_000 }, 'the claim committed anyway: locked by this (live) instance')

  t.match(await keys.claim(claim('here', 2000)), { kind: 'resumed', record: { lockedBy: ME } }, 'a retry on this instance resumes at once')
  await new Promise((resolve) => setTimeout(resolve, 800))
  t.match(await inner.get(claim('elsewhere', 0).ref), { lockedUntil: null }, 'freed in the background within a second, for a retry on another instance')
  t.match(await inner.claim(claim('elsewhere', 3000, OTHER)), { kind: 'resumed', record: { lockedBy: OTHER } }, 'which resumes it')
})
