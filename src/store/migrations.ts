import { dialects, type SchemaChange } from './ddl'
import { sql, type SqlDialect } from './sql'
import { lifecycleSchema } from './lifecycle-migrations'
import { webhookSchema } from './webhook-migrations'
import { captureSchema } from './capture-migrations'
import { instanceSchema } from './instance-migrations'
import { connectorSchema } from './connector-migrations'
import { routingSchema } from './routing-migrations'
import { paymentMethodSchema } from './payment-method-migrations'
import { connectorEventSchema } from './connector-event-migrations'
import { apiVersionSchema } from './api-version-migrations'
import { dashboardSessionSchema } from './dashboard-session-migrations'
import { heldMoneySchema } from './held-money-migrations'
import { customerSchema } from './customer-migrations'
import { disputeSchema } from './dispute-migrations'
import { actionSchema } from './action-migrations'
import { cancellationSchema } from './cancellation-migrations'
import { eventFormatSchema } from './event-format-migrations'
import { teamSchema } from './team-migrations'

/** One schema change, applied once per database in version order and recorded in schema_migrations. */
export interface Migration {
  version: number
  name: string
  sql: string
}

const SCHEMA_MIGRATIONS_DDL = 'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)'

/**
 * The schema, for both stores (same version numbers, names, tables and columns, so the rows.ts
 * mappers serve both): money in 64-bit minor units, payment/product/merchant timestamps as ISO-8601
 * TEXT, idempotency and lease times as epoch milliseconds. Versions 2-9 are reserved for payments
 * and idempotency; merchants start at 10.
 *
 * Adding a migration is one change in one place: append an entry with the next free version in its
 * area's range, here or in its area's list (lifecycle-migrations.ts, webhook-migrations.ts), with
 * its DDL written once (`d` spells the few types that differ). Both stores apply it at start-up.
 * Never edit a released migration: add a new version.
 */
const schema: SchemaChange[] = [
  {
    version: 1,
    name: 'products',
    ddl: (d) => `
      CREATE TABLE products (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        price ${d.double} NOT NULL,
        updated_at TEXT NOT NULL
      )${d.table};
    `
  },
  {
    version: 2,
    name: 'payments and gateway ledger',
    ddl: (d) => `
      CREATE TABLE payments (
        id TEXT PRIMARY KEY,
        amount_minor ${d.bigint} NOT NULL CHECK (amount_minor > 0),
        currency TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'declined')),
        decline_code TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        recovery_lease_until ${d.bigint}
      )${d.table};
      CREATE INDEX payments_pending ON payments (created_at) WHERE status = 'pending';
      CREATE TABLE gateway_ledger (
        idempotency_key TEXT PRIMARY KEY,
        charge_id TEXT NOT NULL,
        amount_minor ${d.bigint} NOT NULL,
        currency TEXT NOT NULL,
        outcome TEXT NOT NULL,
        decline_code TEXT,
        created_at TEXT NOT NULL
      )${d.table};
    `
  },
  {
    version: 3,
    name: 'idempotency keys',
    ddl: (d) => `
      CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,
        method TEXT NOT NULL,
        path TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        recovery_point TEXT NOT NULL,
        resource_id TEXT,
        response_status INTEGER,
        response_headers TEXT,
        response_body TEXT,
        locked_until ${d.bigint},
        created_at ${d.bigint} NOT NULL,
        expires_at ${d.bigint} NOT NULL,
        PRIMARY KEY (scope, method, path, key)
      )${d.table};
      CREATE INDEX idempotency_keys_resource ON idempotency_keys (resource_id);
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
    `
  },
  {
    version: 10,
    name: 'merchants',
    ddl: (d) => `
      CREATE TABLE merchants (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        email TEXT NOT NULL,
        country TEXT,
        default_currency TEXT,
        status TEXT NOT NULL CHECK (status IN ('active', 'suspended')),
        version INTEGER NOT NULL CHECK (version >= 1),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )${d.table};
      -- Email uniqueness is the database's job (no check-then-insert race); case-insensitive.
      CREATE UNIQUE INDEX merchants_email_unique ON merchants (lower(email));
    `
  },
  {
    // Versions 20-29: authentication. payments.merchant_id and its (merchant_id, created_at, id)
    // index come from the lifecycle migration (v4); payments created before it keep merchant_id
    // NULL: they belong to no merchant, so no merchant key can read them (see docs/api.md, Authentication).
    version: 20,
    name: 'api keys and payment owners',
    ddl: (d) => `
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        merchant_id TEXT REFERENCES merchants (id),
        role TEXT NOT NULL CHECK (role IN ('admin', 'merchant')),
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        last4 TEXT NOT NULL,
        secret_hash TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT,
        last_used_at TEXT,
        revoked_at TEXT,
        CHECK ((role = 'admin') = (merchant_id IS NULL))
      )${d.table};
      CREATE UNIQUE INDEX api_keys_secret_hash ON api_keys (secret_hash);
      CREATE INDEX api_keys_merchant ON api_keys (merchant_id, created_at);
      -- At most one generated admin key (two instances starting at once store one).
      CREATE UNIQUE INDEX api_keys_single_admin ON api_keys (role) WHERE role = 'admin';
    `
  },
  ...lifecycleSchema,
  ...webhookSchema,
  ...captureSchema,
  ...instanceSchema,
  ...connectorSchema,
  ...routingSchema,
  ...connectorEventSchema,
  ...paymentMethodSchema,
  ...apiVersionSchema,
  ...dashboardSessionSchema,
  ...heldMoneySchema,
  ...customerSchema,
  ...disputeSchema,
  ...actionSchema,
  ...cancellationSchema,
  ...eventFormatSchema,
  ...teamSchema
]

