/**
 * Migration 40 (manual capture) on both dialects: existing payments get their captured amount
 * (succeeded and refunded ones were captured in full), refunds keep pointing at their payments,
 * and the CHECK `amount_refunded + refund_pending <= amount_captured <= amount` refuses any write
 * that would make captured, refunded and capturable amounts disagree.
 * PostgreSQL is skipped with a message when unreachable (failed with REQUIRE_POSTGRES=1).
 */
import t from 'tap'
import { migrateSqlite, openSqlite } from '../../src/store/sqlite/connection'
import { sqliteMigrations } from '../../src/store/sqlite/migrations'
import { migratePostgres, openPool } from '../../src/store/postgres/connection'
import { postgresMigrations } from '../../src/store/postgres/migrations'
import { ensurePostgres, freshSchema } from '../helpers/postgres'

const AT = '2025-01-01T00:00:00.000Z'
/** Payments as the service wrote them before migration 40: id, status, amount, refunded. */
const OLD_PAYMENTS: Array<[string, string, number, number]> = [
  ['paid', 'succeeded', 1000, 0],
  ['part', 'partially_refunded', 1000, 400],
  ['back', 'refunded', 1000, 1000],
  ['wait', 'pending', 1000, 0],
  ['gone', 'canceled', 1000, 0],
  ['nope', 'declined', 1000, 0]
]
const EXPECTED = [
  { id: 'back', amount_captured_minor: 1000, cancellation_reason: null, capture_method: 'automatic' },
  { id: 'gone', amount_captured_minor: 0, cancellation_reason: 'requested', capture_method: 'automatic' },
  { id: 'nope', amount_captured_minor: 0, cancellation_reason: null, capture_method: 'automatic' },
  { id: 'paid', amount_captured_minor: 1000, cancellation_reason: null, capture_method: 'automatic' },
  { id: 'part', amount_captured_minor: 1000, cancellation_reason: null, capture_method: 'automatic' },
  { id: 'wait', amount_captured_minor: 0, cancellation_reason: null, capture_method: 'automatic' }
]
const AFTER = 'SELECT id, amount_captured_minor, cancellation_reason, capture_method FROM payments ORDER BY id'
/** Writes the CHECK must refuse: more refunded than captured, more captured than the amount, a hold beyond the capture. */
const VIOLATIONS = [
  "UPDATE payments SET amount_refunded_minor = 1001 WHERE id = 'back'",
  "UPDATE payments SET amount_captured_minor = 1001 WHERE id = 'paid'",
  "UPDATE payments SET refund_pending_minor = 700 WHERE id = 'part'",
  "UPDATE payments SET amount_captured_minor = 300 WHERE id = 'part'"
]

t.test('SQLite: migration 40 on a database with payments and refunds', async (t) => {
  const db = openSqlite('file::memory:', { synchronous: 'FULL' })
  t.teardown(() => { db.close() })
  await migrateSqlite(db, sqliteMigrations.filter((m) => m.version < 40))
  for (const [id, status, amount, refunded] of OLD_PAYMENTS) {
    db.prepare('INSERT INTO payments (id, amount_minor, currency, status, amount_refunded_minor, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(id, amount, 'USD', status, refunded, AT, AT)
  }
  db.prepare("INSERT INTO refunds (id, payment_id, amount_minor, currency, status, created_at, updated_at) VALUES ('r1', 'part', 400, 'USD', 'succeeded', ?, ?)").run(AT, AT)
  t.same(await migrateSqlite(db, sqliteMigrations.filter((m) => m.version <= 40)), [40])
  t.same(db.prepare(AFTER).all(), EXPECTED)
  t.same(db.prepare('SELECT id, payment_id FROM refunds').all(), [{ id: 'r1', payment_id: 'part' }], 'refunds kept')
  t.same(db.pragma('foreign_key_check'), [], 'foreign keys intact')
  t.throws(() => db.prepare("INSERT INTO refunds (id, payment_id, amount_minor, currency, status, created_at, updated_at) VALUES ('r2', 'missing', 1, 'USD', 'pending', ?, ?)").run(AT, AT),
    /FOREIGN KEY/, 'refunds still reference payments')
  for (const sql of VIOLATIONS) t.throws(() => db.prepare(sql).run(), /CHECK constraint failed/, sql)
  t.throws(() => db.prepare("UPDATE payments SET status = 'authorized' WHERE id = 'wait'").run(), /CHECK constraint failed/, 'unknown status')
  db.prepare("UPDATE payments SET status = 'requires_capture', capture_method = 'manual' WHERE id = 'wait'").run()
  t.same(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('payments', 'refunds') AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all(), [
    'payments_authorizations', 'payments_captures_in_flight', 'payments_created', 'payments_merchant_created', 'payments_merchant_status_created',
    'payments_pending', 'refunds_payment_created', 'refunds_pending'
  ], 'every index rebuilt')
})

async function main (): Promise<void> {
  if (!await ensurePostgres(t)) return
  t.test('PostgreSQL: migration 40 on a database with payments and refunds', async (t) => {
    const schema = await freshSchema(t)
    const pool = openPool(schema.url, { poolSize: 2 })
    t.teardown(async () => { await pool.end() })
    await migratePostgres(pool, postgresMigrations.filter((m) => m.version < 40))
    for (const [id, status, amount, refunded] of OLD_PAYMENTS) {
      await schema.query('INSERT INTO payments (id, amount_minor, currency, status, amount_refunded_minor, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)',
        [id, amount, 'USD', status, refunded, AT])
    }
    await schema.query("INSERT INTO refunds (id, payment_id, amount_minor, currency, status, created_at, updated_at) VALUES ('r1', 'part', 400, 'USD', 'succeeded', $1, $1)", [AT])
    t.same(await migratePostgres(pool, postgresMigrations.filter((m) => m.version <= 40)), [40])
    const rows = await schema.query<{ amount_captured_minor: string }>(AFTER)
    t.same(rows.map((row) => ({ ...row, amount_captured_minor: Number(row.amount_captured_minor) })), EXPECTED)
    for (const sql of VIOLATIONS) await t.rejects(schema.query(sql), { code: '23514', constraint: 'payments_amounts_agree' }, sql)
    await t.rejects(schema.query("UPDATE payments SET status = 'authorized' WHERE id = 'wait'"), { code: '23514' }, 'unknown status')
  })
}

main().catch((err: unknown) => { t.threw(err as Error) })
