import pg from 'pg'
import { migrate, type Migration, type MigrationRunner } from '../migrations'
import { unavailableReason } from '../unavailable'
import type { Statement } from '../sql'

export type PgPool = pg.Pool
export type PgClient = pg.PoolClient
/** Anything that runs a query: the pool (autocommit) or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>

export interface PostgresOptions {
  /** DATABASE_POOL_SIZE: connections this instance may hold. */
  poolSize: number
  /**
   * DATABASE_QUERY_TIMEOUT_MS: the server cancels a statement running longer (statement_timeout) and the
   * client gives up on an answer that does not come a second later (query_timeout: a paused or unreachable
   * server). 0 disables both (migrations: DDL and the advisory lock may take long).
   */
  queryTimeoutMs?: number
  /** Called with errors of idle pooled connections (e.g. the server restarted); they are replaced. */
  onIdleError?: (err: Error) => void
  /** How long to wait for a new connection (default CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number
  /** DATABASE_SETTLE_MS (see guard.ts). */
  settleMs?: number
}

/** How long to wait for a new connection: a server that is down or paused fails a request fast. */
const CONNECT_TIMEOUT_MS = 5_000

export function openPool (url: string, options: PostgresOptions): PgPool {
  const queryTimeoutMs = options.queryTimeoutMs ?? 0
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    // Notice a peer that vanished without a FIN (a paused or unplugged server) on idle connections too.
    keepAlive: true,
    ...(queryTimeoutMs > 0 ? { statement_timeout: queryTimeoutMs, query_timeout: queryTimeoutMs + 1_000 } : {}),
    application_name: 'product-payment-service'
  })
  // Without a listener an idle connection's error would crash the process.
  pool.on('error', (err) => { options.onIdleError?.(err) })
  return pool
}

/**
 * Takes a connection out of the pool with an 'error' listener for as long as it is
 * checked out: pg-pool removes its own while a client is lent, and a connection the
 * server drops then (a restart: 57P01, a network cut) emits 'error', which would crash
 * the process without one. The query in flight fails with the same error anyway, and
 * `broken()` tells the caller to discard the connection on release.
 */
export async function checkOut (pool: PgPool): Promise<{ client: PgClient, broken: () => Error | undefined, release: (err?: Error) => void }> {
  let failure: Error | undefined
  const onError = (err: Error): void => { failure ??= err }
  // The callback form, to attach the listener synchronously: an error in the same network read that
  // completed the connection (a new connection, then 57P01 at once) is emitted before a promise resumes.
  const client = await new Promise<PgClient>((resolve, reject) => {
    pool.connect((err, lent) => {
      if (err !== undefined && err !== null) {
        reject(err)
        return
      }
      lent?.on('error', onError)
      resolve(lent as PgClient)
    })
  })
  return {
    client,
    broken: () => failure,
    release (err) {
      client.removeListener('error', onError)
      client.release(err ?? failure)
    }
  }
}

export type Isolation = 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE'

/**
 * Runs `work` in one transaction on one pooled connection: COMMIT when it
 * resolves, ROLLBACK when it throws. A connection whose ROLLBACK failed is
 * discarded rather than returned to the pool.
 */
export async function inTransaction<T> (pool: PgPool, isolation: Isolation, work: (client: PgClient) => Promise<T>): Promise<T> {
  const { client, broken, release } = await checkOut(pool)
  let discard: Error | undefined
  try {
    await client.query(`BEGIN ISOLATION LEVEL ${isolation}`)
    const result = await work(client)
    await client.query('COMMIT')
    return result
  } catch (err) {
    // A lost or timed-out connection is closed instead (the server rolls back); ROLLBACK would only wait on it.
    if (broken() !== undefined || unavailableReason(err) !== undefined) {
      discard = err as Error
    } else {
      try {
        await client.query('ROLLBACK')
      } catch (rollbackError) {
        discard = rollbackError as Error
      }
    }
    throw err
  } finally {
    release(discard)
  }
}

