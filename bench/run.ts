import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process'
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os'
import { join, resolve } from 'node:path'
import { randomUUID } from 'node:crypto'
import { configVariableNames } from '../src/load-config'
import { cannedPathPrefix, cannedPathSuffix, replayableHeaders, type CannedResponse } from './baseline-server'
import type { LoadJob, LoadRequest, LoadResult } from './load'
import { measureMetricsHook, type HookCost } from './metrics-cost'
import { PAYMENT_BODY, PRODUCT_BODY, REFUNDABLE_PAYMENT_BODY, REFUND_PAYMENTS, SCENARIOS, type Scenario, type Seed } from './scenarios'
import {
  DEFAULT_OPTIONS, fmt, markdownTable, median, pairedDifference, pairedRatio, parseBenchOptions, parseProcStat, redactUrl, requestsPerCore,
  summarizeLatencies, type BenchOptions
} from './stats'

/**
 * `npm run bench`: the built service as it runs in production against a raw
 * node:http baseline answering the same bytes, in the same run, alternating
 * rounds. See docs/benchmarks.md.
 */

const ROOT = resolve(__dirname, '..', '..')
const DIST = join(ROOT, 'dist')
const RESULTS_DIR = join(ROOT, 'bench', 'results')
/**
 * The run uses a snapshot of dist/ (inside the git-ignored results folder, so
 * node_modules still resolves), so a rebuild in the work tree during a run
 * cannot change what is measured halfway.
 */
let SNAPSHOT = DIST
const SERVER = (): string => join(SNAPSHOT, 'app', 'server.js')
const BASELINE = (): string => join(SNAPSHOT, 'bench', 'baseline-server.js')
const LOADER = (): string => join(SNAPSHOT, 'bench', 'load.js')
const EXPRESS_PEER = (): string => join(SNAPSHOT, 'bench', 'express-peer.js')
const FASTIFY_PEER = (): string => join(SNAPSHOT, 'bench', 'fastify-peer.js')
const TMPFS_MAGIC = 0x01021994

const GOALS = { p99Ms: 10, rssMb: 200, startupMs: 500, metricsUsPerRequest: 3 }
/** Where metrics on vs off is compared: the cheapest request, and a payment replay (idempotency counted too). */
const METRICS_SCENARIOS = ['get-product', 'replay-payment']

/**
 * The node flags of the production command (`npm start`: `node [flags] dist/app/server.js`),
 * so the benchmark runs the service exactly as it is started in production.
 */
function productionNodeFlags (): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  const words = (pkg.scripts.start ?? '').trim().split(/\s+/)
  return words.slice(1).filter((word) => word.startsWith('--'))
}

type TargetKind = 'service' | 'baseline' | 'peer'

/** One process of a target and where it listens. */
interface Instance { child: ChildProcess, url: string }

interface Target {
  id: string
  label: string
  kind: TargetKind
  /** The headline service (SQLite, SQLITE_SYNCHRONOUS=FULL): targets apply to it. */
  headline: boolean
  informative: boolean
  /** Only the write scenarios run here (the NORMAL comparison). */
  writesOnly: boolean
  /** Only these scenarios run here (the metrics comparison). */
  scenarioNames?: string[]
  /** Its processes: one, or several behind a round-robin split (the load is divided between their URLs). */
  instances: Instance[]
  seed: Seed
  env?: Record<string, string>
  /** Measure the PostgreSQL server's CPU (all local `postgres` processes) around each timed run. */
  postgresServer?: boolean
  startups: Startup[]
}

interface Startup {
  /** spawn → the "Server listening" log line (its own timestamp). */
  listeningMs: number
  /** spawn → first 200 from GET /health/live. */
  liveMs: number
  /** CPU time (user + system) the process had used when it was seen listening. */
  cpuMs: number
  freshDatabase: boolean
}

interface Measurement extends Omit<LoadResult, 'id'> {
  scenario: string
  target: string
  round: number
  order: number
  /** The largest peak RSS of any one of the target's processes. */
  peakRssMb: number
  /** Each process's peak RSS during the run, MB (one entry per instance). */
  peakRssMbByInstance: number[]
  /** CPU time the target (all its processes) used per answered request during the timed run, µs (robust to a busy machine). */
  cpuUsPerRequest: number
  /** The target's CPU use during the timed run, in cores (1 = one core busy). */
  cpuCores: number
  /**
   * The PostgreSQL server's CPU per answered request over the timed run, µs: every local process named `postgres`
   * (other clients' queries included; a backend that exits during the run is not counted). NaN when not measured.
   */
  dbCpuUsPerRequest: number
}

function log (line: string): void {
  process.stderr.write(`${line}\n`)
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** The environment of a child server: ours without any service variable, plus `env`. */
function serverEnv (env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env }
  for (const key of configVariableNames()) delete base[key]
  return { ...base, ...env }
}

interface HttpAnswer { status: number, rawHeaders: string[], body: Buffer }

async function call (url: string, req: { method: string, path: string, headers?: Record<string, string>, body?: string }): Promise<HttpAnswer> {
  return await new Promise((resolve, reject) => {
    const outgoing = httpRequest(new URL(req.path, url), { method: req.method, headers: req.headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }) })
      res.on('error', reject)
    })
    outgoing.on('error', reject)
    outgoing.end(req.body)
  })
}

let clockTicks = 100
try { clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100 } catch {}

/** CPU time (user + system) a process has used so far, ms. */
function procCpuMs (pid: number): number {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).cpuTicks * 1000 / clockTicks
  } catch {
    return Number.NaN
  }
}

/**
 * CPU time (user + system) used so far by every process on this machine named `postgres` (the PostgreSQL server:
 * postmaster, backends, background workers), ms; NaN when there is none (a remote server, or /proc hides it).
 * A backend that exits (a pool closing an idle connection) takes its CPU time out of the sum of live processes;
 * the postmaster that reaps it adds it to its own children's time, which is counted too.
 */
