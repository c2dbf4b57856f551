import t from 'tap'
import { createSqliteDatabase } from '../../../src/store/sqlite'
import { migrateSqlite, openSqlite } from '../../../src/store/sqlite/connection'
import { sqliteMigrations } from '../../../src/store/sqlite/migrations'
import { merchantStoreContract } from '../merchants.contract'
import { storeContract } from '../contract'
import { apiKeyStoreContract } from '../api-keys.contract'
import { dashboardSessionStoreContract } from '../dashboard-sessions.contract'
import { paymentQueryContract } from '../payment-queries.contract'
import { webhookStoreContract } from '../webhooks.contract'
import { connectorStoreContract } from '../connectors.contract'
import { connectorEventStoreContract } from '../connector-events.contract'
import { disputeStoreContract } from '../disputes.contract'
import { teamStoreContract } from '../team.contract'
import type { Database } from '../../../src/store/types'
import BetterSqlite3 from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const makeSqlite = async () => await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })

t.test('SQLite: merchant store contract', async (t) => {
  merchantStoreContract(t, makeSqlite)
})

t.test('SQLite: store contract', async (t) => {
  storeContract(t, makeSqlite)
})

t.test('SQLite: API key store contract', async (t) => {
  apiKeyStoreContract(t, makeSqlite)
})

t.test('SQLite: dashboard session store contract', async (t) => {
  dashboardSessionStoreContract(t, makeSqlite)
})

t.test('SQLite: payment queries of the dashboard', async (t) => {
  paymentQueryContract(t, makeSqlite)
})

t.test('SQLite: events and webhooks store contract', async (t) => {
  webhookStoreContract(t, makeSqlite)
})

t.test('SQLite: connector account store contract', async (t) => {
  connectorStoreContract(t, makeSqlite)
})

t.test('SQLite: connector events inbox contract', async (t) => {
  connectorEventStoreContract(t, makeSqlite)
})

t.test('SQLite: users, sign-in failures and audit log contract', async (t) => {
  // Files, so that the raw SQL reaches the database through a connection of its own, as a person with a SQL prompt would.
  const dir = mkdtempSync(join(tmpdir(), 'team-contract-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const files = new WeakMap<Database, string>()
  let n = 0
  teamStoreContract(t, async () => {
    const file = join(dir, `team-${++n}.db`)
    const db = await createSqliteDatabase(`file:${file}`, { synchronous: 'FULL' })
    files.set(db, file)
    return db
  }, async (db, text) => {
    const raw = new BetterSqlite3(files.get(db) ?? '')
    try { raw.exec(text) } finally { raw.close() }
  })
})

t.test('SQLite: dispute store contract', async (t) => {
  disputeStoreContract(t, makeSqlite)
})

t.test('SQLite: migrating a database with payments gives them no merchant', async (t) => {
  const db = openSqlite('file::memory:', { synchronous: 'FULL' })
  t.teardown(() => { db.close() })
  await migrateSqlite(db, sqliteMigrations.filter((m) => m.version < 20))
  db.prepare(`INSERT INTO payments (id, amount_minor, currency, status, created_at, updated_at)
    VALUES ('old', 100, 'USD', 'succeeded', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`).run()
  t.same(await migrateSqlite(db, sqliteMigrations), [20, 30, 40, 50, 60, 70, 80, 81, 82, 83, 90, 100, 110, 111, 120, 125, 130, 131, 140, 141, 150, 160], 'auth (20), events and webhooks (30), manual capture (40), instances (50), connector accounts (60), routing (70), connector events (80, 81), refunds made at connectors (82), connector call log (83), payment methods per connector (90), API versions (100), dashboard sessions (110), money held (111), customers (120), customer-present payments (125), disputes (130, 131), checkout data while pending (140), canceled at the connector (141), event data format (150), users and audit log (160)')
  t.match(db.prepare("SELECT connector_id, connector_type, attempts FROM payments WHERE id = 'old'").get(), { connector_id: null, connector_type: 'simulated', attempts: '[]' }, 'old payments were made on the default gateway')
  t.same(db.prepare("SELECT merchant_id FROM payments WHERE id = 'old'").get(), { merchant_id: null })
})

t.test('SQLite: merchants and webhook endpoints from before versioning are pinned to the first version', async (t) => {
  const db = openSqlite('file::memory:', { synchronous: 'FULL' })
  t.teardown(() => { db.close() })
  await migrateSqlite(db, sqliteMigrations.filter((m) => m.version < 100))
  const at = '2026-01-01T00:00:00.000Z'
  db.prepare(`INSERT INTO merchants (id, name, email, status, metadata, version, created_at, updated_at) VALUES ('m', 'M', 'm@example.com', 'active', '{}', 1, '${at}', '${at}')`).run()
  db.prepare(`INSERT INTO webhook_endpoints (id, merchant_id, url, secret, created_at, updated_at) VALUES ('e', 'm', 'https://x.example', 's', '${at}', '${at}')`).run()
  t.same(await migrateSqlite(db, sqliteMigrations.filter((m) => m.version <= 100)), [100])
  t.same(db.prepare("SELECT api_version FROM merchants WHERE id = 'm'").get(), { api_version: '2026-11-01' })
  t.same(db.prepare("SELECT api_version FROM webhook_endpoints WHERE id = 'e'").get(), { api_version: '2026-11-01' })
})

t.test('SQLite migrations: a restart applies nothing; a failing migration rolls back, is not recorded and names itself', async (t) => {
  const db = openSqlite('file::memory:', { synchronous: 'FULL' })
  t.teardown(() => { db.close() })
  const all = sqliteMigrations.map((m) => m.version)
  t.same(await migrateSqlite(db, sqliteMigrations), all, 'every migration, in version order')
  t.same(await migrateSqlite(db, sqliteMigrations), [], 'a restart applies nothing')
  const broken = [...sqliteMigrations, { version: 999, name: 'broken', sql: 'CREATE TABLE half (id INTEGER); SELECT no_such_function()' }]
  await t.rejects(migrateSqlite(db, broken), /SQLite migration 999 \(broken\) failed: no such function/)
  t.notOk(db.inTransaction, 'no transaction left open')
  t.same(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").all(), [], 'rolled back')
  t.same(db.prepare('SELECT version FROM schema_migrations WHERE version = 999').all(), [], 'not recorded')
  t.equal((db.prepare('SELECT count(*) AS n FROM schema_migrations').get() as { n: number }).n, all.length)
})
