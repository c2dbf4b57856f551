import type { Database, IdempotencyKeyRef, IdempotencyStore } from './types'
import { guardStore, unavailableReason } from './unavailable'

/** How often keys whose release failed are tried again, and for how long at most. */
const RETRY_INTERVAL_MS = 500
const GIVE_UP_AFTER_MS = 10 * 60_000
/** Bounds the memory of locks this process holds (oldest forgotten first). */
const MAX_TRACKED = 10_000

function keyOf (ref: IdempotencyKeyRef): string {
  return JSON.stringify([ref.scope, ref.method, ref.path, ref.key])
}

interface FailedRelease { ref: IdempotencyKeyRef, lockedUntil: number, since: number }

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
        await store.release(entry.ref, entry.lockedUntil)
        failed.delete(key)
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

  return {
    ...store,
    async claim (request, creation) {
      const key = keyOf(request.ref)
      if (failed.has(key)) await retryFailed()
      const result = await store.claim(request, creation)
      if ((result.kind === 'new' || result.kind === 'resumed') && result.record.lockedUntil !== null) {
        remember(held, key, result.record.lockedUntil)
      }
      return result
    },
    async release (ref, lockedUntil) { await free(ref, async () => { await store.release(ref, lockedUntil) }) },
    // A key that could not be forgotten is at least unlocked later: a retry then starts afresh from 'started'.
    async abandon (ref) { await free(ref, async () => { await store.abandon(ref) }) },
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
 * StoreUnavailableError, and keys whose release failed are freed once the
 * database is back.
 */
export function guardDatabase (db: Database): Database {
  const idempotency = releasingAfterOutages(guardStore(db.idempotency))
  return {
    kind: db.kind,
    products: guardStore(db.products),
    merchants: guardStore(db.merchants),
    payments: guardStore(db.payments),
    refunds: guardStore(db.refunds),
    captures: guardStore(db.captures),
    ledger: guardStore(db.ledger),
    apiKeys: guardStore(db.apiKeys),
    events: guardStore(db.events),
    webhooks: guardStore(db.webhooks),
    idempotency,
    ping: guardStore({ ping: db.ping }).ping,
    ...(db.instrumentation === undefined ? {} : { instrumentation: db.instrumentation }),
    async close () {
      idempotency.stop()
      await db.close()
    }
  }
}
