import type { Database } from '../types'
import { migrateSqlite, openSqlite, type SqliteOptions } from './connection'
import { sqliteMigrations } from './migrations'
import { sqliteProductStore } from './products'
import { sqliteMerchantStore } from './merchants'
import { sqlitePaymentStore } from './payments'
import { sqliteIdempotencyStore } from './idempotency'
import { sqliteLedgerStore } from './ledger'
import { groupCommit } from './group-commit'

export function createSqliteDatabase (url: string, options: SqliteOptions): Database {
  const db = openSqlite(url, options)
  migrateSqlite(db, sqliteMigrations)
  // Payment, key, ledger and product writes share commits (and fsyncs); see group-commit.ts.
  const batchListeners: Array<(writes: number) => void> = []
  const writes = groupCommit(db, (size) => { for (const listener of batchListeners) listener(size) })
  return {
    kind: 'sqlite',
    products: sqliteProductStore(db, writes),
    merchants: sqliteMerchantStore(db),
    payments: sqlitePaymentStore(db, writes),
    idempotency: sqliteIdempotencyStore(db, writes),
    ledger: sqliteLedgerStore(db, writes),
    instrumentation: {
      onWriteBatch: (listener) => { batchListeners.push(listener) }
    },
    async ping () {
      db.prepare('SELECT 1').get()
    },
    async close () {
      if (db.open) {
        writes.flush()
        db.close()
      }
    }
  }
}