function postgresServerCpuMs (): number {
  let ticks = 0
  let found = false
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = parseProcStat(readFileSync(`/proc/${entry}/stat`, 'utf8'))
      if (stat.comm !== 'postgres') continue
      ticks += stat.cpuTicks + stat.reapedChildrenCpuTicks
      found = true
    } catch {}
  }
  return found ? ticks * 1000 / clockTicks : Number.NaN
}

function procStatus (pid: number): { rssKb: number, hwmKb: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8')
    const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN)
    return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') }
  } catch {
    return undefined
  }
}

async function stopChild (child: ChildProcess, timeoutMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve() }))
  child.kill('SIGTERM')
  const timer = setTimeout(() => { child.kill('SIGKILL') }, timeoutMs)
  await exited
  clearTimeout(timer)
}

interface Started { child: ChildProcess, url: string, startup: Startup }

/** Spawns the built service with its logs in a new file `logPath` and times it to listening. */
async function spawnService (env: Record<string, string>, logPath: string, options: BenchOptions, freshDatabase: boolean): Promise<Started> {
  const fd = openSync(logPath, 'w')
  const execArgv = options.cpuProf === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${resolve(options.cpuProf)}`]
  const spawnedAt = Date.now()
  const child = spawn(process.execPath, [...execArgv, ...productionNodeFlags(), SERVER()], { cwd: ROOT, env: serverEnv(env), stdio: ['ignore', fd, fd] })
  closeSync(fd)
  let exited = false
  child.once('exit', () => { exited = true })
  const deadline = Date.now() + 30_000
  for (;;) {
    const text = readFileSync(logPath, 'utf8')
    const line = text.split('\n').find((entry) => entry.includes('"Server listening at '))
    if (line !== undefined) {
      const cpuMs = procCpuMs(child.pid as number)
      const parsed = JSON.parse(line) as { time: number, msg: string }
      const url = parsed.msg.slice('Server listening at '.length)
      const listeningMs = parsed.time - spawnedAt
      for (;;) {
        try {
          if ((await call(url, { method: 'GET', path: '/health/live' })).status === 200) break
        } catch {}
        if (Date.now() > deadline) throw new Error('the service never answered /health/live')
        await sleep(2)
      }
      return { child, url, startup: { listeningMs, liveMs: Date.now() - spawnedAt, cpuMs, freshDatabase } }
    }
    if (exited || Date.now() > deadline) {
      await stopChild(child)
      throw new Error(`the service did not start: ${text.trim().split('\n').slice(-3).join(' | ')}`)
    }
    await sleep(3)
  }
}

/** Makes sure a request answered as expected while seeding. */
function expectStatus (answer: HttpAnswer, status: number, what: string): HttpAnswer {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.body.toString()}`)
  return answer
}

/** The services' ADMIN_API_KEY (a throwaway database per run). */
const BENCH_ADMIN_KEY = 'bench-admin-key-0123456789abcdefghijklmnopqrstuv'
/** The services' ENCRYPTION_KEYS (PostgreSQL requires them). */
const BENCH_ENCRYPTION_KEYS = 'bench:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8='

/** A new merchant and its API key's Authorization header. */
async function seedMerchant (url: string, email: string): Promise<{ merchantId: string, auth: { authorization: string } }> {
  const admin = { authorization: `Bearer ${BENCH_ADMIN_KEY}` }
  const merchant = expectStatus(await call(url, {
    method: 'POST', path: '/merchants', headers: { 'content-type': 'application/json', ...admin }, body: JSON.stringify({ name: 'Bench', email })
  }), 201, 'seed merchant')
  const merchantId = (JSON.parse(merchant.body.toString()) as { id: string }).id
  const key = expectStatus(await call(url, { method: 'POST', path: `/merchants/${merchantId}/api-keys`, headers: admin }), 201, 'seed API key')
  return { merchantId, auth: { authorization: `Bearer ${(JSON.parse(key.body.toString()) as { secret: string }).secret}` } }
}

/**
 * Seeds a target. `connectors`: the target has connector accounts (the service; not the Express peer, which pays every
 * merchant's payments the same way, so its connector-payment rows are its plain payment).
 */
async function seedService (url: string, runId: string, connectors = true): Promise<Seed> {
  const json = { 'content-type': 'application/json' }
  const admin = { authorization: `Bearer ${BENCH_ADMIN_KEY}` }
  // Payments are measured as a client sends them: with a merchant's API key.
  const { auth: merchantAuth } = await seedMerchant(url, `bench-${runId}@example.com`)
  let connectorMerchantAuth = merchantAuth
  if (connectors) {
    const connectorMerchant = await seedMerchant(url, `bench-${runId}-connector@example.com`)
    expectStatus(await call(url, {
      method: 'POST', path: `/merchants/${connectorMerchant.merchantId}/connectors`, headers: { ...json, ...admin }, body: JSON.stringify({ type: 'simulated' })
    }), 201, 'seed connector account')
    connectorMerchantAuth = connectorMerchant.auth
  }
  const seed: Seed = {
    productId: 'bench-product', putProductId: 'bench-put', replayKey: `${runId}-replay`, paymentId: '', refundPaymentIds: [], adminAuth: admin, merchantAuth, connectorMerchantAuth
  }
  expectStatus(await call(url, { method: 'PUT', path: `/products/${seed.productId}`, headers: { ...json, ...admin }, body: PRODUCT_BODY }), 200, 'seed product')
  const payment = expectStatus(await call(url, {
    method: 'POST', path: '/api/payments', headers: { ...json, ...merchantAuth, 'idempotency-key': seed.replayKey }, body: PAYMENT_BODY
  }), 201, 'seed payment')
  seed.paymentId = (JSON.parse(payment.body.toString()) as { id: string }).id
  // The payments the refund scenario refunds 0.01 at a time (they also give the list scenario more than a page).
  const refundable = async (i: number): Promise<string> => {
    const answer = expectStatus(await call(url, {
      method: 'POST', path: '/api/payments', headers: { ...json, ...merchantAuth, 'idempotency-key': `${runId}-refundable-${i}` }, body: REFUNDABLE_PAYMENT_BODY
    }), 201, 'seed refundable payment')
    return (JSON.parse(answer.body.toString()) as { id: string }).id
  }
  for (let i = 0; i < REFUND_PAYMENTS; i += 10) {
    seed.refundPaymentIds.push(...await Promise.all(Array.from({ length: Math.min(10, REFUND_PAYMENTS - i) }, async (_, j) => await refundable(i + j))))
  }
  return seed
}

