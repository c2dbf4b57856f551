/**
 * The store contracts against a real PostgreSQL server, each database in a fresh
 * schema. Unreachable server: skipped with a message, or failed with REQUIRE_POSTGRES=1.
 */
import t from 'tap'
import pg from 'pg'
import type { Database } from '../../src/store/types'
import { openDatabase } from '../../src/store'
import { createPostgresDatabase } from '../../src/store/postgres'
import { migratePostgres, openPool } from '../../src/store/postgres/connection'
import { postgresMigrations } from '../../src/store/postgres/migrations'
import { loadConfig } from '../../src/config'
import { storeContract } from './contract'
import { apiKeyStoreContract } from './api-keys.contract'
import { webhookStoreContract } from './webhooks.contract'
import { merchantStoreContract } from './merchants.contract'
import { ensurePostgres, freshSchema, POSTGRES_TEST_URL, urlWithSearchPath } from '../helpers/postgres'

async function main (): Promise<void> {
  if (!await ensurePostgres(t)) return
  const makePostgres = async (): Promise<Database> => {
    const schema = await freshSchema(t)
    return await createPostgresDatabase(schema.url, { poolSize: 5 })
  }

  t.test('PostgreSQL: store contract', async (t) => {
    storeContract(t, makePostgres)
  })

  t.test('PostgreSQL: merchant store contract', async (t) => {
    merchantStoreContract(t, makePostgres)
  })

  t.test('PostgreSQL: API key store contract', async (t) => {
    apiKeyStoreContract(t, makePostgres)
  })

  t.test('PostgreSQL: events and webhooks store contract', async (t) => {
    webhookStoreContract(t, makePostgres)
  })

  t.test('schema: BIGINT money, TEXT ISO timestamps, BIGINT epoch-ms key times, unique lower(email)', async (t) => {
    const schema = await freshSchema(t)
    const db = await createPostgresDatabase(schema.url, { poolSize: 1 })
    t.teardown(async () => { await db.close() })
    const columns = await schema.query<{ table_name: string, column_name: string, data_type: string }>(
      'SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = $1', [schema.name])
    const type = (table: string, column: string): string | undefined =>
      columns.find((c) => c.table_name === table && c.column_name === column)?.data_type
    t.equal(type('payments', 'amount_minor'), 'bigint')
    t.equal(type('gateway_ledger', 'amount_minor'), 'bigint')
    t.equal(type('payments', 'created_at'), 'text')
    t.equal(type('products', 'updated_at'), 'text')
    t.equal(type('merchants', 'created_at'), 'text')
    t.equal(type('idempotency_keys', 'created_at'), 'bigint')
    t.equal(type('idempotency_keys', 'expires_at'), 'bigint')
    t.equal(type('idempotency_keys', 'locked_until'), 'bigint')
    const indexes = await schema.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'merchants_email_unique'", [schema.name])
    t.match(indexes[0]?.indexdef, /UNIQUE INDEX .* \(lower\(email\)\)/)
    t.same((await schema.query('SELECT version, name FROM schema_migrations ORDER BY version')).map((row) => row.version),
      postgresMigrations.map((m) => m.version), 'every migration recorded')
  })

  t.test('migrations: several instances starting at once migrate exactly once', async (t) => {
    const schema = await freshSchema(t)
    const pools = Array.from({ length: 4 }, () => openPool(schema.url, { poolSize: 2 }))
    t.teardown(async () => { await Promise.all(pools.map(async (pool) => { await pool.end() })) })
    const applied = await Promise.all(pools.map(async (pool) => await migratePostgres(pool, postgresMigrations)))
    const all = postgresMigrations.map((m) => m.version)
    t.same(applied.filter((versions) => versions.length > 0), [all], 'one instance applied them all, the others found nothing to do')
    t.same(await migratePostgres(pools[0], postgresMigrations), [], 'a restart applies nothing')
    t.equal((await schema.query('SELECT count(*)::int AS n FROM schema_migrations'))[0].n, all.length)
  })

  t.test('migrations: a failing migration rolls back, is not recorded and names itself', async (t) => {
    const schema = await freshSchema(t)
    const pool = openPool(schema.url, { poolSize: 1 })
    t.teardown(async () => { await pool.end() })
    const broken = [...postgresMigrations, { version: 999, name: 'broken', sql: 'CREATE TABLE half (id INT); SELECT no_such_function()' }]
    await t.rejects(migratePostgres(pool, broken), /PostgreSQL migration 999 \(broken\) failed/)
    t.same(await schema.query("SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'half'", [schema.name]), [], 'rolled back')
    t.same(await schema.query('SELECT version FROM schema_migrations WHERE version = 999'), [])
    t.same(await migratePostgres(pool, postgresMigrations), [], 'the lock was released: the next run proceeds')
  })

  t.test('pool size follows DATABASE_POOL_SIZE; close is idempotent; ping', async (t) => {
    const schema = await freshSchema(t)
    const db = await createPostgresDatabase(schema.url, { poolSize: 3 })
    await db.ping()
    await Promise.all(Array.from({ length: 12 }, async () => await db.products.get('x')))
    const [{ n }] = await schema.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'product-payment-service' AND query NOT LIKE '%pg_stat_activity%' AND backend_type = 'client backend' AND datname = current_database() AND pid <> pg_backend_pid()")
    t.ok(n >= 1, 'connections are open')
    await db.close()
    await db.close()
    await t.rejects(db.ping(), 'a closed database refuses queries')
  })

  t.test('openDatabase picks PostgreSQL for postgres:// URLs and honours DATABASE_POOL_SIZE', async (t) => {
    const schema = await freshSchema(t)
    const db = await openDatabase(loadConfig({ DATABASE_URL: schema.url, DATABASE_POOL_SIZE: '2', ADMIN_API_KEY: 'test-admin-key-0123456789abcdefghijklmnop' }))
    t.teardown(async () => { await db.close() })
    t.equal(db.kind, 'postgres')
    await db.products.put({ id: 'a', name: 'A', price: 1 })
    const tables = await schema.query("SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'products'", [schema.name])
    t.equal(tables.length, 1, 'created in the schema named by the URL options')
  })

  t.test('an unreachable server fails start-up with the driver error, not a hang', async (t) => {
    const started = Date.now()
    await t.rejects(createPostgresDatabase(urlWithSearchPath('postgres://postgres@127.0.0.1:1/test', 'public'), { poolSize: 1 }))
    t.ok(Date.now() - started < 10_000)
  })

  t.test('idle connection errors go to onIdleError instead of crashing the process', async (t) => {
    const schema = await freshSchema(t)
    const errors: Error[] = []
    const pool = openPool(schema.url, { poolSize: 1, onIdleError: (err) => { errors.push(err) } })
    t.teardown(async () => { await pool.end() })
    const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    const admin = new pg.Client({ connectionString: POSTGRES_TEST_URL })
    await admin.connect()
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid])
    await admin.end()
    for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    t.equal(errors.length, 1)
    t.same((await pool.query('SELECT 1 AS one')).rows, [{ one: 1 }], 'the pool replaces the connection')
  })
}

main().catch((err: unknown) => { t.threw(err as Error) })
