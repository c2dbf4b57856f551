import type { Database } from '../types'
import { productStore } from '../products'
import { connectorStore } from '../connectors'
import { connectorEventStore } from '../connector-events'
import { dashboardSessionStore } from '../dashboard-sessions'
import { signInFailureStore, userStore } from '../users'
import { auditLogStore } from '../audit-log'
import { instanceStore } from '../instances'
import { migrateSqlite, openSqlite, openSqliteImage, sqlitePathFromUrl, type SqliteHandle, type SqliteOptions } from './connection'
import { sqliteMigrations } from './migrations'
import { sqliteMerchantStore } from './merchants'
import { sqlitePaymentStore } from './payments'
import { sqliteRefundStore } from './refunds'
import { sqliteCaptureStore } from './captures'
import { sqliteIdempotencyStore } from './idempotency'
import { sqliteLedgerStore } from './ledger'
import { sqliteApiKeyStore } from './api-keys'
import { sqliteEventStore, sqliteWebhookStore } from './events'
import { sqliteRunner } from './runner'
import { groupCommit, type WriteQueue } from './group-commit'
import { guardDatabase } from '../guard'
import { sqliteDisputeStore } from './disputes'
import { unavailableReason } from '../unavailable'

/** Readiness writes at least this often, so a full disk shows before a request finds it. */
const WRITE_PROBE_INTERVAL_MS = 5_000

/**
 * The migrated schema of an in-memory database, serialized (made once per process): each new in-memory database
 * (tests, trials) starts as a copy instead of running every migration's DDL again, about a third of an app's start.
 */
let migratedInMemory: Buffer | undefined

/** The database at `url`, migrated. A file is migrated in place; an in-memory database starts from the migrated copy. */
async function openMigrated (url: string, options: SqliteOptions): Promise<SqliteHandle> {
  if (sqlitePathFromUrl(url) !== ':memory:') {
    const db = openSqlite(url, options)
    await migrateSqlite(db, sqliteMigrations)
    return db
  }
  if (migratedInMemory === undefined) {
    const template = openSqlite(url, options)
    await migrateSqlite(template, sqliteMigrations)
    migratedInMemory = template.serialize()
    template.close()
  }
  const db = openSqliteImage(migratedInMemory, options)
  // The copy records its migrations: nothing is pending, and this proves it.
  await migrateSqlite(db, sqliteMigrations)
  return db
}

export async function createSqliteDatabase (url: string, options: SqliteOptions): Promise<Database> {
  const db = await openMigrated(url, options)
  // Payment, key, ledger and product writes share commits (and fsyncs); see group-commit.ts.
  const batchListeners: Array<(writes: number) => void> = []
  const writes = watchWrites(groupCommit(db, (size) => { for (const listener of batchListeners) listener(size) }))
  const probe = db.prepare('SELECT 1')
  let lastProbe = 0
  return guardDatabase({
    kind: 'sqlite',
    products: productStore(sqliteRunner(db, writes)),
    merchants: sqliteMerchantStore(db),
    payments: sqlitePaymentStore(db, writes),
    refunds: sqliteRefundStore(db, writes),
    captures: sqliteCaptureStore(db, writes),
    idempotency: sqliteIdempotencyStore(db, writes),
    ledger: sqliteLedgerStore(db, writes),
    instrumentation: {
      onWriteBatch: (listener) => { batchListeners.push(listener) }
    },
    apiKeys: sqliteApiKeyStore(db, writes),
    events: sqliteEventStore(db, writes),
    webhooks: sqliteWebhookStore(db, writes),
    instances: instanceStore(sqliteRunner(db, writes)),
    connectors: connectorStore(sqliteRunner(db, writes)),
    connectorEvents: connectorEventStore(sqliteRunner(db, writes)),
    disputes: sqliteDisputeStore(db, writes),
    dashboardSessions: dashboardSessionStore(sqliteRunner(db, writes)),
    users: userStore(sqliteRunner(db, writes)),
    signInFailures: signInFailureStore(sqliteRunner(db, writes)),
    auditLog: auditLogStore(sqliteRunner(db, writes)),
    /*
     * Reading is not enough: on a full disk every read works and every write fails.
     * After a failed write, and every WRITE_PROBE_INTERVAL_MS otherwise, the ping
     * commits a write that changes nothing (PRAGMA user_version rewritten), so
     * readiness turns 503 while the instance cannot write and 200 once it can again.
     */
    async ping () {
      probe.get()
      if (writes.lastError() === undefined && Date.now() - lastProbe < WRITE_PROBE_INTERVAL_MS) return
      lastProbe = Date.now()
      await writes.run(() => db.pragma(`user_version = ${Number(db.pragma('user_version', { simple: true }))}`))
    },
    async close () {
      if (db.open) {
        writes.flush()
        db.close()
      }
    }
  }, options.settleMs === undefined ? {} : { settleMs: options.settleMs })
}

/** A write queue that remembers whether the last write failed for want of disk, I/O or lock. */
function watchWrites (writes: WriteQueue): WriteQueue & { lastError: () => unknown } {
  let lastError: unknown
  // Handlers on the write's own promise, not async wrappers: every write of every request passes here (bench/RESULTS.md, 2026-12-08).
  const succeeded = <T>(result: T): T => {
    lastError = undefined
    return result
  }
  const failed = (err: unknown): never => {
    if (unavailableReason(err) !== undefined) lastError = err
    throw err
  }
  return {
    run: (operation) => writes.run(operation).then(succeeded, failed),
    runStatement: (statement) => writes.runStatement(statement).then(succeeded, failed),
    flush: () => { writes.flush() },
    lastError: () => lastError
  }
}