/** What the baseline answers: the service's own response to one request of each scenario. */
async function captureResponses (url: string, seed: Seed, runId: string): Promise<CannedResponse[]> {
  const canned: CannedResponse[] = []
  // The baseline tries the answers bound to a key first, then the most specific path (matchOrder), whatever the order here.
  for (const scenario of SCENARIOS) {
    const name = scenario.name
    const req = scenario.request(seed, runId)
    const headers = req.freshKeyPrefix === undefined ? req.headers : { ...req.headers, 'idempotency-key': `${req.freshKeyPrefix}-${name}` }
    let answer = await call(url, { ...req, headers })
    if (answer.status < 200 || answer.status >= 300) throw new Error(`capturing ${name}: ${answer.status} ${answer.body.toString()}`)
    let { method, path } = req
    if (req.followUp !== undefined) {
      // The pair's second request is the one a canned answer is needed for (the first is answered as POST /api/payments).
      const id = (JSON.parse(answer.body.toString()) as { id: string }).id
      const followUpHeaders = req.freshKeyPrefix === undefined ? req.headers : { ...req.headers, 'idempotency-key': `${req.freshKeyPrefix}-${name}-f` }
      method = req.followUp.method
      path = req.followUp.path.replace('{id}', id)
      answer = await call(url, { method, path, headers: followUpHeaders, ...(req.followUp.body === undefined ? {} : { body: req.followUp.body }) })
      if (answer.status < 200 || answer.status >= 300) throw new Error(`capturing ${name}'s follow-up: ${answer.status} ${answer.body.toString()}`)
    }
    const pathSuffix = cannedPathSuffix(path)
    canned.push({
      scenario: name,
      method,
      pathPrefix: cannedPathPrefix(path),
      ...(pathSuffix === undefined ? {} : { pathSuffix }),
      ...(name === 'replay-payment' ? { idempotencyKey: seed.replayKey } : {}),
      status: answer.status,
      headers: replayableHeaders(answer.rawHeaders),
      body: answer.body.toString('base64')
    })
  }
  return canned
}

/**
 * A fresh schema in the given PostgreSQL database for this run (the service
 * migrates it; it is dropped afterwards), so the benchmark never touches the
 * database's own tables.
 */
async function isolatedPostgres (url: string, runId: string): Promise<{ url: string, drop: () => Promise<void> }> {
  const pg = require('pg') as typeof import('pg')
  const schema = `bench_${runId.replace(/[^a-z0-9]/gi, '_')}`.toLowerCase()
  const run = async (sql: string): Promise<void> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
    await client.connect()
    try { await client.query(sql) } finally { await client.end() }
  }
  await run(`CREATE SCHEMA "${schema}"`)
  const scoped = new URL(url)
  scoped.searchParams.set('options', `-c search_path=${schema}`)
  return { url: scoped.toString(), drop: async () => { await run(`DROP SCHEMA "${schema}" CASCADE`) } }
}

/** Starts a script that prints `listening PORT` (the baseline, the Express peer). */
async function startListeningProcess (script: string, args: string[] = []): Promise<{ child: ChildProcess, url: string }> {
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, env: serverEnv({ NODE_ENV: 'production' }), stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise<number>((resolve, reject) => {
    let out = ''
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const match = /listening (\d+)/.exec(out)
      if (match !== null) resolve(Number(match[1]))
    })
    child.once('exit', (code) => { reject(new Error(`${script} exited with ${String(code)}`)) })
  })
  return { child, url: `http://127.0.0.1:${port}` }
}

/** The forked autocannon process. */
class Loader {
  private readonly child: ChildProcess
  private nextId = 1
  private readonly pending = new Map<number, { resolve: (result: LoadResult) => void, reject: (err: Error) => void }>()

  constructor () {
    this.child = fork(LOADER(), [], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    this.child.on('message', (message: { ok: boolean, result?: LoadResult, id?: number, error?: string }) => {
      const id = message.ok ? (message.result as LoadResult).id : message.id as number
      const waiter = this.pending.get(id)
      this.pending.delete(id)
      if (message.ok) waiter?.resolve(message.result as LoadResult)
      else waiter?.reject(new Error(message.error))
    })
    this.child.once('exit', (code) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`the load generator exited with ${String(code)}`))
      this.pending.clear()
    })
  }

  async run (job: Omit<LoadJob, 'id'>): Promise<LoadResult> {
    const id = this.nextId++
    return await new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.child.send({ ...job, id })
    })
  }

  close (): void {
    this.child.disconnect()
  }
}

async function measure (loader: Loader, target: Target, scenario: Scenario, round: number, order: number, options: BenchOptions, runId: string): Promise<Measurement> {
  const request: LoadRequest = scenario.request(target.seed, `${runId}-${target.id}-r${round}`)
  const pids = target.instances.map((instance) => instance.child.pid as number)
  const peakRssKb = pids.map(() => 0)
  const sampler = setInterval(() => {
    for (const [i, pid] of pids.entries()) {
      const status = procStatus(pid)
      if (status !== undefined && status.rssKb > (peakRssKb[i] ?? 0)) peakRssKb[i] = status.rssKb
    }
  }, 100)
  const cpuOfTarget = (): number => pids.reduce((total, pid) => total + procCpuMs(pid), 0)
  try {
    const job = { urls: target.instances.map((instance) => instance.url), request, connections: options.connections, warmupSeconds: 0 }
    if (options.warmup > 0) await loader.run({ ...job, durationSeconds: options.warmup })
    const cpuBefore = cpuOfTarget()
    const dbBefore = target.postgresServer === true ? postgresServerCpuMs() : Number.NaN
    const result = await loader.run({ ...job, durationSeconds: options.duration })
    const cpuMs = cpuOfTarget() - cpuBefore
    const dbCpuMs = target.postgresServer === true ? postgresServerCpuMs() - dbBefore : Number.NaN
    const { id: _id, ...rest } = result
    const perRequest = (ms: number): number => result.responses > 0 ? ms * 1000 / result.responses : Number.NaN
    return {
      ...rest,
      scenario: scenario.name,
      target: target.id,
      round,
      order,
      peakRssMb: Math.max(...peakRssKb) / 1024,
      peakRssMbByInstance: peakRssKb.map((kb) => kb / 1024),
      cpuUsPerRequest: perRequest(cpuMs),
      cpuCores: cpuMs / 1000 / result.seconds,
      dbCpuUsPerRequest: perRequest(dbCpuMs)
    }
  } finally {
    clearInterval(sampler)
  }
}

