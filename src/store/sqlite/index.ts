import type { Database } from '../types'
import { migrateSqlite, openSqlite, type SqliteOptions } from './connection'
import { sqliteMigrations } from './migrations'
import { sqliteProductStore } from './products'
import { sqliteMerchantStore } from './merchants'
import { sqlitePaymentStore } from './payments'
import { sqliteIdempotencyStore } from './idempotency'
import { sqliteLedgerStore } from './ledger'

export function createSqliteDatabase (url: string, options: SqliteOptions): Database {
  const db = openSqlite(url, options)
  migrateSqlite(db, sqliteMigrations)
  return {
    kind: 'sqlite',
    products: sqliteProductStore(db),
    merchants: sqliteMerchantStore(db),
    payments: sqlitePaymentStore(db),
    idempotency: sqliteIdempotencyStore(db),
    ledger: sqliteLedgerStore(db),
    async ping () {
      db.prepare('SELECT 1').get()
    },
    async close () {
      if (db.open) db.close()
    }
  }
}
