/**
 * PostgreSQL for tests: where it is, whether it must be there, and a fresh schema
 * per test so runs never see each other's rows. Tests (not the app) may read
 * process.env: TEST_DATABASE_URL points at the server, REQUIRE_POSTGRES=1 (CI)
 * turns "unreachable" from a skip into a failure.
 */
import { randomBytes } from 'node:crypto'
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
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
  if (why === undefined) {
    await holdPostgresSlot()
    return true
  }
  const message = `PostgreSQL tests skipped: cannot connect to ${describeUrl(POSTGRES_TEST_URL)} (${why})`
  if (process.env.REQUIRE_POSTGRES === '1') {
    t.fail(`REQUIRE_POSTGRES=1 but PostgreSQL is unreachable: cannot connect to ${describeUrl(POSTGRES_TEST_URL)} (${why})`)
  } else {
    process.stderr.write(`${message}\n`)
    t.plan(0, message)
  }
  return false
}

/**
 * How many test processes may use PostgreSQL at once. `npm test` runs more test files side by side than there are
 * cores (many wait on timers and I/O), and the apps their tests build each hold a pool: four files at once exhausted
 * the server's 100 connections. Files that need no PostgreSQL are not held back.
 */
export const POSTGRES_FILE_SLOTS = 2
/** The advisory-lock class of the slots (pg_try_advisory_lock(class, slot)). */
const SLOT_LOCK_CLASS = 0x7e57

let slotHeld: Promise<void> | undefined

/**
 * Waits until this process holds one of POSTGRES_FILE_SLOTS, an advisory lock on a connection of its own, and keeps it
 * until the process exits (the server then releases the lock). Once the slot is held, the connection's socket is
 * unreferenced, so it never keeps a finished test process alive.
 */
async function holdPostgresSlot (): Promise<void> {
  slotHeld ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES_TEST_URL })
    client.on('error', () => {})
    await client.connect()
    for (;;) {
      for (let slot = 0; slot < POSTGRES_FILE_SLOTS; slot++) {
        const { rows } = await client.query<{ held: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS held', [SLOT_LOCK_CLASS, slot])
        if (rows[0]?.held !== true) continue
        // Held: from now on the idle connection must not keep the process alive (a pending query would need it).
        ;(client as unknown as { connection: { stream: Socket } }).connection.stream.unref()
        return
      }
      await sleep(250)
    }
  })()
  await slotHeld
}

export interface TestSchema {
  name: string
  /** DATABASE_URL for this schema. */
  url: string
  /** Runs SQL in the schema (for assertions on raw rows). */
  query: <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>
}

/** Runs `work` on a connection of its own, closed after it. */
async function withClient<R> (url: string, work: (client: pg.Client) => Promise<R>): Promise<R> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/**
 * A new empty schema `test_<random>`, dropped (with everything in it) when `t` ends. Its connection for `query` opens
 * on the first query only: a suite that makes a schema per test (the store contracts, dozens under one parent) must
 * not hold a connection for each of them until the parent ends.
 */
export async function freshSchema (t: Test): Promise<TestSchema> {
  const name = `test_${randomBytes(6).toString('hex')}`
  const url = urlWithSearchPath(POSTGRES_TEST_URL, name)
  await withClient(POSTGRES_TEST_URL, async (client) => await client.query(`CREATE SCHEMA ${name}`))
  let admin: Promise<pg.Client> | undefined
  const connected = async (): Promise<pg.Client> => {
    admin ??= (async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      return client
    })()
    return await admin
  }
  t.teardown(async () => {
    if (admin !== undefined) await (await admin).end()
    await withClient(POSTGRES_TEST_URL, async (client) => await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`))
  })
  return {
    name,
    url,
    query: async (text, values) => (await (await connected()).query(text, values)).rows
  }
}