/**
 * Two-key advisory lock id for migrations: a constant for this service and a
 * hash of the schema, so instances migrating the same schema queue up while
 * different schemas (e.g. parallel test runs) do not wait for each other.
 */
const MIGRATION_LOCK_CLASS = 0x5053 // "PS"

/**
 * Applies the pending migrations (the one loop in ../migrations.ts) on one connection of `pool`.
 * Returns the versions this call applied.
 */
export async function migratePostgres (pool: PgPool, migrations: readonly Migration[]): Promise<number[]> {
  const { client, release } = await checkOut(pool)
  let broken: Error | undefined
  try {
    return await migrate(postgresMigrationRunner(client), migrations)
  } catch (err) {
    broken = err as Error
    throw err
  } finally {
    // A connection that saw an error is dropped: it may still hold the lock or an open transaction.
    release(broken)
  }
}

/**
 * PostgreSQL's steps: a session advisory lock held for the whole run, so that when several
 * instances start at once one migrates and the others wait, then find nothing left to do; each
 * migration in its own transaction (PostgreSQL DDL is transactional).
 */
function postgresMigrationRunner (client: PgClient): MigrationRunner {
  return {
    dialect: 'postgres',
    exec: async (sql) => { await client.query(sql) },
    query: async <R>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as R[],
    exclusively: async (run) => {
      await client.query("SELECT pg_advisory_lock($1, hashtext(coalesce(current_schema(), '')))", [MIGRATION_LOCK_CLASS])
      try {
        return await run()
      } finally {
        await client.query("SELECT pg_advisory_unlock($1, hashtext(coalesce(current_schema(), '')))", [MIGRATION_LOCK_CLASS])
      }
    },
    transaction: async (work) => {
      await client.query('BEGIN')
      try {
        await work()
        await client.query('COMMIT')
      } catch (err) {
        await client.query('ROLLBACK')
        throw err
      }
    }
  }
}

/** The row a statement always returns (an aggregate, RETURNING of a row the transaction holds); an error naming it otherwise. */
export function onlyRow<R> (rows: readonly R[], statement: string): R {
  const [row] = rows
  if (row === undefined) throw new Error(`${statement} returned no row`)
  return row
}

/** PostgreSQL's SQLSTATE for a unique violation, and the constraint it names. */
export function uniqueViolationOf (error: unknown): string | undefined {
  const err = error as { code?: string, constraint?: string }
  return err.code === '23505' ? err.constraint ?? '' : undefined
}

/**
 * Builds one statement's text and values together: `add(value)` appends a value and answers its
 * placeholder, so composed statements (CTE members written by different stores) never renumber
 * each other's parameters.
 */
export class Params {
  readonly values: unknown[] = []
  add (value: unknown): string {
    this.values.push(value)
    return `$${this.values.length}`
  }

  list (values: readonly unknown[]): string {
    return values.map((value) => this.add(value)).join(', ')
  }

  /** A statement written once (../sql.ts), its parameters renumbered into this statement's: a CTE member or the main query. */
  embed<P> (written: Statement<P>, params: P): string {
    const placeholders = written.values(params, 'postgres').map((value) => this.add(value))
    return written.text.postgres.replace(/\$(\d+)/g, (_, n: string) => placeholders[Number(n) - 1] as string)
  }
}

/** `WITH m1, m2 … main`, or `main` alone: data-modifying members make the whole one atomic statement. */
export function withMembers (members: readonly string[], main: string): string {
  return members.length === 0 ? main : `WITH ${members.join(',\n')}\n${main}`
}

/** Prepared-statement names for generated texts (PostgreSQL binds a name to one text per connection). */
const statementNames = new Map<string, string>()

/** A prepared statement for a generated text: one name per distinct text. */
export function statement (text: string, values: unknown[]): { name: string, text: string, values: unknown[] } {
  let name = statementNames.get(text)
  if (name === undefined) statementNames.set(text, name = `generated-${statementNames.size + 1}`)
  return { name, text, values }
}
