import type { SqliteHandle } from './connection'

/**
 * How the SQLite stores run their writes. Every write is still its own atomic
 * unit, and its promise settles only once it is committed (durable under
 * SQLITE_SYNCHRONOUS=FULL).
 */
export interface WriteQueue {
  /** Runs `operation` (synchronous SQL) atomically; resolves after its COMMIT. */
  run: <T>(operation: () => T) => Promise<T>
  /** Commits whatever is queued now (before the database is closed). */
  flush: () => void
}

interface Pending {
  operation: () => unknown
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

/** Each write in its own IMMEDIATE transaction, at once: one commit (one fsync) per write. */
export function immediateWrites (db: SqliteHandle): WriteQueue {
  const atomically = db.transaction((operation: () => unknown) => operation())
  return {
    async run<T> (operation: () => T): Promise<T> {
      return atomically.immediate(operation) as T
    },
    flush () {}
  }
}

/**
 * Group commit. The writes requested in one turn of the event loop run one
 * after the other, each in its own savepoint, inside one IMMEDIATE transaction,
 * and every caller learns its outcome only after that transaction's COMMIT has
 * returned. A write that throws rolls back to its savepoint alone; a COMMIT
 * that fails fails every write of the batch. Nothing is acknowledged before it
 * is durable, so SQLITE_SYNCHRONOUS=FULL keeps its meaning, but the cost of the
 * WAL sync is shared by all the requests waiting for it instead of being paid
 * once per write. The writes still run one at a time, in call order, so each
 * sees the effects of those before it, exactly as separate transactions would.
 */
export function groupCommit (db: SqliteHandle, onBatch?: (writes: number) => void): WriteQueue {
  // Called inside the batch's transaction, a better-sqlite3 transaction function is a savepoint.
  const inSavepoint = db.transaction((operation: () => unknown) => operation())
  let queue: Pending[] = []
  let scheduled = false

  function flush (): void {
    scheduled = false
    if (queue.length === 0) return
    const batch = queue
    queue = []
    onBatch?.(batch.length)
    const outcomes: Array<{ ok: true, value: unknown } | { ok: false, error: unknown }> = []
    try {
      db.exec('BEGIN IMMEDIATE')
      for (const pending of batch) {
        try {
          outcomes.push({ ok: true, value: inSavepoint(pending.operation) })
        } catch (error) {
          outcomes.push({ ok: false, error })
        }
      }
      db.exec('COMMIT')
    } catch (error) {
      if (db.open && db.inTransaction) db.exec('ROLLBACK')
      for (const pending of batch) pending.reject(error)
      return
    }
    for (const [i, pending] of batch.entries()) {
      const outcome = outcomes[i]
      if (outcome.ok) pending.resolve(outcome.value)
      else pending.reject(outcome.error)
    }
  }

  return {
    async run<T> (operation: () => T): Promise<T> {
      return await new Promise<T>((resolve, reject) => {
        queue.push({ operation, resolve: resolve as (value: unknown) => void, reject })
        if (!scheduled) {
          scheduled = true
          setImmediate(flush)
        }
      })
    },
    flush
  }
}
