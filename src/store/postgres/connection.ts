import pg from 'pg'
import { pendingMigrations, RECORD_MIGRATION, SCHEMA_MIGRATIONS_DDL, type Migration } from '../migrations'

export type PgPool = pg.Pool
export type PgClient = pg.PoolClient
/** Anything that runs a query: the pool (autocommit) or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>

export interface PostgresOptions {
  /** DATABASE_POOL_SIZE: connections this instance may hold. */
  poolSize: number
  /** Called with errors of idle pooled connections (e.g. the server restarted); they are replaced. */
  onIdleError?: (err: Error) => void
}

export function openPool (url: string, options: PostgresOptions): PgPool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    // Fail a start-up or a request fast rather than hanging when the server is away.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: 'product-payment-service'
  })
  // Without a listener an idle connection's error would crash the process.
  pool.on('error', (err) => { options.onIdleError?.(err) })
  return pool
}

export type Isolation = 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE'

/**
 * Runs `work` in one transaction on one pooled connection: COMMIT when it
 * resolves, ROLLBACK when it throws. A connection whose ROLLBACK failed is
 * discarded rather than returned to the pool.
 */
export async function inTransaction<T> (pool: PgPool, isolation: Isolation, work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  let broken: Error | undefined
  try {
    await client.query(`BEGIN ISOLATION LEVEL ${isolation}`)
    const result = await work(client)
    await client.query('COMMIT')
    return result
  } catch (err) {
    try {
      await client.query('ROLLBACK')
    } catch (rollbackError) {
      broken = rollbackError as Error
    }
    throw err
  } finally {
    client.release(broken)
  }
}

/**
 * Two-key advisory lock id for migrations: a constant for this service and a
 * hash of the schema, so instances migrating the same schema queue up while
 * different schemas (e.g. parallel test runs) do not wait for each other.
 */
const MIGRATION_LOCK_CLASS = 0x5053 // "PS"

/**
 * Applies pending migrations in version order, each in its own transaction
 * (PostgreSQL DDL is transactional), holding a session advisory lock for the
 * whole run: when several instances start at once, one migrates and the others
 * wait, then find nothing left to do. Returns the versions this call applied.
 */
export async function migratePostgres (pool: PgPool, migrations: Migration[]): Promise<number[]> {
  const client = await pool.connect()
  let broken: Error | undefined
  try {
    await client.query("SELECT pg_advisory_lock($1, hashtext(coalesce(current_schema(), '')))", [MIGRATION_LOCK_CLASS])
    try {
      await client.query(SCHEMA_MIGRATIONS_DDL)
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations')
      const applied = new Set(rows.map((row) => row.version))
      const newlyApplied: number[] = []
      for (const migration of pendingMigrations(migrations, applied)) {
        await client.query('BEGIN')
        try {
          await client.query(migration.sql)
          await client.query(RECORD_MIGRATION.postgres, [migration.version, migration.name, new Date().toISOString()])
          await client.query('COMMIT')
        } catch (err) {
          await client.query('ROLLBACK')
          throw new Error(`PostgreSQL migration ${migration.version} (${migration.name}) failed: ${(err as Error).message}`, { cause: err })
        }
        newlyApplied.push(migration.version)
      }
      return newlyApplied
    } finally {
      await client.query("SELECT pg_advisory_unlock($1, hashtext(coalesce(current_schema(), '')))", [MIGRATION_LOCK_CLASS])
    }
  } catch (err) {
    broken = err as Error
    throw err
  } finally {
    // A connection that saw an error is dropped: it may still hold the lock or an open transaction.
    client.release(broken)
  }
}

/** PostgreSQL's SQLSTATE for a unique violation, and the constraint it names. */
export function uniqueViolationOf (error: unknown): string | undefined {
  const err = error as { code?: string, constraint?: string }
  return err.code === '23505' ? err.constraint ?? '' : undefined
}
