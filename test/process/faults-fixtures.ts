/**
 * Real processes for the fault tests: a throwaway PostgreSQL cluster (initdb into a temporary
 * directory, its own port), a throwaway Redis, instances of the BUILT service (dist/app/server.js,
 * what operators run), and a keyed load that retries like a well-behaved client.
 * Never the shared PostgreSQL (5432) or Redis (6379).
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { Test } from 'tap'
import { childEnv, type LogLine } from '../helpers/server-process'
import { TEST_ADMIN_KEY, TEST_ENCRYPTION_KEYS } from '../helpers/app'

const ROOT = resolve(__dirname, '..', '..')
export const PG_BIN = process.env.FAULT_PG_BIN ?? '/usr/lib/postgresql/15/bin'
export const SERVER_JS = join(ROOT, 'dist', 'app', 'server.js')

/** Why the fault tests cannot run here, or undefined. They run only when asked (FAULT_TESTS=1: CI's own step). */
export function faultTestsUnavailable (needs: { postgres?: boolean, redis?: boolean, tmpfs?: boolean }): string | undefined {
  if (process.env.FAULT_TESTS !== '1') return 'fault tests run in their own CI step (FAULT_TESTS=1 .ci/run step 6); skipped in npm test'
  if (!existsSync(SERVER_JS)) return `${SERVER_JS} is missing: run npm run build first`
  if (needs.postgres === true && !existsSync(join(PG_BIN, 'initdb'))) return `PostgreSQL binaries not found in ${PG_BIN}`
  if (needs.redis === true && spawnSync('redis-server', ['--version']).status !== 0) return 'redis-server not found'
  if (needs.tmpfs === true && process.getuid?.() !== 0) return 'mounting a tmpfs needs root'
  return undefined
}

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => { resolve(port) })
    })
  })
}

/** Runs a command to completion without blocking the event loop (as the postgres user when we are root: PostgreSQL refuses root). */
async function run (command: string, args: string[], asPostgres = false): Promise<string> {
  const [cmd, argv] = asPostgres && process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]
  return await new Promise((resolve, reject) => {
    execFile(cmd, argv, { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`${cmd} ${argv.join(' ')} failed: ${err.message} ${stderr}${stdout}`))
      else resolve(stdout)
    })
  })
}

export class PostgresCluster {
  readonly dir: string
  readonly port: number
  readonly url: string

