import t from 'tap'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { migrateSqlite, openSqlite } from '../../src/store/sqlite/connection'
import { sqliteMigrations } from '../../src/store/sqlite/migrations'
import { merchantStoreContract } from './merchants.contract'
import { storeContract } from './contract'
import { apiKeyStoreContract } from './api-keys.contract'

const makeSqlite = async () => createSqliteDatabase('file::memory:', { synchronous: 'FULL' })

t.test('SQLite: merchant store contract', async (t) => {
  merchantStoreContract(t, makeSqlite)
})

t.test('SQLite: store contract', async (t) => {
  storeContract(t, makeSqlite)
})

t.test('SQLite: API key store contract', async (t) => {
  apiKeyStoreContract(t, makeSqlite)
})

t.test('SQLite: migrating a database with payments gives them no merchant', async (t) => {
  const db = openSqlite('file::memory:', { synchronous: 'FULL' })
  t.teardown(() => { db.close() })
  migrateSqlite(db, sqliteMigrations.filter((m) => m.version < 20))
  db.prepare(`INSERT INTO payments (id, amount_minor, currency, status, created_at, updated_at)
    VALUES ('old', 100, 'USD', 'succeeded', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`).run()
  t.same(migrateSqlite(db, sqliteMigrations), [20])
  t.same(db.prepare("SELECT merchant_id FROM payments WHERE id = 'old'").get(), { merchant_id: null })
})
