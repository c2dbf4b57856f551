/**
 * The store contracts against a real PostgreSQL server, each database in a fresh
 * schema. Unreachable server: skipped with a message, or failed with REQUIRE_POSTGRES=1.
 */
import t from 'tap'
import pg from 'pg'
import { randomUUID } from 'node:crypto'
import type { Database, IdempotencyKeyRef, Refund, RefundDecision } from '../../../src/store/types'
import type { NewEvent } from '../../../src/domain/events'
import { newPendingPayment, transition } from '../../../src/domain/payments'
import { openDatabase } from '../../../src/store'
import { createPostgresDatabase } from '../../../src/store/postgres'
import { migratePostgres, openPool } from '../../../src/store/postgres/connection'
import { postgresMigrations } from '../../../src/store/postgres/migrations'
import { loadConfig } from '../../../src/load-config'
import { storeContract } from '../contract'
import { apiKeyStoreContract } from '../api-keys.contract'
import { dashboardSessionStoreContract } from '../dashboard-sessions.contract'
import { paymentQueryContract } from '../payment-queries.contract'
import { webhookStoreContract } from '../webhooks.contract'
import { connectorStoreContract } from '../connectors.contract'
import { connectorEventStoreContract } from '../connector-events.contract'
import { disputeStoreContract } from '../disputes.contract'
import { merchantStoreContract } from '../merchants.contract'
import { teamStoreContract } from '../team.contract'
import { ensurePostgres, freshSchema, POSTGRES_TEST_URL, urlWithSearchPath, type TestSchema } from '../../helpers/postgres'
import { TEST_ENCRYPTION_KEYS } from '../../helpers/app'
import { itemAt } from '../../helpers/items'