  private constructor (dir: string, port: number) {
    this.dir = dir
    this.port = port
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`
  }

  static async start (t: Test): Promise<PostgresCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'faults-pg-'))
    if (process.getuid?.() === 0) chownSync(dir, Number((await run('id', ['-u', 'postgres'])).trim()), Number((await run('id', ['-g', 'postgres'])).trim()))
    chmodSync(dir, 0o700)
    const cluster = new PostgresCluster(dir, await freePort())
    t.teardown(() => {
      spawnSync(process.getuid?.() === 0 ? 'runuser' : join(PG_BIN, 'pg_ctl'),
        process.getuid?.() === 0 ? ['-u', 'postgres', '--', join(PG_BIN, 'pg_ctl'), '-D', join(dir, 'data'), 'stop', '-m', 'immediate'] : ['-D', join(dir, 'data'), 'stop', '-m', 'immediate'])
      rmSync(dir, { recursive: true, force: true })
    })
    await run(join(PG_BIN, 'initdb'), ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'], true)
    await cluster.start()
    return cluster
  }

  async pgCtl (...args: string[]): Promise<void> {
    await run(join(PG_BIN, 'pg_ctl'), ['-D', join(this.dir, 'data'), ...args], true)
  }

  private get serverOptions (): string[] {
    return ['-l', join(this.dir, 'log'), '-o', `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`]
  }

  async restart (mode: 'fast' | 'immediate'): Promise<void> { await this.pgCtl('restart', '-w', '-m', mode, ...this.serverOptions) }
  async stop (): Promise<void> { await this.pgCtl('stop', '-w', '-m', 'fast') }
  async start (): Promise<void> { await this.pgCtl('start', '-w', ...this.serverOptions) }

  /**
   * SIGSTOP / SIGCONT to the postmaster and every backend (each runs in its own session, so
   * not a process group): the postmaster first on stop, so it forks nothing new meanwhile.
   */
  signalAll (signal: 'SIGSTOP' | 'SIGCONT'): void {
    const pid = Number(readFileSync(join(this.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
    const children = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number)
    for (const target of signal === 'SIGSTOP' ? [pid, ...children] : [...children, pid]) {
      try { process.kill(target, signal) } catch {}
    }
  }

  async query<T extends pg.QueryResultRow> (sql: string, values: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5000 })
    client.on('error', () => {})
    await client.connect()
    try {
      return (await client.query<T>(sql, values)).rows
    } finally {
      await client.end()
    }
  }
}

export class RedisServer {
  child?: ChildProcess
  constructor (readonly port: number) {}
  get url (): string { return `redis://127.0.0.1:${this.port}` }

  static async start (t: Test): Promise<RedisServer> {
    const redis = new RedisServer(await freePort())
    t.teardown(() => { redis.child?.kill('SIGKILL') })
    await redis.launch()
    return redis
  }

  async launch (): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    for (let i = 0; i < 50; i++) {
      if (spawnSync('redis-cli', ['-p', String(this.port), 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG') return
      await sleep(100)
    }
    throw new Error('redis-server did not start')
  }

  async kill (): Promise<void> {
    const child = this.child
    if (child === undefined) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
  }
}

/** One instance of the built service (`node dist/app/server.js`), with its JSON log lines. */
export class ServiceInstance {
  readonly logs: LogLine[] = []
  stderr = ''
  base = ''
  readonly child: ChildProcess
  readonly exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>

  constructor (t: Test, env: Record<string, string>) {
    this.child = spawn(process.execPath, [SERVER_JS], { cwd: ROOT, env: childEnv({ PORT: '0', LOG_LEVEL: 'info', ADMIN_API_KEY: TEST_ADMIN_KEY, ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS, ...env }), stdio: ['ignore', 'pipe', 'pipe'] })
    let pending = ''
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) {
        try { this.logs.push(JSON.parse(line) as LogLine) } catch { this.logs.push({ msg: line }) }
      }
    })
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { this.stderr += chunk })
    this.exited = new Promise((resolve) => { this.child.on('exit', (code, signal) => { resolve({ code, signal }) }) })
    t.teardown(async () => {
      if (this.child.exitCode === null && this.child.signalCode === null) {
        this.child.kill('SIGKILL')
        await this.exited
      }
    })
  }

  get alive (): boolean { return this.child.exitCode === null && this.child.signalCode === null }

  async listening (timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      const line = this.logs.find((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('Server listening at '))
      if (line !== undefined) {
        this.base = (line.msg as string).slice('Server listening at '.length)
        return this.base
      }
      if (!this.alive) throw new Error(`the service exited before listening: ${this.stderr}`)
      await sleep(50)
    }
    throw new Error(`the service did not listen within ${timeoutMs} ms: ${this.stderr}`)
  }

  /** Log lines at error level or above (pino: 50 error, 60 fatal). */
  errors (): LogLine[] { return this.logs.filter((line) => (line.level ?? 0) >= 50) }
}

export interface Attempt { instance: number, status: number, ms: number, at: number, paymentId?: string, retryAfter?: string, error?: string }

/** What happened to one Idempotency-Key: every attempt, and the final answer (201 or 402) if it came. */
export interface KeyHistory {
  key: string
  amount: number
  attempts: Attempt[]
  final?: { status: 201 | 402, paymentId: string, paymentStatus: 'succeeded' | 'declined', at: number }
}