/** The schema's migrations in `dialect`'s spelling, in version order. */
export function migrationsFor (dialect: SqlDialect): Migration[] {
  return [...schema].sort((a, b) => a.version - b.version).map(({ version, name, ddl }) => ({ version, name, sql: ddl(dialects[dialect]) }))
}

/**
 * What a dialect supplies to the one migration loop: access to its migration connection and the
 * two steps where SQLite and PostgreSQL differ, keeping concurrent migrators apart and the
 * transaction each migration runs in.
 */
export interface MigrationRunner {
  dialect: SqlDialect
  /** Runs SQL that may hold several statements (a migration's DDL). */
  exec: (sql: string) => Promise<void>
  /** Runs one statement, with placeholders in the dialect's style (`?`, `$1`); the rows it returns. */
  query: <R>(sql: string, params?: unknown[]) => Promise<R[]>
  /**
   * Runs the whole migration so that two processes starting at once do not both migrate
   * (PostgreSQL: a session advisory lock; SQLite: each migration's IMMEDIATE transaction).
   */
  exclusively: <T>(run: () => Promise<T>) => Promise<T>
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction: (work: () => Promise<void>) => Promise<void>
}

const dialectNames: Record<SqlDialect, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' }

const recordMigration = sql<{ version: number, name: string, appliedAt: string }>('migration-record')`
  INSERT INTO schema_migrations (version, name, applied_at) VALUES (${'version'}, ${'name'}, ${'appliedAt'})`

/**
 * The one migration loop: applies the migrations not yet recorded in schema_migrations, in version
 * order, each with its record in one transaction (DDL is transactional in both dialects). A failing
 * migration is rolled back, not recorded, and names itself; those before it stay applied.
 * Returns the versions this call applied.
 */
export async function migrate (runner: MigrationRunner, migrations: readonly Migration[]): Promise<number[]> {
  const versions = migrations.map((migration) => migration.version)
  const twice = versions.find((version, i) => versions.indexOf(version) !== i)
  // Two changes written in parallel under one number: the second would never run where the first had.
  if (twice !== undefined) throw new Error(`migration version ${twice} is used twice`)
  return await runner.exclusively(async () => {
    await runner.exec(SCHEMA_MIGRATIONS_DDL)
    const rows = await runner.query<{ version: number }>('SELECT version FROM schema_migrations')
    const applied = new Set(rows.map((row) => Number(row.version)))
    const pending = [...migrations].sort((a, b) => a.version - b.version).filter((m) => !applied.has(m.version))
    const newlyApplied: number[] = []
    for (const migration of pending) {
      try {
        await runner.transaction(async () => {
          await runner.exec(migration.sql)
          const record = { version: migration.version, name: migration.name, appliedAt: new Date().toISOString() }
          await runner.query(recordMigration.text[runner.dialect], recordMigration.values(record, runner.dialect))
        })
      } catch (err) {
        throw new Error(`${dialectNames[runner.dialect]} migration ${migration.version} (${migration.name}) failed: ${(err as Error).message}`, { cause: err })
      }
      newlyApplied.push(migration.version)
    }
    return newlyApplied
  })
}