async function main (): Promise<void> {
  if (!await ensurePostgres(t)) return
  const makePostgres = async (): Promise<Database> => {
    const schema = await freshSchema(t)
    return await createPostgresDatabase(schema.url, { poolSize: 5 })
  }

  t.test('PostgreSQL: store contract', async (t) => {
    storeContract(t, makePostgres)
  })

  t.test('PostgreSQL: users, sign-in failures and audit log contract', async (t) => {
    const schemas = new WeakMap<Database, TestSchema>()
    teamStoreContract(t, async () => {
      const schema = await freshSchema(t)
      const db = await createPostgresDatabase(schema.url, { poolSize: 5 })
      schemas.set(db, schema)
      return db
    }, async (db, text) => { await schemas.get(db)?.query(text) })
  })

  t.test('PostgreSQL: merchant store contract', async (t) => {
    merchantStoreContract(t, makePostgres)
  })

  t.test('PostgreSQL: API key store contract', async (t) => {
    apiKeyStoreContract(t, makePostgres)
  })

  t.test('PostgreSQL: dashboard session store contract', async (t) => {
    dashboardSessionStoreContract(t, makePostgres)
  })

  t.test('PostgreSQL: payment queries of the dashboard', async (t) => {
    paymentQueryContract(t, makePostgres)
  })

  t.test('PostgreSQL: events and webhooks store contract', async (t) => {
    webhookStoreContract(t, makePostgres)
  })

  t.test('PostgreSQL: connector account store contract', async (t) => {
    connectorStoreContract(t, makePostgres)
  })

  t.test('PostgreSQL: connector events inbox contract', async (t) => {
    connectorEventStoreContract(t, makePostgres)
  })

  t.test('PostgreSQL: dispute store contract', async (t) => {
    disputeStoreContract(t, makePostgres)
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
    t.same(await migratePostgres(itemAt(pools, 0), postgresMigrations), [], 'a restart applies nothing')
    t.equal(itemAt(await schema.query('SELECT count(*)::int AS n FROM schema_migrations'), 0).n, all.length)
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
    const { n } = itemAt(await schema.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'product-payment-service' AND query NOT LIKE '%pg_stat_activity%' AND backend_type = 'client backend' AND datname = current_database() AND pid <> pg_backend_pid()"), 0)
    t.ok(n >= 1, 'connections are open')
    await db.close()
    await db.close()
    await t.rejects(db.ping(), 'a closed database refuses queries')
  })

  t.test('openDatabase picks PostgreSQL for postgres:// URLs and honours DATABASE_POOL_SIZE', async (t) => {
    const schema = await freshSchema(t)
    const db = await openDatabase(loadConfig({ DATABASE_URL: schema.url, DATABASE_POOL_SIZE: '2', ADMIN_API_KEY: 'test-admin-key-0123456789abcdefghijklmnop', ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS }))
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
    await admin.query('SELECT pg_terminate_backend($1)', [itemAt(rows, 0).pid])
    await admin.end()
    for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    t.equal(errors.length, 1)
    t.same((await pool.query('SELECT 1 AS one')).rows, [{ one: 1 }], 'the pool replaces the connection')
  })

  /** Runs `work` and answers the statements it sent to the server (every pooled connection's queries). */
  async function statementsOf (work: () => Promise<unknown>): Promise<string[]> {
    const sent: string[] = []
    const query = pg.Client.prototype.query
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text: string }
      sent.push((typeof config === 'string' ? config : config.text).replace(/\s+/g, ' ').slice(0, 40))
      return (query as (...a: unknown[]) => unknown).apply(this, args)
    } as typeof query
    try {
      await work()
    } finally {
      pg.Client.prototype.query = query
    }
    return sent
  }

  const at = new Date().toISOString()
  const eventOf = (type: NewEvent['type']) => (resource: { id: string, merchantId: string | null } | RefundDecision): NewEvent => {
    const id = 'refund' in resource ? resource.refund.id : resource.id
    const merchantId = 'refund' in resource ? resource.payment.merchantId : resource.merchantId
    return { id: randomUUID(), merchantId: merchantId as string, type, resourceType: type.split('.')[0] as NewEvent['resourceType'], resourceId: id, data: { id }, dataFormat: 'snapshot', createdAt: at }
  }
  const claimOf = async (db: Database, key: string, resourceId?: string): Promise<IdempotencyKeyRef> => {
    const ref = { scope: 'statements', method: 'POST', path: '/p', key }
    const now = Date.now()
    await db.idempotency.claim({ ref, fingerprint: 'f', now, lockUntil: now + 60_000, expiresAt: now + 3_600_000 },
      resourceId === undefined ? undefined : { resourceId, rows: [] })
    return ref
  }
  const response = { statusCode: 201, headers: { 'content-type': 'application/json' }, body: '{}' }

  t.test('statements per payment and refund: each write is one statement, a refund write BEGIN, one locking read, one write, COMMIT', async (t) => {
    const schema = await freshSchema(t)
    const db = await createPostgresDatabase(schema.url, { poolSize: 2 })
    t.teardown(async () => { await db.close() })
    const merchantId = randomUUID()
    await schema.query('INSERT INTO merchants (id, name, email, status, version, created_at, updated_at) VALUES ($1, \'M\', $2, \'active\', 1, $3, $3)', [merchantId, `${merchantId}@example.com`, at])
    await schema.query('INSERT INTO webhook_endpoints (id, merchant_id, url, secret, created_at, updated_at) VALUES ($1, $2, \'https://hooks.example.com/x\', \'whsec_x\', $3, $3)', [randomUUID(), merchantId, at])

    const pending = { ...newPendingPayment({ id: randomUUID(), amountMinor: 500, currency: 'USD', at }), merchantId }
    const paymentKey = await claimOf(db, 'payment')
    t.equal((await statementsOf(async () => { await db.payments.create(pending, paymentKey) })).length, 1, 'create with its key: one statement')
    const completion = { ref: paymentKey, response }
    t.equal((await statementsOf(async () => { await db.payments.complete(transition(pending, 'succeeded', at), completion, eventOf('payment.succeeded')) })).length, 1,
      'completion with its key, event and deliveries: one statement')
    t.match(await db.idempotency.get(paymentKey), { recoveryPoint: 'finished', resourceId: pending.id, lockedUntil: null })
    t.same(await schema.query('SELECT e.type, e.sequence, count(d.id)::int AS deliveries FROM events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.resource_id = $1 GROUP BY e.type, e.sequence', [pending.id]),
      [{ type: 'payment.succeeded', sequence: 1, deliveries: 1 }])

    const refundKey = await claimOf(db, 'refund')
    let decision: RefundDecision | undefined
    const created = await statementsOf(async () => {
      decision = await db.refunds.create(pending.id, (payment) => {
        const refund: Refund = { id: randomUUID(), paymentId: payment.id, amountMinor: 200, currency: 'USD', status: 'pending', reason: null, failureCode: null, metadata: {}, createdAt: at, updatedAt: at }
        return { refund, payment: { ...payment, refundPendingMinor: 200, updatedAt: at } }
      }, { key: refundKey })
    })
    t.match(created, [/^BEGIN/, /^SELECT \* FROM payments/, /^WITH/, /^COMMIT/], 'refund create: BEGIN, the payment locked, one write, COMMIT')
    t.match(await db.idempotency.get(refundKey), { recoveryPoint: 'resource_created', resourceId: decision?.refund.id })
    const refundId = decision?.refund.id as string
    const completed = await statementsOf(async () => {
      await db.refunds.complete(refundId, (refund, payment) => ({
        refund: { ...refund, status: 'succeeded', updatedAt: at },
        payment: { ...payment, refundPendingMinor: 0, amountRefundedMinor: 200, status: 'partially_refunded', updatedAt: at }
      }), { ref: refundKey, response }, eventOf('refund.succeeded'))
    })
    t.match(completed, [/^BEGIN/, /^SELECT p\.\*/, /^WITH/, /^COMMIT/], 'refund completion with its key and event')
    t.match(await db.payments.get(pending.id), { status: 'partially_refunded', amountRefundedMinor: 200, refundPendingMinor: 0 })
    t.match(await db.refunds.get(pending.id, refundId), { status: 'succeeded' })
    t.match(await db.idempotency.get(refundKey), { recoveryPoint: 'finished' })
    t.same(await schema.query('SELECT e.type, e.sequence, count(d.id)::int AS deliveries FROM events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.resource_id = $1 GROUP BY e.type, e.sequence', [refundId]),
      [{ type: 'refund.succeeded', sequence: 1, deliveries: 1 }])
    const again = await statementsOf(async () => {
      t.match(await db.refunds.complete(refundId, () => { throw new Error('a settled refund is not settled again') }), { refund: { status: 'succeeded' } })
    })
    t.equal(again.length, 3, 'a refund no longer pending: BEGIN, the locking read, COMMIT')
  })

  t.test('a completion whose event number clashes with one committed while it waited for the payment is run again, whole', async (t) => {
    const schema = await freshSchema(t)
    const db = await createPostgresDatabase(schema.url, { poolSize: 2 })
    t.teardown(async () => { await db.close() })
    const merchantId = randomUUID()
    const pending = { ...newPendingPayment({ id: randomUUID(), amountMinor: 500, currency: 'USD', at }), merchantId }
    const key = await claimOf(db, 'clash', pending.id)
    await db.payments.create(pending)
    const other = new pg.Client({ connectionString: schema.url })
    await other.connect()
    t.teardown(async () => { await other.end() })
    // What appendPaymentPending does, held open: the payment's lock and an event numbered 1.
    await other.query('BEGIN')
    await other.query('SELECT 1 FROM payments WHERE id = $1 FOR UPDATE', [pending.id])
    await other.query('INSERT INTO events (id, merchant_id, type, resource_type, resource_id, sequence, data, created_at) VALUES ($1, $2, \'payment.pending\', \'payment\', $3, 1, \'{}\', $4)',
      [randomUUID(), merchantId, pending.id, at])
    const completing = db.payments.complete(transition(pending, 'succeeded', at), { ref: key, response }, eventOf('payment.succeeded'))
    // The completion's statement has begun (its snapshot without the event above) and waits for the lock.
    for (let waited = 0; (await schema.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH f AS%'")).length === 0; waited++) {
      if (waited > 100) throw new Error('the completion never waited for the lock')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await other.query('COMMIT')
    t.match(await completing, { status: 'succeeded' })
    t.same(await schema.query('SELECT type, sequence FROM events WHERE resource_id = $1 ORDER BY sequence', [pending.id]),
      [{ type: 'payment.pending', sequence: 1 }, { type: 'payment.succeeded', sequence: 2 }])
    t.match(await db.idempotency.get(key), { recoveryPoint: 'finished', lockedUntil: null })
  })
}

main().catch((err: unknown) => { t.threw(err as Error) })
