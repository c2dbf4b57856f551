/**
 * Migration 141 (canceled at the connector, issue 40) on both dialects: the cancellation reason CHECK takes `connector`;
 * SQLite's rebuild of payments (and of refunds and disputes, which reference it) keeps every row, column and index, the
 * CHECKs that bound refunded + disputed by captured, and the foreign keys. PostgreSQL is skipped with a message when
 * unreachable (failed with REQUIRE_POSTGRES=1).
 */
import t from 'tap'
import { migrateSqlite, openSqlite } from '../../src/store/sqlite/connection'
import { sqliteMigrations } from '../../src/store/sqlite/migrations'
import { migratePostgres, openPool } from '../../src/store/postgres/connection'
import { postgresMigrations } from '../../src/store/postgres/migrations'
import { ensurePostgres, freshSchema } from '../helpers/postgres'

const AT = '2026-01-01T00:00:00.000Z'
const INSERT = `INSERT INTO payments (id, amount_minor, currency, status, created_at, updated_at, amount_captured_minor, amount_refunded_minor, merchant_id,
  connector_id, connector_type, connector_reference, attempts, payment_methods, money_held, capture_method, cancellation_reason, return_url, action_token,
  amount_disputed_minor, dispute_open, checkout_data)
  VALUES ('p1', 1000, 'EUR', 'partially_refunded', '${AT}', '${AT}', 1000, 400, 'm1', 'c1', 'stripe', 'pi_1', '[]', '{}', 0, 'automatic', NULL,
  'https://shop.example.com/done', 'tok1', 300, 1, NULL),
  ('p2', 500, 'EUR', 'requires_capture', '${AT}', '${AT}', 0, 0, 'm1', NULL, 'simulated', NULL, '[]', '{}', 0, 'manual', NULL, NULL, NULL, NULL, 0, NULL)`
const CHILDREN = `INSERT INTO refunds (id, payment_id, amount_minor, currency, status, reason, created_at, updated_at, origin, connector_reference)
  VALUES ('r1', 'p1', 400, 'EUR', 'succeeded', 'damaged', '${AT}', '${AT}', 'connector', 're_1');
  INSERT INTO disputes (id, merchant_id, payment_id, amount_minor, currency, reason, status, funds_withdrawn, connector_id, connector_type, connector_reference, stage, funds_stage, created_at, updated_at)
  VALUES ('d1', 'm1', 'p1', 300, 'EUR', 'fraudulent', 'needs_response', 1, 'c1', 'stripe', 'dp_1', 1, 1, '${AT}', '${AT}')`
const INDEXES = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('payments', 'refunds', 'disputes') AND name NOT LIKE 'sqlite_%' ORDER BY name"

t.test('SQLite: migration 141 rebuilds payments, refunds and disputes with every column, row and index; the reason CHECK takes connector', async (t) => {
  const db = openSqlite('file::memory:', { synchronous: 'FULL' })
  t.teardown(() => { db.close() })
  await migrateSqlite(db, sqliteMigrations.filter((m) => m.version < 141))
  db.exec(INSERT)
  db.exec(CHILDREN)
  const tables = ['payments', 'refunds', 'disputes']
  const columnsBefore = tables.map((table) => db.pragma(`table_info(${table})`))
  const indexesBefore = db.prepare(INDEXES).all()
  const rowsBefore = tables.map((table) => db.prepare(`SELECT * FROM ${table} ORDER BY id`).all())
  t.same(await migrateSqlite(db, sqliteMigrations.filter((m) => m.version <= 141)), [141])
  t.same(tables.map((table) => db.pragma(`table_info(${table})`)), columnsBefore, 'every column kept, with its type, NOT NULL and default, in order')
  t.same(db.prepare(INDEXES).all(), indexesBefore, 'every index rebuilt as it was')
  t.same(tables.map((table) => db.prepare(`SELECT * FROM ${table} ORDER BY id`).all()), rowsBefore, 'every row kept')
  t.same(db.pragma('foreign_key_check'), [], 'foreign keys intact')
  for (const table of ['refunds', 'disputes']) {
    const sql = table === 'refunds'
      ? `INSERT INTO refunds (id, payment_id, amount_minor, currency, status, created_at, updated_at) VALUES ('r2', 'missing', 1, 'EUR', 'pending', '${AT}', '${AT}')`
      : `INSERT INTO disputes (id, payment_id, amount_minor, currency, status, funds_withdrawn, connector_id, connector_type, connector_reference, stage, funds_stage, created_at, updated_at)
         VALUES ('d2', 'missing', 1, 'EUR', 'won', 0, 'c1', 'stripe', 'dp_2', 1, 0, '${AT}', '${AT}')`
    t.throws(() => db.prepare(sql).run(), /FOREIGN KEY/, `${table} still reference payments`)
  }
  db.prepare("UPDATE payments SET status = 'canceled', cancellation_reason = 'connector' WHERE id = 'p2'").run()
  t.throws(() => db.prepare("UPDATE payments SET cancellation_reason = 'bored' WHERE id = 'p2'").run(), /CHECK constraint failed/, 'unknown reason')
  t.throws(() => db.prepare("UPDATE payments SET amount_disputed_minor = 601 WHERE id = 'p1'").run(), /CHECK constraint failed/, 'refunded + disputed within captured')
  t.throws(() => db.prepare("UPDATE payments SET amount_refunded_minor = 1001 WHERE id = 'p1'").run(), /CHECK constraint failed/, 'amounts still agree')
  t.throws(() => db.prepare("UPDATE payments SET action_token = 'tok1' WHERE id = 'p2'").run(), /UNIQUE constraint failed/, 'action tokens are unique')
})

async function main (): Promise<void> {
  if (!await ensurePostgres(t)) return
  t.test('PostgreSQL: migration 141 swaps the reason CHECK', async (t) => {
    const schema = await freshSchema(t)
    const pool = openPool(schema.url, { poolSize: 2 })
    t.teardown(async () => { await pool.end() })
    await migratePostgres(pool, postgresMigrations.filter((m) => m.version < 141))
    await schema.query(INSERT)
    await migratePostgres(pool, postgresMigrations)
    await schema.query("UPDATE payments SET status = 'canceled', cancellation_reason = 'connector' WHERE id = 'p2'")
    await t.rejects(schema.query("UPDATE payments SET cancellation_reason = 'bored' WHERE id = 'p2'"), { code: '23514' }, 'unknown reason')
    t.same((await schema.query<{ cancellation_reason: string }>("SELECT cancellation_reason FROM payments WHERE id = 'p2'")).map((row) => ({ ...row })), [{ cancellation_reason: 'connector' }])
  })
}

main().catch((err: unknown) => { t.threw(err as Error) })