interface Summary {
  scenario: string
  target: string
  rps: number
  p50: number
  p99: number
  p99Worst: number
  peakRssMb: number
  ratio: number
  non2xx: number
  errors: number
  rounds: number[]
  cpuUsPerRequest: number
  /** Median per-round ratio of the baseline's CPU per request to this target's (1 = as cheap as the baseline). */
  cpuRatio: number
  /** Median per-round ratio of this target's req/s to the Express peer's (NaN without the peer). */
  peerRatio: number
  /** Median PostgreSQL server CPU per request, µs (NaN when not measured). */
  dbCpuUsPerRequest: number
}

function summarize (measurements: Measurement[], scenario: string, target: string): Summary | undefined {
  const mine = measurements.filter((m) => m.scenario === scenario && m.target === target).sort((a, b) => a.round - b.round)
  if (mine.length === 0) return undefined
  const baseline = measurements.filter((m) => m.scenario === scenario && m.target === 'baseline')
  const paired = mine.map((m) => baseline.find((b) => b.round === m.round)?.rps ?? Number.NaN)
  const peer = measurements.filter((m) => m.scenario === scenario && m.target === 'express')
  return {
    scenario,
    target,
    rps: median(mine.map((m) => m.rps)),
    p50: median(mine.map((m) => m.latency.p50)),
    p99: median(mine.map((m) => m.latency.p99)),
    p99Worst: Math.max(...mine.map((m) => m.latency.p99)),
    peakRssMb: Math.max(...mine.map((m) => m.peakRssMb)),
    ratio: pairedRatio(mine.map((m) => m.rps), paired),
    non2xx: mine.reduce((sum, m) => sum + m.non2xx, 0),
    errors: mine.reduce((sum, m) => sum + m.errors + m.timeouts, 0),
    rounds: mine.map((m) => m.rps),
    cpuUsPerRequest: median(mine.map((m) => m.cpuUsPerRequest)),
    cpuRatio: pairedRatio(
      mine.map((m) => baseline.find((b) => b.round === m.round)?.cpuUsPerRequest ?? Number.NaN),
      mine.map((m) => m.cpuUsPerRequest)
    ),
    peerRatio: pairedRatio(mine.map((m) => m.rps), mine.map((m) => peer.find((b) => b.round === m.round)?.rps ?? Number.NaN)),
    dbCpuUsPerRequest: median(mine.map((m) => m.dbCpuUsPerRequest))
  }
}

/**
 * Latency of one durable commit in `dir`: a one-row INSERT into a WAL database
 * with SYNCHRONOUS=FULL, as the service's store is opened. It is the least one
 * acknowledged write waits for, whatever the service does around it.
 */
function measureCommit (dir: string, samples = 200): { p50: number, p99: number } {
  const BetterSqlite3 = require('better-sqlite3') as typeof import('better-sqlite3')
  const file = join(dir, 'commit-probe.db')
  const db = new BetterSqlite3(file)
  const times: number[] = []
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = FULL')
    db.exec('CREATE TABLE probe (id INTEGER PRIMARY KEY, value TEXT NOT NULL)')
    const insert = db.prepare('INSERT INTO probe (value) VALUES (?)')
    const value = 'x'.repeat(200)
    for (let i = 0; i < samples; i++) {
      const start = performance.now()
      insert.run(value)
      times.push(performance.now() - start)
    }
  } finally {
    db.close()
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
  }
  const summary = summarizeLatencies(times)
  return { p50: summary.p50, p99: summary.p99 }
}

function filesystemOf (dir: string): string {
  try {
    const type = statfsSync(dir).type
    return type === TMPFS_MAGIC ? 'tmpfs' : type === 0xef53 ? 'ext4' : `0x${type.toString(16)}`
  } catch {
    return 'unknown'
  }
}

const USAGE = `npm run bench [-- options]

  --duration=S      seconds of each timed run (BENCH_DURATION, default ${DEFAULT_OPTIONS.duration})
  --warmup=S        seconds of warm-up before each timed run (BENCH_WARMUP, default ${DEFAULT_OPTIONS.warmup})
  --rounds=N        rounds, alternating service and baseline (BENCH_ROUNDS, default ${DEFAULT_OPTIONS.rounds})
  --connections=N   autocannon connections (BENCH_CONNECTIONS, default ${DEFAULT_OPTIONS.connections})
  --scenarios=a,b   ${SCENARIOS.map((scenario) => scenario.name).join(', ')} (BENCH_SCENARIOS, default all)
  --starts=N        extra restarts timed to listening (BENCH_STARTS, default ${DEFAULT_OPTIONS.starts})
  --no-normal       skip the informative SQLITE_SYNCHRONOUS=NORMAL rows (BENCH_NORMAL=0)
  --no-metrics      skip the metrics-on rows that measure what metrics cost per request (BENCH_METRICS=0)
  --cpu-prof=DIR    write node --cpu-prof profiles of the services into DIR (BENCH_CPU_PROF)

  DATABASE_URL=postgres://… adds PostgreSQL rows: one instance, and two instances on one database with the load
  split round-robin between them (each row in a schema of its own, dropped afterwards), with the PostgreSQL
  server's CPU per request when it runs on this machine.
  Results: a table on stdout, progress on stderr, JSON in bench/results/.
`

