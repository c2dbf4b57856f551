import type { ClaimRequest, ClaimResult, Database, IdempotencyKeyRef, IdempotencyStore, ResourceCreation } from './types'
import { databaseHealth, observed, type HealthTracker } from './health'
import { guardStore, unavailableReason } from './unavailable'

/** How often keys whose release failed are tried again, and for how long at most. */
const RETRY_INTERVAL_MS = 500
const GIVE_UP_AFTER_MS = 10 * 60_000
/**
 * A claim that failed for want of an answer (a read time-out: the server was paused) may still
 * commit when the server resumes, leaving a lock nobody works under. Its conditional release is
 * retried until it frees that lock or this long after the database first answered it.
 */
const UNCERTAIN_CLAIM_SETTLE_MS = 5_000
/** Bounds the memory of locks this process holds (oldest forgotten first). */
const MAX_TRACKED = 10_000

/**
 * A statement sent but never answered (the client's read time-out on a paused server): it may still run
 * and commit later. Every other failure either never reached the server or was rolled back by it.
 */
function readTimedOut (error: unknown): boolean {
  const cause = error instanceof Error ? error.cause ?? error : error
  return cause instanceof Error && cause.message === 'Query read timeout'
}

function keyOf (ref: IdempotencyKeyRef): string {
  return JSON.stringify([ref.scope, ref.method, ref.path, ref.key])
}

interface FailedRelease {
  ref: IdempotencyKeyRef
  lockedUntil: number
  since: number
  /** A claim whose outcome is unknown: the lock may not exist (yet). When the database first answered its release. */
  uncertain?: { answeredAt?: number }
}

/**
 * An idempotency store that does not leave a key locked for the whole lock time
 * after a short database outage: when freeing a key this process holds fails
 * because the database is away, the key is remembered and freed again every
 * RETRY_INTERVAL_MS (and before this process claims it again) until the database
 * answers. The late release is conditional on the lock still being the one this
 * process took, so it never frees a key someone else has claimed since.
 */
