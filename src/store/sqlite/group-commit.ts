import { carryingAudit } from '../audit-scope'
import type { SqliteHandle } from './connection'

/**
 * How the SQLite stores run their writes. Every write is still its own atomic
 * unit, and its promise settles only once it is committed (durable under
 * SQLITE_SYNCHRONOUS=FULL).
 */
export interface WriteQueue {
  /** Runs `operation` (synchronous SQL) atomically; resolves after its COMMIT. */
  run: <T>(operation: () => T) => Promise<T>
  /**
   * Runs `statement`, which runs exactly one SQL statement: atomic by itself (SQLite undoes a failing statement
   * alone, keeping the transaction), so in a batch it needs no savepoint of its own; resolves after its COMMIT.
   */
  runStatement: <T>(statement: () => T) => Promise<T>
  /** Commits whatever is queued now (before the database is closed). */
  flush: () => void
}

type Outcome = { ok: true, value: unknown } | { ok: false, error: unknown }

interface Pending {
  operation: () => unknown
  /** One statement: run without a savepoint (see runStatement). */
  single: boolean
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
    async runStatement<T> (statement: () => T): Promise<T> {
      return atomically.immediate(statement) as T
    },
    flush () {}
  }
}

/**
 * Group commit. The writes requested in one turn of the event loop run one
 * after the other, each in its own savepoint (a one-statement write needs
 * none: runStatement), inside one IMMEDIATE transaction,
 * and every caller learns its outcome only after that transaction's COMMIT has
 * returned. A write that throws rolls back to its savepoint alone; a COMMIT
 * that fails fails every write of the batch. Nothing is acknowledged before it
 * is durable, so SQLITE_SYNCHRONOUS=FULL keeps its meaning, but the cost of the
 * WAL sync is shared by all the requests waiting for it instead of being paid
 * once per write. The writes still run one at a time, in call order, so each
 * sees the effects of those before it, exactly as separate transactions would.
 *
 * Every outcome is known and reported: no write ever runs outside the batch's
 * transaction. SQLite rolls back the WHOLE transaction when a statement fails
 * with SQLITE_FULL, SQLITE_IOERR or SQLITE_NOMEM outside a statement journal
 * (https://sqlite.org/lang_transaction.html, "Response To Errors Within A
 * Transaction"); the writes that ran before it in the batch are then rejected
 * with that error (they are undone), and the ones after it run in a new batch.
 * Left to run on, they would each commit on their own (autocommit) and then be
 * reported as failed by the batch's COMMIT ("no transaction is active"): a key
 * claimed while its client heard 503, locked for the whole lock time. A ROLLBACK
 * that fails still rejects the batch (never a promise left unsettled), and the
 * transaction it left open is rolled back before the next batch begins.
 */
export function groupCommit (db: SqliteHandle, onBatch?: (writes: number) => void): WriteQueue {
  // Called inside the batch's transaction, a better-sqlite3 transaction function is a savepoint.
  const inSavepoint = db.transaction((operation: () => unknown) => operation())
  let queue: Pending[] = []
  let scheduled = false

  /** Rolls back whatever transaction is open; the error when even that failed (it is tried again before the next batch). */
  function rollback (): unknown {
    try {
      if (db.open && db.inTransaction) db.exec('ROLLBACK')
      return undefined
    } catch (error) {
      return error
    }
  }

  /** Runs one batch; returns the writes it did not get to (its transaction was lost before them). */
  function commit (batch: Pending[]): Pending[] {
    onBatch?.(batch.length)
    const settled: Array<{ pending: Pending, outcome: Outcome }> = []
    let rest: Pending[] = []
    try {
      // A transaction left open by a ROLLBACK that failed: nothing in it was acknowledged.
      const leftOpen = rollback()
      if (leftOpen !== undefined) throw leftOpen
      db.exec('BEGIN IMMEDIATE')
      for (const [i, pending] of batch.entries()) {
        let outcome: Outcome
        try {
          outcome = { ok: true, value: pending.single ? pending.operation() : inSavepoint(pending.operation) }
        } catch (error) {
          outcome = { ok: false, error }
        }
        settled.push({ pending, outcome })
        if (!db.inTransaction) {
          // SQLite rolled the whole transaction back: what ran so far is undone, the rest gets a new one.
          rest = batch.slice(i + 1)
          batch = batch.slice(0, i + 1)
          throw outcome.ok ? new Error('the batch transaction ended inside a write') : outcome.error
        }
      }
      db.exec('COMMIT')
    } catch (error) {
      rollback()
      for (const pending of batch) pending.reject(error)
      return rest
    }
    for (const { pending, outcome } of settled) {
      if (outcome.ok) pending.resolve(outcome.value)
      else pending.reject(outcome.error)
    }
    return rest
  }

  function flush (): void {
    scheduled = false
    let batch = queue
    queue = []
    while (batch.length > 0) batch = commit(batch)
  }

  // One promise per write, no async wrappers: every write of every request passes here (bench/RESULTS.md, 2026-12-08).
  const enqueue = <T>(operation: () => T, single: boolean): Promise<T> => new Promise<T>((resolve, reject) => {
    // A write runs with the audit slot of the request that queued it, not the batch's (the first enqueuer's): the
    // entry it writes (src/store/audit-scope.ts) is its own request's. A one-statement write reads nothing from the
    // context (its values are computed before it is queued): it is not tied.
    queue.push({ operation: single ? operation : carryingAudit(operation), single, resolve: resolve as (value: unknown) => void, reject })
    if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  })

  return {
    run: (operation) => enqueue(operation, false),
    runStatement: (statement) => enqueue(statement, true),
    flush
  }
}
