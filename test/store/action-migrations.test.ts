/**
 * Migration 125 (customer-present payments) on both dialects: the status CHECK takes requires_action and the
 * cancellation reason CHECK abandoned; SQLite's rebuild of payments (and of refunds, which references it) keeps
 * every row, every column earlier migrations added (111's money_held, 120's customer columns, …) and every index.
 * PostgreSQL is skipped with a message when unreachable (failed with REQUIRE_POSTGRES=1).
 */
import t from 'tap'
import { migrateSqlite, openSqlite } from '../../src/store/sqlite/connection'
import { sqliteMigrations } from '../../src/store/sqlite/migrations'
import { migratePostgres, openPool } from '../../src/store/postgres/connection'
import { postgresMigrations } from '../../src/store/postgres/migrations'
import { ensurePostgres, freshSchema } from '../helpers/postgres'

const AT = '2026-01-01T00:00:00.000Z'
const INSERT = `INSERT INTO payments (id, amount_minor, currency, status, created_at, updated_at, amount_captured_minor, amount_refunded_minor, merchant_id,
  payment_method, connector_id, connector_type, connector_reference, attempts, payment_methods, shopper_reference, money_held, customer, customer_email,
  payment_method_details, card_last4, metadata, capture_method, capture_before, cancellation_reason)
  VALUES ('p1', 1000, 'EUR', 'partially_refunded', '${AT}', '${AT}', 1000, 400, 'm1', 'pm_card_visa', 'c1', 'stripe', 'pi_1', '[]', '{"stripe":"pm_1"}', 'shopper-1', 1,
  '{"email":"a@example.com"}', 'a@example.com', '{"type":"card"}', '4242', '{"orderId":"A-1"}', 'automatic', NULL, NULL),
  ('p2', 500, 'EUR', 'canceled', '${AT}', '${AT}', 0, 0, 'm1', NULL, NULL, 'simulated', NULL, '[]', '{}', NULL, 0, NULL, NULL, NULL, NULL, '{}', 'manual', '${AT}', 'authorization_expired')`
const REFUND = `INSERT INTO refunds (id, payment_id, amount_minor, currency, status, reason, created_at, updated_at) VALUES ('r1', 'p1', 400, 'EUR', 'succeeded', 'damaged', '${AT}', '${AT}')`
const ROWS = 'SELECT * FROM payments ORDER BY id'

t.test('SQLite: migration 125 rebuilds payments with every column, row and index; the CHECKs take requires_action and abandoned', async (t) => {
  const db = openSqlite('file::memory:', { synchronous: 'FULL' })
  t.teardown(() => { db.close() })
  await migrateSqlite(db, sqliteMigrations.filter((m) => m.version < 125))
  db.exec(INSERT)
  db.exec(REFUND)
  const columnsBefore = db.pragma('table_info(payments)') as Array<{ name: string, type: string, notnull: number, dflt_value: unknown }>
  const indexesBefore = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('payments', 'refunds') AND name NOT LIKE 'sqlite_%' ORDER BY name").all()
  const rowsBefore = db.prepare(ROWS).all() as Array<Record<string, unknown>>
  t.same(await migrateSqlite(db, sqliteMigrations.filter((m) => m.version <= 125)), [125])
  const columnsAfter = db.pragma('table_info(payments)') as Array<{ name: string }>
  t.same(columnsAfter.slice(0, columnsBefore.length), columnsBefore, 'every column kept, with its type, NOT NULL and default')
  t.same(columnsAfter.slice(columnsBefore.length).map((column) => column.name), ['return_url', 'action_token', 'next_action'])
  const indexesAfter = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('payments', 'refunds') AND name NOT LIKE 'sqlite_%' ORDER BY name").all()
  t.same(indexesAfter.filter((index) => !['payments_action_token', 'payments_awaiting_action'].includes((index as { name: string }).name)), indexesBefore, 'every index rebuilt as it was')
  t.same((db.prepare(ROWS).all() as Array<Record<string, unknown>>).map((row) => ({ ...row, return_url: undefined, action_token: undefined, next_action: undefined }))
    .map((row) => Object.fromEntries(Object.entries(row).filter(([, value]) => value !== undefined))), rowsBefore, 'every row kept')
  t.same(db.prepare('SELECT id, payment_id, reason FROM refunds').all(), [{ id: 'r1', payment_id: 'p1', reason: 'damaged' }], 'refunds kept')
  t.same(db.pragma('foreign_key_check'), [], 'foreign keys intact')
  t.throws(() => db.prepare(`INSERT INTO refunds (id, payment_id, amount_minor, currency, status, created_at, updated_at) VALUES ('r2', 'missing', 1, 'EUR', 'pending', '${AT}', '${AT}')`).run(),
    /FOREIGN KEY/, 'refunds still reference payments')
  db.prepare("UPDATE payments SET status = 'requires_action', action_token = 'tok' WHERE id = 'p2'").run()
  db.prepare("UPDATE payments SET cancellation_reason = 'abandoned' WHERE id = 'p2'").run()
  t.throws(() => db.prepare("UPDATE payments SET status = 'authorized' WHERE id = 'p2'").run(), /CHECK constraint failed/, 'unknown status')
  t.throws(() => db.prepare("UPDATE payments SET cancellation_reason = 'bored' WHERE id = 'p2'").run(), /CHECK constraint failed/, 'unknown reason')
  t.throws(() => db.prepare("UPDATE payments SET amount_refunded_minor = 1001 WHERE id = 'p1'").run(), /CHECK constraint failed/, 'amounts still agree')
  t.throws(() => db.prepare("UPDATE payments SET action_token = 'tok' WHERE id = 'p1'").run(), /UNIQUE constraint failed/, 'action tokens are unique')
})

async function main (): Promise<void> {
  if (!await ensurePostgres(t)) return
  t.test('PostgreSQL: migration 125 widens the CHECKs and adds the columns', async (t) => {
    const schema = await freshSchema(t)
    const pool = openPool(schema.url, { poolSize: 2 })
    t.teardown(async () => { await pool.end() })
    await migratePostgres(pool, postgresMigrations.filter((m) => m.version < 125))
    await schema.query(INSERT)
    await schema.query(REFUND)
    t.same(await migratePostgres(pool, postgresMigrations.filter((m) => m.version <= 125)), [125])
    t.same((await schema.query<{ id: string, status: string }>('SELECT id, status FROM payments ORDER BY id')).map((row) => ({ ...row })),
      [{ id: 'p1', status: 'partially_refunded' }, { id: 'p2', status: 'canceled' }])
    await schema.query("UPDATE payments SET status = 'requires_action', action_token = 'tok', cancellation_reason = 'abandoned' WHERE id = 'p2'")
    await t.rejects(schema.query("UPDATE payments SET status = 'authorized' WHERE id = 'p2'"), { code: '23514' }, 'unknown status')
    await t.rejects(schema.query("UPDATE payments SET cancellation_reason = 'bored' WHERE id = 'p2'"), { code: '23514' }, 'unknown reason')
    await t.rejects(schema.query("UPDATE payments SET action_token = 'tok' WHERE id = 'p1'"), { code: '23505' }, 'action tokens are unique')
  })
}

main().catch((err: unknown) => { t.threw(err as Error) })