async function main (): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(USAGE)
    return
  }
  const options = parseBenchOptions(process.argv.slice(2), process.env)
  const scenarios = options.scenarios.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => options.scenarios.includes(s.name))
  if (scenarios.length === 0) throw new Error(`no such scenario; known: ${SCENARIOS.map((s) => s.name).join(', ')}`)
  if (!existsSync(SERVER())) throw new Error(`${SERVER()} is missing: run npm run build first (npm run bench does)`)
  if (options.cpuProf !== undefined) mkdirSync(resolve(options.cpuProf), { recursive: true })

  const runId = `bench-${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`
  const dir = mkdtempSync(join(tmpdir(), 'service-bench-'))
  mkdirSync(RESULTS_DIR, { recursive: true })
  SNAPSHOT = join(RESULTS_DIR, `.dist-${runId}`)
  cpSync(DIST, SNAPSHOT, { recursive: true })
  const fsType = filesystemOf(dir)
  if (fsType === 'tmpfs') log(`warning: ${dir} is on tmpfs, where fsync costs nothing; SQLITE_SYNCHRONOUS=FULL is not measured honestly (set TMPDIR to a disk)`)
  const startedAt = new Date()
  const loadBefore = loadavg()
  const commit = measureCommit(dir)
  const metricsHook = options.metrics ? measureMetricsHook() : undefined
  if (metricsHook !== undefined) log(`metrics onResponse hook: ${fmt(metricsHook.usPerRequest, 3)} µs CPU per request (in-process)`)
  log(`bench ${runId}: ${scenarios.length} scenarios × ${options.rounds} rounds, ${options.connections} connections, ` +
    `${options.warmup}s warm-up + ${options.duration}s each; data and logs in ${dir} (${fsType})`)

  const production: Record<string, string> = {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: '1000000000',
    ADMIN_API_KEY: BENCH_ADMIN_KEY,
    ENCRYPTION_KEYS: BENCH_ENCRYPTION_KEYS
  }
  const targets: Target[] = []
  const skipped: Array<{ target: string, reason: string }> = []
  const loader = new Loader()
  let baselineChild: ChildProcess | undefined
  let peerChild: ChildProcess | undefined
  let fastifyPeerChild: ChildProcess | undefined
  const dropPostgres: Array<() => Promise<void>> = []

  /**
   * Starts a service target of `count` processes on the same database, one after the other (the first migrates a
   * fresh database; the next start once it listens), and seeds it through the first.
   */
  const addService = async (id: string, label: string, env: Record<string, string>, flags: Partial<Target>, count = 1): Promise<Target | undefined> => {
    const fullEnv = { ...production, ...env }
    const started: Started[] = []
    try {
      for (let i = 0; i < count; i++) {
        started.push(await spawnService(fullEnv, join(dir, count === 1 ? `${id}.log` : `${id}-${i + 1}.log`), options, i === 0))
      }
      const [first] = started
      if (first === undefined) return undefined
      const seed = await seedService(first.url, runId)
      const target: Target = {
        id,
        label,
        kind: 'service',
        headline: false,
        informative: false,
        writesOnly: false,
        ...flags,
        instances: started.map(({ child, url }) => ({ child, url })),
        seed,
        env: fullEnv,
        startups: started.map((s) => s.startup)
      }
      targets.push(target)
      for (const s of started) log(`${label}: listening after ${s.startup.listeningMs} ms (live after ${s.startup.liveMs} ms) at ${s.url}`)
      return target
    } catch (err) {
      for (const s of started) await stopChild(s.child)
      const reason = err instanceof Error ? err.message : String(err)
      skipped.push({ target: label, reason })
      log(`${label}: skipped (${reason})`)
      return undefined
    }
  }

  try {
    // The headline: default SQLITE_SYNCHRONOUS (FULL), a fresh database on disk.
    const headline = await addService('sqlite', 'service, SQLite (SYNCHRONOUS=FULL)', { DATABASE_URL: `file:${join(dir, 'service.db')}` }, { headline: true })
    if (headline === undefined) throw new Error(`the service did not start: ${skipped[0]?.reason ?? ''}`)
    const [headlineInstance] = headline.instances
    if (headlineInstance === undefined) throw new Error('the service did not start')
    const canned = await captureResponses(headlineInstance.url, headline.seed, `${runId}-capture`)
    const responsesFile = join(dir, 'baseline-responses.json')
    writeFileSync(responsesFile, JSON.stringify(canned, null, 2))
    const baseline = await startListeningProcess(BASELINE(), [responsesFile])
    baselineChild = baseline.child
    /** A target of one process that is not the service: measured in every round, never restarted. */
    const other = (id: string, label: string, kind: 'baseline' | 'peer', instance: { child: ChildProcess, url: string }, seed: Seed): Target =>
      ({ id, label, kind, headline: false, informative: kind === 'peer', writesOnly: false, instances: [instance], seed, startups: [] })
    targets.push(other('baseline', 'baseline, raw node:http (no storage)', 'baseline', baseline, headline.seed))
    try {
      const peer = await startListeningProcess(EXPRESS_PEER())
      peerChild = peer.child
      targets.push(other('express', 'Express 5 peer (helmet, express-rate-limit, express.json, a Map)', 'peer', peer, await seedService(peer.url, runId, false)))
    } catch (err) {
      skipped.push({ target: 'Express peer', reason: err instanceof Error ? err.message : String(err) })
      log(`Express peer: skipped (${String(err)})`)
    }
    // What the design card's packages cost alone: the service's captured answers behind Fastify, helmet and rate-limit.
    try {
      const fastifyPeer = await startListeningProcess(FASTIFY_PEER(), [responsesFile])
      fastifyPeerChild = fastifyPeer.child
      targets.push(other('fastify', 'bare Fastify peer (helmet, rate-limit, the captured answers from memory)', 'peer', fastifyPeer, headline.seed))
    } catch (err) {
      skipped.push({ target: 'bare Fastify peer', reason: err instanceof Error ? err.message : String(err) })
      log(`bare Fastify peer: skipped (${String(err)})`)
    }
    if (options.normal && scenarios.some((s) => s.writes)) {
      await addService('sqlite-normal', 'service, SQLite (SYNCHRONOUS=NORMAL) — informative only',
        { DATABASE_URL: `file:${join(dir, 'service-normal.db')}`, SQLITE_SYNCHRONOUS: 'NORMAL' }, { informative: true, writesOnly: true })
    }
    if (options.metrics && scenarios.some((s) => METRICS_SCENARIOS.includes(s.name))) {
      await addService('sqlite-metrics', 'service, SQLite (SYNCHRONOUS=FULL), metrics on (METRICS_PORT) — informative only',
        { DATABASE_URL: `file:${join(dir, 'service-metrics.db')}`, METRICS_PORT: '0' }, { informative: true, scenarioNames: METRICS_SCENARIOS })
    }
    if (options.postgresUrl !== undefined) {
      // One instance, and two on one database behind a round-robin split (each in a schema of its own, so neither
      // row measures the other's tables): the scale-out path's cost per request, and the database server's.
      for (const [id, count, label] of [
        ['postgres', 1, `service, PostgreSQL (${redactUrl(options.postgresUrl)})`],
        ['postgres-x2', 2, `service, PostgreSQL, 2 instances, round-robin (${redactUrl(options.postgresUrl)})`]
      ] as const) {
        try {
          const isolated = await isolatedPostgres(options.postgresUrl, `${runId}-${id}`)
          dropPostgres.push(isolated.drop)
          await addService(id, label, { DATABASE_URL: isolated.url }, { postgresServer: true }, count)
        } catch (err) {
          skipped.push({ target: label, reason: err instanceof Error ? err.message : String(err) })
          log(`${label}: skipped (${String(err)})`)
        }
      }
    }

    const measurements: Measurement[] = []
    for (let round = 0; round < options.rounds; round++) {
      for (const scenario of scenarios) {
        const eligible = targets.filter((target) => (!target.writesOnly || scenario.writes) &&
          (target.scenarioNames === undefined || target.scenarioNames.includes(scenario.name)))
        // Alternate who goes first so a drift in machine load does not favour one side.
        const order = round % 2 === 0 ? eligible : [...eligible].reverse()
        for (const [position, target] of order.entries()) {
          const m = await measure(loader, target, scenario, round, position, options, runId)
          measurements.push(m)
          const bad = m.non2xx + m.errors + m.timeouts > 0 ? ` (non-2xx ${m.non2xx}, errors ${m.errors}, timeouts ${m.timeouts})` : ''
          const db = Number.isFinite(m.dbCpuUsPerRequest) ? `  db server cpu ${fmt(m.dbCpuUsPerRequest)} µs/req` : ''
          log(`round ${round + 1}/${options.rounds} ${scenario.name.padEnd(14)} ${target.id.padEnd(13)} ` +
            `${fmt(m.rps).padStart(6)} req/s  p50 ${fmt(m.latency.p50, 2)} ms  p99 ${fmt(m.latency.p99, 2)} ms  rss ${fmt(m.peakRssMb)} MB  cpu ${fmt(m.cpuUsPerRequest)} µs/req (${fmt(m.cpuCores, 2)} cores)${db}${bad}`)
        }
      }
    }

    /** Each target's processes' peak RSS (VmHWM) over the whole run, MB. */
    const hwm: Record<string, number[]> = {}
    for (const target of targets) {
      hwm[target.id] = target.instances.map((instance) => (procStatus(instance.child.pid as number)?.hwmKb ?? Number.NaN) / 1024)
    }

    // Start-up: the first start above (fresh database) plus restarts on the same database.
    for (const target of targets.filter((t) => t.kind === 'service')) {
      for (const instance of target.instances) await stopChild(instance.child)
      if (!target.headline) continue
      for (let i = 0; i < options.starts; i++) {
        const started = await spawnService(target.env as Record<string, string>, join(dir, `${target.id}-restart-${i}.log`), options, false)
        target.startups.push(started.startup)
        target.instances = [{ child: started.child, url: started.url }]
        await stopChild(started.child)
      }
    }

    report({ options, runId, startedAt, loadBefore, fsType, commit, metricsHook, targets, scenarios, measurements, hwm, skipped })
  } finally {
    loader.close()
    for (const target of targets) for (const instance of target.instances) await stopChild(instance.child)
    if (baselineChild !== undefined) await stopChild(baselineChild)
    if (peerChild !== undefined) await stopChild(peerChild)
    if (fastifyPeerChild !== undefined) await stopChild(fastifyPeerChild)
    for (const drop of dropPostgres) await drop().catch((err: unknown) => { log(`could not drop a benchmark schema: ${String(err)}`) })
    rmSync(dir, { recursive: true, force: true })
    rmSync(SNAPSHOT, { recursive: true, force: true })
  }
}

