/**
 * npm run simulate -- --seed N | --seeds K [--first N] --steps M [--db sqlite|postgres] [--generation 1|2|3] [--max-seconds S] [--jobs J] [--out FILE]
 *
 * Runs the deterministic simulation (test/simulation/world.ts) for one seed or K seeds (from --first, default a
 * random start printed so the run can be replayed), prints every seed's outcome, shrinks the first failing one to
 * the shortest history that still fails, writes a summary (seeds, steps, faults by kind, invariant checks) to
 * --out (default bench/SIMULATION.md), and exits 1 on any violation. --max-seconds stops starting new seeds after that
 * long (CI's budget); the summary says how many ran. Seeds run side by side in --jobs worker threads (default: one
 * per core); each seed is still one deterministic run on its own database. --generation 1 replays the world before
 * customer-present payments and dashboard captures and cancels were simulated, 2 the world before dashboard refunds of
 * extra charges (the seeds found then); default 3.
 */
import { writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { Worker, isMainThread, parentPort } from 'node:worker_threads'
import pg from 'pg'
import { GENERATIONS, LATEST_GENERATION, shrink, simulate, type Generation, type SimulationOptions, type SimulationResult } from './world'

interface Arguments { seeds: number[], steps: number, db: 'sqlite' | 'postgres', generation: Generation, out?: string | undefined, maxSeconds: number, jobs: number }

function parse (argv: string[]): Arguments {
  const value = (name: string): string | undefined => {
    const index = argv.indexOf(`--${name}`)
    return index === -1 ? undefined : argv[index + 1]
  }
  const steps = Number(value('steps') ?? 1000)
  const db = value('db') ?? 'sqlite'
  if (db !== 'sqlite' && db !== 'postgres') throw new Error('--db is sqlite or postgres')
  if (!Number.isInteger(steps) || steps < 1) throw new Error('--steps must be a positive integer')
  const generation = Number(value('generation') ?? LATEST_GENERATION) as Generation
  if (!GENERATIONS.includes(generation)) throw new Error(`--generation is one of ${GENERATIONS.join(', ')}`)
  const seed = value('seed')
  const maxSeconds = Number(value('max-seconds') ?? Infinity)
  const jobs = Number(value('jobs') ?? availableParallelism())
  if (!Number.isInteger(jobs) || jobs < 1) throw new Error('--jobs must be a positive integer')
  if (seed !== undefined) return { seeds: [Number(seed)], steps, db, generation, out: value('out'), maxSeconds, jobs: 1 }
  const count = Number(value('seeds') ?? 10)
  const first = Number(value('first') ?? randomBytes(3).readUIntBE(0, 3))
  return { seeds: Array.from({ length: count }, (_, i) => first + i), steps, db, generation, out: value('out'), maxSeconds, jobs }
}

/** A throwaway PostgreSQL schema for one seed (TEST_DATABASE_URL or the local server). */
async function withSchema<T> (run: (url: string) => Promise<T>): Promise<T> {
  const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  const name = `sim_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: base })
  await admin.connect()
  try {
    await admin.query(`CREATE SCHEMA ${name}`)
    const url = new URL(base)
    // A crash here drops the service's process, never the database server: commits need not wait for the WAL flush.
    url.searchParams.set('options', `-c search_path=${name} -c synchronous_commit=off`)
    return await run(url.toString())
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`).catch(() => {})
    await admin.end()
  }
}

async function runSeed (options: SimulationOptions): Promise<SimulationResult> {
  return options.db === 'postgres' ? await withSchema(async (url) => await simulate({ ...options, databaseUrl: url })) : await simulate(options)
}

