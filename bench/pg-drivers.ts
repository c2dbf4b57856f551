/**
 * Compares the two PostgreSQL drivers on the round-trip the stores make most: one
 * prepared single-row query by primary key, from N concurrent callers sharing a
 * pool of the same size. Used to choose the driver (see docs/operations.md, "Running at scale").
 *
 *   npx tsc -p tsconfig.build.json && node dist/bench/pg-drivers.js
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test BENCH_POOL=10 BENCH_QUERIES=20000 node dist/bench/pg-drivers.js
 *
 * Each driver runs every concurrency level once to warm up, then BENCH_REPEATS
 * times measured (the median run is reported), the drivers taking turns so
 * neither always goes first and background noise hits both alike.
 */
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import postgres from 'postgres'

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const poolSize = Number(process.env.BENCH_POOL ?? 10)
const totalQueries = Number(process.env.BENCH_QUERIES ?? 20_000)
const concurrencies = (process.env.BENCH_CONCURRENCY ?? '1,10,50,200').split(',').map(Number)
const repeats = Number(process.env.BENCH_REPEATS ?? 3)
const TABLE = 'bench_driver_products'

type Runner = (id: string) => Promise<unknown>
interface Driver { name: string, query: Runner, close: () => Promise<void> }

function pgDriver (): Driver {
  const pool = new pg.Pool({ connectionString: url, max: poolSize })
  return {
    name: 'pg',
    // A named query is parsed once per connection, then only bound and executed.
    query: async (id) => (await pool.query({ name: 'bench-get', text: `SELECT id, name, price FROM ${TABLE} WHERE id = $1`, values: [id] })).rows[0],
    close: async () => { await pool.end() }
  }
}

function postgresDriver (): Driver {
  const sql = postgres(url, { max: poolSize, prepare: true, onnotice: () => {} })
  return {
    name: 'postgres',
    query: async (id) => (await sql`SELECT id, name, price FROM bench_driver_products WHERE id = ${id}`)[0],
    close: async () => { await sql.end() }
  }
}

interface Result { driver: string, concurrency: number, opsPerSecond: number, p50: number, p99: number }

async function measure (driver: Driver, concurrency: number): Promise<Result> {
  const latencies: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < totalQueries) {
      const id = `p${next++ % 1000}`
      const t0 = performance.now()
      const row = await driver.query(id)
      latencies.push(performance.now() - t0)
      if (row === undefined) throw new Error(`missing row ${id}`)
    }
  }))
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN
  return { driver: driver.name, concurrency, opsPerSecond: Math.round(totalQueries / seconds), p50: round(at(0.5)), p99: round(at(0.99)) }
}

function round (ms: number): number { return Math.round(ms * 100) / 100 }

async function main (): Promise<void> {
  const setup = new pg.Client({ connectionString: url })
  await setup.connect()
  await setup.query(`DROP TABLE IF EXISTS ${TABLE}`)
  await setup.query(`CREATE TABLE ${TABLE} (id TEXT PRIMARY KEY, name TEXT NOT NULL, price DOUBLE PRECISION NOT NULL)`)
  await setup.query(`INSERT INTO ${TABLE} SELECT 'p' || i, 'product ' || i, i * 1.5 FROM generate_series(0, 999) i`)
  const results: Result[] = []
  try {
    const drivers = [pgDriver(), postgresDriver()]
    for (const [level, concurrency] of concurrencies.entries()) {
      for (const driver of drivers) await measure(driver, concurrency) // warm-up: connections, prepared statements, JIT
      const runs = new Map<string, Result[]>(drivers.map((driver) => [driver.name, []]))
      for (let i = 0; i < repeats; i++) {
        const order = (level + i) % 2 === 0 ? drivers : [...drivers].reverse()
        for (const driver of order) runs.get(driver.name)?.push(await measure(driver, concurrency))
      }
      for (const measured of runs.values()) {
        const middle = measured.sort((a, b) => a.opsPerSecond - b.opsPerSecond)[Math.floor(measured.length / 2)]
        if (middle !== undefined) results.push(middle)
      }
    }
    await Promise.all(drivers.map(async (driver) => { await driver.close() }))
  } finally {
    await setup.query(`DROP TABLE IF EXISTS ${TABLE}`)
    await setup.end()
  }
  process.stdout.write(`PostgreSQL driver comparison: ${totalQueries} prepared primary-key SELECTs per run, median of ${repeats} runs, pool size ${poolSize}, node ${process.version}\n`)
  process.stdout.write('driver    concurrency  queries/s  p50 ms  p99 ms\n')
  for (const r of results.sort((a, b) => a.concurrency - b.concurrency || a.driver.localeCompare(b.driver))) {
    process.stdout.write(`${r.driver.padEnd(9)} ${String(r.concurrency).padStart(11)} ${String(r.opsPerSecond).padStart(10)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)}\n`)
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  process.exit(1)
})
