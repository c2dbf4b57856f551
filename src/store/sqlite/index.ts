import type { Database } from '../types'
import { migrateSqlite, openSqlite, type SqliteOptions } from './connection'
import { sqliteMigrations } from './migrations'
import { sqliteProductStore } from './products'

export function createSqliteDatabase (url: string, options: SqliteOptions): Database {
  const db = openSqlite(url, options)
  migrateSqlite(db, sqliteMigrations)
  return {
    kind: 'sqlite',
    products: sqliteProductStore(db),
    async ping () {
      db.prepare('SELECT 1').get()
    },
    async close () {
      if (db.open) db.close()
    }
  }
}
