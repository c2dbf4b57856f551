/**
 * Migration 150 (events: data format, issue 39) on both dialects: the rows written before it hold the representation
 * itself and are marked `rendered`, so they are listed and delivered as they were; a row that names no format (an
 * instance of the previous release during a rolling deploy) is `rendered` too; only the two formats are accepted.
 * PostgreSQL is skipped with a message when unreachable (failed with REQUIRE_POSTGRES=1).
 */
import t, { type Test } from 'tap'
import { migrateSqlite, openSqlite } from '../../src/store/sqlite/connection'
import { sqliteMigrations } from '../../src/store/sqlite/migrations'
import { migratePostgres, openPool } from '../../src/store/postgres/connection'
import { postgresMigrations } from '../../src/store/postgres/migrations'
import { eventFromRow, type EventRow } from '../../src/store/webhook-rows'
import { deliveryBody } from '../../src/domain/webhooks'
import { renderEventData, toEventResource } from '../../schemas/events'
import { ensurePostgres, freshSchema } from '../helpers/postgres'
import { itemAt } from '../helpers/items'

const AT = '2026-01-01T00:00:00.000Z'
/** A payment.succeeded event as the release before snapshots stored it: its data the Payment representation. */
const OLD_DATA = { id: 'p1', status: 'succeeded', amount: 10.5, currency: 'EUR', amountRefunded: 0, createdAt: AT, updatedAt: AT }
const INSERT_OLD = `INSERT INTO events (id, merchant_id, type, resource_type, resource_id, sequence, data, created_at)
  VALUES ('ev-old', 'm1', 'payment.succeeded', 'payment', 'p1', 1, '${JSON.stringify(OLD_DATA)}', '${AT}')`
const INSERT_SNAPSHOT = `INSERT INTO events (id, merchant_id, type, resource_type, resource_id, sequence, data, created_at, data_format)
  VALUES ('ev-new', 'm1', 'merchant.updated', 'merchant', 'm1', 1, '{}', '${AT}', 'snapshot')`
const INSERT_UNKNOWN = `INSERT INTO events (id, merchant_id, type, resource_type, resource_id, sequence, data, created_at, data_format)
  VALUES ('ev-bad', 'm1', 'merchant.updated', 'merchant', 'm1', 2, '{}', '${AT}', 'html')`
const INSERT_UNNAMED = `INSERT INTO events (id, merchant_id, type, resource_type, resource_id, sequence, data, created_at)
  VALUES ('ev-rolling', 'm1', 'payment.succeeded', 'payment', 'p2', 1, '{}', '${AT}')`
const FORMATS = 'SELECT id, data_format FROM events ORDER BY id'

/** The old row, read by the store's mapper, is listed and delivered exactly as before the change. */
function rendersAsBefore (t: Test, row: EventRow): void {
  const event = eventFromRow(row)
  t.equal(event.dataFormat, 'rendered')
  t.equal(JSON.stringify(renderEventData(event)), JSON.stringify(OLD_DATA), 'its data as stored')
  t.same(toEventResource(event), { id: 'ev-old', type: 'payment.succeeded', createdAt: AT, sequence: 1, resource: { type: 'payment', id: 'p1' }, data: OLD_DATA })
  t.equal(deliveryBody(event, '2026-11-01', renderEventData), JSON.stringify({ type: 'payment.succeeded', timestamp: AT, data: OLD_DATA, sequence: 1 }))
}

t.test('SQLite: migration 150 marks the existing events rendered; new rows name their format; only the two are accepted', async (t) => {
  const db = openSqlite('file::memory:', { synchronous: 'FULL' })
  t.teardown(() => { db.close() })
  await migrateSqlite(db, sqliteMigrations.filter((m) => m.version < 150))
  db.exec(INSERT_OLD)
  t.same(await migrateSqlite(db, sqliteMigrations.filter((m) => m.version <= 150)), [150])
  db.exec(INSERT_SNAPSHOT)
  db.exec(INSERT_UNNAMED)
  t.same(db.prepare(FORMATS).all(), [
    { id: 'ev-new', data_format: 'snapshot' }, { id: 'ev-old', data_format: 'rendered' }, { id: 'ev-rolling', data_format: 'rendered' }
  ])
  t.throws(() => db.exec(INSERT_UNKNOWN), /CHECK constraint failed/, 'an unknown format')
  rendersAsBefore(t, db.prepare("SELECT * FROM events WHERE id = 'ev-old'").get() as EventRow)
})

async function main (): Promise<void> {
  if (!await ensurePostgres(t)) return
  t.test('PostgreSQL: migration 150 marks the existing events rendered; new rows name their format; only the two are accepted', async (t) => {
    const schema = await freshSchema(t)
    const pool = openPool(schema.url, { poolSize: 2 })
    t.teardown(async () => { await pool.end() })
    await migratePostgres(pool, postgresMigrations.filter((m) => m.version < 150))
    await schema.query(INSERT_OLD)
    t.same(await migratePostgres(pool, postgresMigrations.filter((m) => m.version <= 150)), [150])
    await schema.query(INSERT_SNAPSHOT)
    await schema.query(INSERT_UNNAMED)
    t.same((await schema.query(FORMATS)).map((row) => ({ ...row })), [
      { id: 'ev-new', data_format: 'snapshot' }, { id: 'ev-old', data_format: 'rendered' }, { id: 'ev-rolling', data_format: 'rendered' }
    ])
    await t.rejects(schema.query(INSERT_UNKNOWN), { code: '23514' }, 'an unknown format')
    rendersAsBefore(t, { ...itemAt(await schema.query<EventRow>("SELECT * FROM events WHERE id = 'ev-old'"), 0) })
  })
}

main().catch((err: unknown) => { t.threw(err as Error) })