export interface LoadOptions {
  /** Base URLs; a client's attempts alternate between them (a load balancer retrying elsewhere). */
  bases: () => string[]
  clients: number
  /** Stop starting new keys after this; keys already started are retried until `giveUpAt`. */
  stopAt: () => number
  giveUpAt: number
  /** Per attempt; a hang past this is recorded as status 0 with error 'hang'. */
  attemptTimeoutMs: number
  /** The merchant key the payments are sent with (one merchant: its Idempotency-Keys span the instances). */
  auth: { authorization: string }
}

/**
 * Keyed load: each client sends POST /api/payments with a fresh Idempotency-Key and retries
 * the same key and body (503, 409, 429, network errors), alternating instances, until it gets
 * a final answer. Amounts from 2000 to 2999.99 are declined by the simulated gateway.
 */
export async function keyedLoad (options: LoadOptions): Promise<KeyHistory[]> {
  const histories: KeyHistory[] = []
  let n = 0
  const client = async (c: number): Promise<void> => {
    while (Date.now() < options.stopAt()) {
      const amount = (n++ % 7 === 3) ? 2500 : 10 + (n % 50)
      const history: KeyHistory = { key: randomUUID(), amount, attempts: [] }
      histories.push(history)
      let attempt = c
      while (history.final === undefined && Date.now() < options.giveUpAt) {
        const bases = options.bases()
        const instance = attempt++ % bases.length
        const started = Date.now()
        const record: Attempt = { instance, status: 0, ms: 0, at: started }
        try {
          const res = await fetch(`${bases[instance]}/api/payments`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': history.key, ...options.auth },
            body: JSON.stringify({ amount, currency: 'EUR' }),
            signal: AbortSignal.timeout(options.attemptTimeoutMs)
          })
          const body = await res.json() as { id?: string, status?: string, paymentId?: string }
          record.status = res.status
          const retryAfter = res.headers.get('retry-after')
          if (retryAfter !== null) record.retryAfter = retryAfter
          const paymentId = body.id ?? body.paymentId
          if (paymentId !== undefined) record.paymentId = paymentId
          if (res.status === 201 || res.status === 402) {
            history.final = { status: res.status, paymentId: record.paymentId as string, paymentStatus: res.status === 201 ? 'succeeded' : 'declined', at: Date.now() }
          }
        } catch (err) {
          record.error = (err as Error).name === 'TimeoutError' ? 'hang' : (err as Error).message
        }
        record.ms = Date.now() - started
        history.attempts.push(record)
        if (history.final === undefined) await sleep(record.status === 0 ? 100 : 200)
      }
    }
  }
  await Promise.all(Array.from({ length: options.clients }, async (_, c) => { await client(c) }))
  return histories
}

export interface Verdict {
  keys: number
  acknowledged: number
  statuses: Record<string, number>
  maxAttemptMs: number
  /** Milliseconds from `faultEnd` until every key had its final answer. */
  settledAfterMs: number
  /** The longest run of 409 answers one key got in a row (from the first one's start to the last one's answer). */
  longest409RunMs: number
  /** 409 answers to a retry sent after the Retry-After of the key's 503 before it had passed (plus a second of grace). */
  conflictsAfterRetryAfter: number
}

/** The 409 runs and Retry-After breaches in the keys' histories (connection errors from a dead instance are skipped). */
export function conflictsOf (histories: KeyHistory[]): { longest409RunMs: number, conflictsAfterRetryAfter: number } {
  let longest409RunMs = 0
  let conflictsAfterRetryAfter = 0
  for (const h of histories) {
    let runStart: number | undefined
    let last503: Attempt | undefined
    for (const a of h.attempts) {
      if (a.status === 0) continue
      if (a.status !== 409) {
        runStart = undefined
        last503 = a.status === 503 ? a : undefined
        continue
      }
      runStart ??= a.at
      longest409RunMs = Math.max(longest409RunMs, a.at + a.ms - runStart)
      if (last503 !== undefined && a.at > last503.at + last503.ms + (Number(last503.retryAfter ?? 0) + 1) * 1000) conflictsAfterRetryAfter++
    }
  }
  return { longest409RunMs, conflictsAfterRetryAfter }
}