interface ReportInput {
  options: BenchOptions
  runId: string
  startedAt: Date
  loadBefore: number[]
  fsType: string
  commit: { p50: number, p99: number }
  metricsHook: HookCost | undefined
  targets: Target[]
  scenarios: Scenario[]
  measurements: Measurement[]
  hwm: Record<string, number[]>
  skipped: Array<{ target: string, reason: string }>
}

function report (input: ReportInput): void {
  const { options, targets, scenarios, measurements, hwm } = input
  const hwmOf = (id: string): number[] => hwm[id] ?? []
  const headline = targets.find((t) => t.headline) as Target
  const rows: string[][] = []
  const summaries: Summary[] = []
  const checks: Array<{ goal: string, value: string, met: boolean }> = []
  const ordered = [...targets].sort((a, b) => rank(a) - rank(b))
  for (const scenario of scenarios) {
    for (const target of ordered) {
      const summary = summarize(measurements, scenario.name, target.id)
      if (summary === undefined) continue
      summaries.push(summary)
      let goal = target.headline && scenario.reportOnly === true ? 'reported (no target)' : ''
      if (target.headline && scenario.reportOnly !== true) {
        const goals: string[] = []
        let met = summary.p99 <= GOALS.p99Ms
        goals.push(`p99 ≤ ${GOALS.p99Ms} ms`)
        checks.push({ goal: `${scenario.title}: p99 ≤ ${GOALS.p99Ms} ms`, value: `${fmt(summary.p99, 2)} ms`, met: summary.p99 <= GOALS.p99Ms })
        if (scenario.ratioTarget !== undefined) {
          goals.unshift(`≥ ${scenario.ratioTarget.toFixed(2)}×`)
          met = met && summary.ratio >= scenario.ratioTarget
          checks.push({ goal: `${scenario.title}: ≥ ${scenario.ratioTarget.toFixed(2)}× baseline`, value: `${fmt(summary.ratio, 3)}×`, met: summary.ratio >= scenario.ratioTarget })
        }
        if (scenario.peerRatioTarget !== undefined) {
          const peerMet = summary.peerRatio >= scenario.peerRatioTarget
          goals.push(`≥ ${scenario.peerRatioTarget.toFixed(1)}× Express`)
          met = met && peerMet
          checks.push({ goal: `${scenario.title}: ≥ ${scenario.peerRatioTarget.toFixed(1)}× the Express peer`, value: `${fmt(summary.peerRatio, 2)}×`, met: peerMet })
        }
        goal = `${goals.join(', ')}: ${met ? 'met' : 'MISSED'}`
      }
      const problems = summary.non2xx + summary.errors > 0 ? ` ⚠ ${summary.non2xx} non-2xx, ${summary.errors} errors` : ''
      rows.push([
        scenario.title,
        storeLabel(target),
        fmt(summary.rps),
        fmt(summary.p50, 2),
        fmt(summary.p99, 2),
        fmt(summary.peakRssMb),
        fmt(summary.cpuUsPerRequest),
        fmt(requestsPerCore(summary.cpuUsPerRequest)),
        fmt(summary.dbCpuUsPerRequest),
        target.kind === 'baseline' ? '1.000×' : `${fmt(summary.ratio, 3)}×`,
        target.kind === 'baseline' ? '1.000×' : `${fmt(summary.cpuRatio, 3)}×`,
        goal + problems
      ])
    }
  }
  // Metrics: the per-request hook measured in-process is the check; the end-to-end difference (on − off, same rounds)
  // is printed beside it, but a few µs is within the noise of CPU per request on a shared machine.
  const metricsLines: string[] = []
  if (input.metricsHook !== undefined) {
    const cost = input.metricsHook.usPerRequest
    checks.push({ goal: `metrics cost < ${GOALS.metricsUsPerRequest} µs/request (onResponse hook, CPU, in-process)`, value: `${fmt(cost, 3)} µs`, met: cost < GOALS.metricsUsPerRequest })
    const withMetrics = targets.find((t) => t.id === 'sqlite-metrics')
    for (const scenario of scenarios) {
      if (withMetrics === undefined) break
      const cpu = (target: Target): number[] => measurements.filter((m) => m.scenario === scenario.name && m.target === target.id)
        .sort((a, b) => a.round - b.round).map((m) => m.cpuUsPerRequest)
      const on = cpu(withMetrics)
      if (on.length > 0) metricsLines.push(`${scenario.title}, metrics on − off end to end: ${fmt(pairedDifference(on, cpu(headline)), 1)} µs CPU per request (median of per-round differences).`)
    }
    metricsLines.unshift(`Metrics onResponse hook, in-process: ${fmt(cost, 3)} µs CPU per request (median of ${input.metricsHook.samples.length}: ${input.metricsHook.samples.map((s) => fmt(s, 3)).join(', ')}).`)
  }
  for (const scenario of scenarios) {
    if (scenario.postgresPerCoreTarget === undefined) continue
    const summary = summaries.find((s) => s.scenario === scenario.name && s.target === 'postgres')
    const perCore = summary === undefined ? Number.NaN : requestsPerCore(summary.cpuUsPerRequest, summary.dbCpuUsPerRequest)
    checks.push({
      goal: `${scenario.title}: PostgreSQL requests per core (service + database server) ≥ ${scenario.postgresPerCoreTarget.toLocaleString('en-US')}`,
      value: summary === undefined
        ? 'not measured (set DATABASE_URL)'
        : Number.isFinite(summary.dbCpuUsPerRequest) ? fmt(perCore) : `${fmt(requestsPerCore(summary.cpuUsPerRequest))} (service only: the database server is not on this machine)`,
      met: Number.isFinite(perCore) && Number.isFinite(summary?.dbCpuUsPerRequest ?? Number.NaN) && perCore >= scenario.postgresPerCoreTarget
    })
  }
  const headlineHwm = Math.max(...hwmOf(headline.id))
  checks.push({ goal: `service peak RSS ≤ ${GOALS.rssMb} MB`, value: `${fmt(headlineHwm)} MB`, met: headlineHwm <= GOALS.rssMb })
  const listening = headline.startups.map((s) => s.listeningMs)
  const startupMedian = median(listening)
  checks.push({
    goal: `start-up to listening ≤ ${GOALS.startupMs} ms (median)`,
    value: `${fmt(startupMedian)} ms (median of ${listening.length}; min ${fmt(Math.min(...listening))}, max ${fmt(Math.max(...listening))}; ` +
      `CPU used by then: median ${fmt(median(headline.startups.map((s) => s.cpuMs)))} ms)`,
    met: startupMedian <= GOALS.startupMs
  })

  const table = markdownTable(['scenario', 'store', 'req/s', 'p50 ms', 'p99 ms', 'peak RSS MB', 'CPU µs/req', 'req/core', 'DB server CPU µs/req',
    'req/s vs baseline', 'CPU/req vs baseline', 'target'], rows)
  const perCore = requestsPerCoreLines(scenarios, ordered, summaries)
  const date = input.startedAt.toISOString().slice(0, 10)
  const machine = `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.versions.node}, Linux ${release()}`
  const lines = [
    '',
    `## Benchmark ${date} — ${machine}`,
    `${options.connections} connections, ${options.rounds} rounds × (${options.warmup} s warm-up + ${options.duration} s), alternating targets; ` +
      'medians over rounds; "req/s vs baseline" is the median of the per-round ratios (service ÷ baseline of the same round); ' +
      '"CPU/req vs baseline" is the baseline\'s CPU time per request ÷ the service\'s (same rounds), which a busy machine disturbs much less ' +
      '(CPU counts the measured process only — both processes for two instances —: not the load generator; the PostgreSQL server\'s ' +
      'is its own column, "DB server CPU µs/req"). "req/core" is 1,000,000 ÷ "CPU µs/req": requests one core of service CPU answers. ' +
      'Peak RSS is per process (the larger of two instances). Two instances share one database; the load generator splits the ' +
      'connections between their URLs (round-robin, no proxy). Load average at start: ' +
      input.loadBefore.map((n) => n.toFixed(2)).join(' ') + `; data on ${input.fsType}.`,
    '',
    table,
    '',
    `Start-up to listening (spawn → "Server listening" log line): ${headline.startups.map((s) => `${s.listeningMs}${s.freshDatabase ? ' (fresh db)' : ''}`).join(', ')} ms; ` +
      `first 200 from /health/live: ${headline.startups.map((s) => s.liveMs).join(', ')} ms; ` +
      `CPU time used by then: ${headline.startups.map((s) => fmt(s.cpuMs)).join(', ')} ms.`,
    `Peak RSS (VmHWM) over the run, per process: ${targets.map((t) => `${t.id} ${hwmOf(t.id).map((mb) => fmt(mb)).join(' and ')} MB`).join(', ')}.`,
    ...perCore,
    `One durable commit (WAL, SYNCHRONOUS=FULL, one-row INSERT) in the data directory: p50 ${fmt(input.commit.p50, 2)} ms, p99 ${fmt(input.commit.p99, 2)} ms. ` +
      'A fresh-key payment needs 2 commits one after the other (the key claimed with the pending payment; the completion, ' +
      `with the simulated gateway's ledger entry), so its latency cannot go below ~${fmt(2 * input.commit.p50, 1)} ms (p50) even on an idle service; group commit shares each commit among the requests waiting for it.`,
    ...metricsLines,
    ...input.skipped.map((s) => `Skipped: ${s.target}: ${s.reason}`),
    '',
    'Targets:',
    ...checks.map((c) => `  ${c.met ? 'met   ' : 'MISSED'} ${c.goal} — ${c.value}`),
    ''
  ]
  process.stdout.write(lines.join('\n') + '\n')

  mkdirSync(RESULTS_DIR, { recursive: true })
  const file = join(RESULTS_DIR, `${input.startedAt.toISOString().replace(/[:.]/g, '-')}.json`)
  writeFileSync(file, JSON.stringify({
    runId: input.runId,
    date: input.startedAt.toISOString(),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGiB: totalmem() / 2 ** 30, node: process.versions.node, kernel: release(), loadBefore: input.loadBefore, loadAfter: loadavg(), dataFilesystem: input.fsType, durableCommitMs: input.commit },
    metricsHook: input.metricsHook,
    options: { ...options, postgresUrl: options.postgresUrl === undefined ? undefined : redactUrl(options.postgresUrl) },
    targets: targets.map((t) => ({
      id: t.id,
      label: t.label,
      kind: t.kind,
      headline: t.headline,
      informative: t.informative,
      instances: hwmOf(t.id).length,
      startups: t.startups,
      peakRssMb: Math.max(...hwmOf(t.id)),
      peakRssMbByInstance: hwm[t.id]
    })),
    skipped: input.skipped,
    summaries,
    checks,
    measurements
  }, null, 2))
  log(`results written to ${file}`)
}