async function main (): Promise<void> {
  const args = parse(process.argv.slice(2))
  const started = Date.now()
  const faults: Record<string, number> = {}
  const checks: Record<string, number> = {}
  let steps = 0
  const failing: SimulationResult[] = []
  console.log(`simulation: ${args.seeds.length} seed(s) from ${args.seeds[0] ?? '-'}, ${args.steps} steps each, ${args.db}, generation ${args.generation}`)
  const ran: number[] = []
  const results = inWorkers(Math.min(args.jobs, args.seeds.length), args.seeds.map((seed) => ({ seed, steps: args.steps, db: args.db, generation: args.generation })), () => Date.now() - started > args.maxSeconds * 1000)
  for await (const result of results) {
    ran.push(result.seed)
    steps += result.steps
    for (const [kind, n] of Object.entries(result.faults)) faults[kind] = (faults[kind] ?? 0) + n
    for (const [kind, n] of Object.entries(result.checks)) checks[kind] = (checks[kind] ?? 0) + n
    if (result.violations.length === 0) continue
    failing.push(result)
    console.log(`seed ${result.seed} FAILED: ${result.violations.map((v) => `invariant ${v.invariant} at step ${v.step}: ${v.message}`).join('\n  ')}`)
  }
  ran.sort((a, b) => a - b)
  failing.sort((a, b) => a.seed - b.seed)
  const summary = [
    `# Simulation ${new Date().toISOString()}`,
    '',
    `- seeds: ${ran.length} of ${args.seeds.length} asked (${ran[0] ?? '-'}–${ran[ran.length - 1] ?? '-'}), ${args.steps} steps each, ${args.db}, generation ${args.generation}; ${steps} steps in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    `- faults injected: ${Object.entries(faults).sort().map(([k, n]) => `${k} ${n}`).join(', ')}`,
    `- invariant checks: ${Object.entries(checks).sort().map(([k, n]) => `${k} ${n}`).join(', ')}`,
    `- failing seeds: ${failing.length === 0 ? 'none' : failing.map((f) => f.seed).join(', ')}`
  ].join('\n')
  console.log(summary)
  writeFileSync(args.out ?? 'bench/SIMULATION.md', `${summary}\n`)
  const [first] = failing
  if (first !== undefined) {
    const shortest = await shrink(async (ops) => await runSeed({ seed: first.seed, steps: args.steps, db: args.db, generation: args.generation, ops }), first.ops)
    console.log(`shortest failing history of seed ${first.seed} (${shortest.length} of ${first.ops.length} steps):`)
    for (const op of shortest) console.log(`  ${JSON.stringify(op)}`)
    // Again last: CI keeps only the tail of a long output, and the history above can push the first report out of it.
    console.log(`seed ${first.seed} violated: ${first.violations.map((v) => `invariant ${v.invariant} at step ${v.step}: ${v.message}`).join('\n  ')}`)
    console.log(`replay: npm run simulate -- --seed ${first.seed} --steps ${args.steps} --db ${args.db} --generation ${args.generation}`)
    process.exitCode = 1
  }
}

/** One seed in a worker thread. */
async function runIn (worker: Worker, options: SimulationOptions): Promise<SimulationResult> {
  return await new Promise<SimulationResult>((resolve, reject) => {
    const settle = (): void => { worker.off('message', onMessage); worker.off('error', onError) }
    const onMessage = (result: SimulationResult): void => { settle(); resolve(result) }
    const onError = (err: Error): void => { settle(); reject(err) }
    worker.on('message', onMessage)
    worker.on('error', onError)
    worker.postMessage(options)
  })
}

/**
 * Runs the seeds in `jobs` worker threads, each taking the next seed when it is free, until `stop()` says the time
 * budget is spent; yields each result as it comes.
 */
async function * inWorkers (jobs: number, queue: SimulationOptions[], stop: () => boolean): AsyncGenerator<SimulationResult> {
  const results: SimulationResult[] = []
  let wake: (() => void) | undefined
  let running = 0
  let failure: unknown
  const lanes = Array.from({ length: jobs }, async () => {
    const worker = new Worker(__filename)
    try {
      for (let next = queue.shift(); next !== undefined && !stop(); next = queue.shift()) {
        running++
        try {
          results.push(await runIn(worker, next))
        } finally {
          running--
          wake?.()
        }
      }
    } catch (err) {
      failure = err
      wake?.()
    } finally {
      await worker.terminate()
    }
  })
  const done = Promise.all(lanes).then(() => { wake?.() })
  for (;;) {
    if (failure !== undefined) throw failure
    const result = results.shift()
    if (result !== undefined) { yield result; continue }
    if (running === 0 && (queue.length === 0 || stop())) break
    await new Promise<void>((resolve) => { wake = resolve })
  }
  await done
  if (failure !== undefined) throw failure
}

if (isMainThread) {
  main().catch((err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
} else {
  parentPort?.on('message', (options: SimulationOptions) => {
    runSeed(options).then((result) => parentPort?.postMessage(result), (err: unknown) => { throw err })
  })
}