export function releasingAfterOutages (store: IdempotencyStore): IdempotencyStore & { stop: () => void } {
  const held = new Map<string, number>()
  const failed = new Map<string, FailedRelease>()
  let timer: NodeJS.Timeout | undefined

  const remember = (map: Map<string, unknown>, key: string, value: unknown): void => {
    map.delete(key)
    map.set(key, value)
    if (map.size > MAX_TRACKED) map.delete(map.keys().next().value as string)
  }

  async function retryFailed (): Promise<void> {
    for (const [key, entry] of failed) {
      try {
        const released = await store.release(entry.ref, entry.lockedUntil)
        const uncertain = entry.uncertain
        if (uncertain === undefined || released) failed.delete(key)
        else if (Date.now() - (uncertain.answeredAt ??= Date.now()) >= UNCERTAIN_CLAIM_SETTLE_MS) failed.delete(key)
      } catch (err) {
        if (Date.now() - entry.since > GIVE_UP_AFTER_MS || unavailableReason(err) === undefined) failed.delete(key)
        else break // still away: try again later
      }
    }
  }

  function schedule (): void {
    if (timer !== undefined || failed.size === 0) return
    timer = setTimeout(() => {
      retryFailed().catch(() => {}).finally(() => { timer = undefined; schedule() })
    }, RETRY_INTERVAL_MS)
    timer.unref()
  }

  async function free (ref: IdempotencyKeyRef, operation: () => Promise<void>): Promise<void> {
    const key = keyOf(ref)
    try {
      await operation()
      held.delete(key)
    } catch (err) {
      const lockedUntil = held.get(key)
      if (lockedUntil !== undefined && unavailableReason(err) !== undefined) {
        held.delete(key)
        remember(failed, key, { ref, lockedUntil, since: Date.now() })
        schedule()
      }
      throw err
    }
  }

  /** Claims in progress in this process, by key: a lock of ours that one of them is taking is not stale. */
  const claiming = new Map<string, number>()

  async function claimTracked (key: string, request: ClaimRequest, creation?: ResourceCreation): Promise<ClaimResult> {
    let result: ClaimResult
    try {
      result = await store.claim(request, creation)
    } catch (err) {
      // No answer (a read time-out): the claim may still commit when the server resumes. Free it then.
      if (readTimedOut(err) && !held.has(key)) {
        remember(failed, key, { ref: request.ref, lockedUntil: request.lockUntil, since: Date.now(), uncertain: {} })
        schedule()
      }
      throw err
    }
    if ((result.kind === 'new' || result.kind === 'resumed' || result.kind === 'created') && result.record.lockedUntil !== null) {
      remember(held, key, result.record.lockedUntil)
      failed.delete(key)
    }
    return result
  }

  /**
   * A lock this instance holds without a request working under it: one whose release failed or
   * was given up, or a claim that committed after its request had answered 503. Another claim of
   * ours in progress may be taking it right now; otherwise it is nobody's.
   */
  function staleOwnLock (key: string, request: ClaimRequest, result: ClaimResult): boolean {
    return result.kind === 'in_flight' && request.owner !== undefined && result.record.lockedBy === request.owner &&
      held.get(key) !== result.record.lockedUntil && (claiming.get(key) ?? 0) <= 1
  }

  return {
    ...store,
    async claim (request, creation) {
      const key = keyOf(request.ref)
      claiming.set(key, (claiming.get(key) ?? 0) + 1)
      try {
        if (failed.has(key)) await retryFailed()
        const result = await claimTracked(key, request, creation)
        if (!staleOwnLock(key, request, result)) return result
        // Free it (conditionally: only that very lock) and claim again. If the database cannot even do
        // that (a full disk), the client hears why with its Retry-After, not 409 "in use".
        await store.release(request.ref, result.record.lockedUntil ?? undefined)
        failed.delete(key)
        return await claimTracked(key, request, creation)
      } finally {
        const left = (claiming.get(key) ?? 1) - 1
        if (left === 0) claiming.delete(key)
        else claiming.set(key, left)
      }
    },
    async release (ref, lockedUntil) {
      let released = false
      await free(ref, async () => { released = await store.release(ref, lockedUntil) })
      return released
    },
    // A key that could not be forgotten is at least unlocked later: a retry then starts afresh from 'started'.
    async abandon (ref, lockedUntil) { await free(ref, async () => { await store.abandon(ref, lockedUntil) }) },
    async finish (ref, response) {
      await store.finish(ref, response)
      held.delete(keyOf(ref))
    },
    stop () { clearTimeout(timer) }
  }
}

/**
 * The database as routes and services see it: every failure that a retry can
 * cure (unreachable, restarting, timed out, busy, disk full) is a
 * StoreUnavailableError, keys whose release failed are freed once the
 * database is back, and `health` says what the answers said lately (readiness,
 * one log line per change, failing fast while the database is away).
 */
export function guardDatabase (db: Database, options: { settleMs?: number } = {}): Database {
  const health: HealthTracker = databaseHealth(options.settleMs)
  /** Mapped to StoreUnavailableError, observed by `health`, and refused at once while the database is away. */
  const guard = <T extends object>(store: T): T => observed(guardStore(store), health, { failFast: true })
  const idempotency = releasingAfterOutages(guard(db.idempotency))
  return {
    kind: db.kind,
    products: guard(db.products),
    merchants: guard(db.merchants),
    payments: guard(db.payments),
    refunds: guard(db.refunds),
    captures: guard(db.captures),
    ledger: guard(db.ledger),
    apiKeys: guard(db.apiKeys),
    events: guard(db.events),
    webhooks: guard(db.webhooks),
    connectors: guard(db.connectors),
    connectorEvents: guard(db.connectorEvents),
    dashboardSessions: guard(db.dashboardSessions),
    disputes: guard(db.disputes),
    users: guard(db.users),
    signInFailures: guard(db.signInFailures),
    auditLog: guard(db.auditLog),
    idempotency,
    // The heartbeat is the probe that finds the database back: never refused.
    instances: observed(guardStore(db.instances), health, { failFast: false }),
    health,
    ping: guard({ ping: db.ping }).ping,
    ...(db.instrumentation === undefined ? {} : { instrumentation: db.instrumentation }),
    async close () {
      idempotency.stop()
      await db.close()
    }
  }
}