/**
 * Requests per core for sizing, per scenario: the SQLite headline, and each PostgreSQL row by its service CPU alone
 * and with the database server's CPU added (what a fleet of instances plus its PostgreSQL server spends).
 */
function requestsPerCoreLines (scenarios: Scenario[], ordered: Target[], summaries: Summary[]): string[] {
  const sized = ordered.filter((t) => t.headline || t.postgresServer === true)
  if (!sized.some((t) => t.postgresServer === true)) return []
  const count = (value: number): string => Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '-'
  const lines = ['Requests per core (1,000,000 ÷ CPU µs per request; PostgreSQL: service processes alone, then with the database ' +
    'server\'s CPU added — all local `postgres` processes, other clients included):']
  for (const scenario of scenarios) {
    const parts: string[] = []
    for (const target of sized) {
      const summary = summaries.find((s) => s.scenario === scenario.name && s.target === target.id)
      if (summary === undefined) continue
      const service = count(requestsPerCore(summary.cpuUsPerRequest))
      parts.push(target.postgresServer === true
        ? `${storeLabel(target)} ${service} (${count(requestsPerCore(summary.cpuUsPerRequest, summary.dbCpuUsPerRequest))} with the database server)`
        : `${storeLabel(target)} ${service}`)
    }
    if (parts.length > 0) lines.push(`- ${scenario.title}: ${parts.join('; ')}.`)
  }
  return lines
}

function storeLabel (target: Target): string {
  if (target.kind === 'baseline') return 'baseline (raw node:http)'
  if (target.id === 'fastify') return 'bare Fastify peer (helmet, rate-limit; canned)'
  if (target.kind === 'peer') return 'Express 5 peer (in memory)'
  if (target.id === 'sqlite-metrics') return 'SQLite FULL + metrics (informative)'
  if (target.informative) return 'SQLite NORMAL (informative)'
  if (target.id === 'postgres-x2') return 'PostgreSQL, 2 instances'
  return target.id === 'postgres' ? 'PostgreSQL, 1 instance' : 'SQLite FULL'
}

function rank (target: Target): number {
  if (target.headline) return 0
  if (target.id === 'postgres') return 1
  if (target.id === 'postgres-x2') return 2
  if (target.id === 'fastify') return 5
  if (target.kind === 'peer') return 4
  if (target.informative) return 3
  return 6
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  process.exit(1)
})
