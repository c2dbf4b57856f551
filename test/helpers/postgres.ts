/**
 * PostgreSQL for tests: where it is, whether it must be there, and a fresh schema
 * per test so runs never see each other's rows. Tests (not the app) may read
 * process.env: TEST_DATABASE_URL points at the server, REQUIRE_POSTGRES=1 (CI)
 * turns "unreachable" from a skip into a failure.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { Test } from 'tap'

export const POSTGRES_TEST_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** The URL without credentials, for messages. */
export function describeUrl (url: string): string {
  const parsed = new URL(url)
  parsed.password = ''
  parsed.username = ''
  return parsed.toString().replace('//@', '//')
}

/** `url` with every connection's search_path set to `schema` (libpq's `options` parameter). */
export function urlWithSearchPath (url: string, schema: string): string {
  const parsed = new URL(url)
  parsed.searchParams.set('options', `-c search_path=${schema}`)
  return parsed.toString()
}

/** Undefined when PostgreSQL answers; otherwise why not. */
export async function postgresUnreachable (url = POSTGRES_TEST_URL): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return undefined
  } catch (err) {
    return (err as Error).message === '' ? String((err as { code?: string }).code) : (err as Error).message
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * Resolves true when PostgreSQL is reachable. Otherwise: with REQUIRE_POSTGRES=1
 * fails `t`; without it, marks `t` skipped with a plain message. Either way
 * resolves false and the caller adds no tests.
 */
export async function ensurePostgres (t: Test): Promise<boolean> {
  const why = await postgresUnreachable()
  if (why === undefined) return true
  const message = `PostgreSQL tests skipped: cannot connect to ${describeUrl(POSTGRES_TEST_URL)} (${why})`
  if (process.env.REQUIRE_POSTGRES === '1') {
    t.fail(`REQUIRE_POSTGRES=1 but PostgreSQL is unreachable: cannot connect to ${describeUrl(POSTGRES_TEST_URL)} (${why})`)
  } else {
    process.stderr.write(`${message}\n`)
    t.plan(0, message)
  }
  return false
}

export interface TestSchema {
  name: string
  /** DATABASE_URL for this schema. */
  url: string
  /** Runs SQL in the schema (for assertions on raw rows). */
  query: <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>
}

/** A new empty schema `test_<random>`, dropped (with everything in it) when `t` ends. */
export async function freshSchema (t: Test): Promise<TestSchema> {
  const name = `test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: POSTGRES_TEST_URL })
  await admin.connect()
  await admin.query(`CREATE SCHEMA ${name}`)
  await admin.query(`SET search_path TO ${name}`)
  t.teardown(async () => {
    try {
      await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`)
    } finally {
      await admin.end()
    }
  })
  return {
    name,
    url: urlWithSearchPath(POSTGRES_TEST_URL, name),
    query: async (text, values) => (await admin.query(text, values)).rows
  }
}