/** Log lines of an instance since index `from`, by message, for the lines at warn level or above. */
export function loudLines (logs: LogLine[], from: number): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const line of logs.slice(from)) {
    if ((line.level ?? 0) < 40) continue
    const msg = String(line.msg)
    counts[msg] = (counts[msg] ?? 0) + 1
  }
  return counts
}

/**
 * The invariants after a fault: no 500 and no hang; every key got its final answer; every
 * acknowledged payment is stored with the acknowledged status; each key saw one payment id;
 * the gateway ledger holds at most one charge per payment and none for an unknown payment.
 */
export async function verify (t: Test, histories: KeyHistory[], read: {
  payment: (id: string) => Promise<{ status: string } | undefined>
  ledgerKeys: () => Promise<string[]>
  paymentIds: () => Promise<string[]>
}, faultEnd: number, requestTimeoutMs: number): Promise<Verdict> {
  const attempts = histories.flatMap((h) => h.attempts)
  const statuses: Record<string, number> = {}
  for (const a of attempts) {
    const label = a.status === 0 ? `network:${a.error ?? '?'}` : String(a.status)
    statuses[label] = (statuses[label] ?? 0) + 1
  }
  t.notOk(attempts.some((a) => a.status === 500), `no 500 (answers: ${JSON.stringify(statuses)})`)
  t.notOk(attempts.some((a) => a.error === 'hang'), 'no request hung')
  const maxAttemptMs = Math.max(0, ...attempts.map((a) => a.ms))
  t.ok(maxAttemptMs < requestTimeoutMs, `every answer within REQUEST_TIMEOUT_MS (slowest ${maxAttemptMs} ms)`)
  t.notOk(attempts.some((a) => a.status === 503 && a.retryAfter === undefined), 'every 503 carries Retry-After')

  const unfinished = histories.filter((h) => h.final === undefined)
  t.equal(unfinished.length, 0, `every key got its final answer (${histories.length} keys)`, { unfinished: unfinished.slice(0, 3) })

  let mismatched = 0
  let twoIds = 0
  for (const h of histories) {
    const ids = new Set(h.attempts.map((a) => a.paymentId).filter((id) => id !== undefined))
    if (ids.size > 1) twoIds++
    if (h.final === undefined) continue
    const stored = await read.payment(h.final.paymentId)
    if (stored?.status !== h.final.paymentStatus) mismatched++
  }
  t.equal(mismatched, 0, 'every acknowledged payment is stored with its acknowledged status')
  t.equal(twoIds, 0, 'no key ever named two payments')

  const paymentIds = new Set(await read.paymentIds())
  const ledger = await read.ledgerKeys()
  t.equal(new Set(ledger).size, ledger.length, 'one ledger entry per downstream key')
  t.ok(ledger.every((key) => paymentIds.has(key.replace(/^payment-/, ''))), 'every charge belongs to a stored payment')
  const acknowledged = histories.filter((h) => h.final !== undefined)
  t.equal(new Set(acknowledged.map((h) => h.final?.paymentId)).size, acknowledged.length, 'no two keys share a payment')

  const lastFinal = Math.max(faultEnd, ...acknowledged.map((h) => h.final?.at ?? 0))
  const conflicts = conflictsOf(histories)
  t.equal(conflicts.conflictsAfterRetryAfter, 0, 'a client that waited for the Retry-After of a 503 got a real answer, not 409 in use')
  return { keys: histories.length, acknowledged: acknowledged.length, statuses, maxAttemptMs, settledAfterMs: lastFinal - faultEnd, ...conflicts }
}

/** Polls `probe` until it is true; resolves with the milliseconds it took. */
export async function until (probe: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<number> {
  const started = Date.now()
  while (Date.now() - started < timeoutMs) {
    try {
      if (await probe()) return Date.now() - started
    } catch {}
    await sleep(everyMs)
  }
  throw new Error(`not within ${timeoutMs} ms`)
}

export async function statusOf (url: string, timeoutMs = 3000): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })
    await res.arrayBuffer()
    return res.status
  } catch {
    return 0
  }
}
