/**
 * Faults on the scale-out path, with real processes: two instances of the built service on a
 * throwaway PostgreSQL cluster and a throwaway Redis, under keyed load from retrying clients.
 * PostgreSQL restarted (fast, immediate), stopped for 8 s, paused for 10 s; Redis killed; one
 * instance SIGKILLed. After each: both instances alive (unless killed on purpose), no 500, no
 * hang, every acknowledged payment stored with its status, no key charged twice, and service
 * again within a few seconds of the fault's end. Runs in CI step 6 (FAULT_TESTS=1).
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  faultTestsUnavailable, keyedLoad, loudLines, PostgresCluster, RedisServer, ServiceInstance, statusOf, until, verify, type KeyHistory
} from './faults-fixtures'
import { provisionMerchant } from '../helpers/server-process'
import { TEST_ADMIN_KEY } from '../helpers/app'

const REQUEST_TIMEOUT_MS = 15_000
/** Clients of the keyed load: each has one request in flight at a time. */
const CLIENTS = 6
/** What a payment caught in its gateway call by a database outage logs, once each: what it could not record. */
const CAUGHT_PAYMENT = /could not be recorded|could not free an idempotency key/
const LOCK_SECONDS = 15
const HEARTBEAT_MS = 500
/** A killed instance's keys are taken over after this, not after LOCK_SECONDS. */
const DEAD_AFTER_MS = 3000

async function main (): Promise<void> {
  const why = faultTestsUnavailable({ postgres: true, redis: true })
  if (why !== undefined) {
    t.plan(0, why)
    return
  }
  const cluster = await PostgresCluster.start(t)
  const redis = await RedisServer.start(t)
  const env = {
    DATABASE_URL: cluster.url,
    DATABASE_POOL_SIZE: '5',
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: 'faults:',
    RATE_LIMIT_MAX: '100000',
    IDEMPOTENCY_LOCK_SECONDS: String(LOCK_SECONDS),
    INSTANCE_HEARTBEAT_MS: String(HEARTBEAT_MS),
    INSTANCE_DEAD_AFTER_MS: String(DEAD_AFTER_MS),
    GATEWAY_TIMEOUT_MS: '3000',
    GATEWAY_SIM_LATENCY_MS: '20',
    RECOVERY_AGE_SECONDS: '2',
    RECOVERY_INTERVAL_MS: '1000',
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS)
  }
  const [first, second] = [new ServiceInstance(t, env), new ServiceInstance(t, env)]
  const instances = [first, second]
  await first.listening()
  await second.listening()
  const bases = (): string[] => instances.map((instance) => instance.base)
  const { auth } = await provisionMerchant(first.base, TEST_ADMIN_KEY)
  const measurements: Record<string, unknown> = {}

  const read = {
    payment: async (id: string) => (await cluster.query<{ status: string }>('SELECT status FROM payments WHERE id = $1', [id]))[0],
    ledgerKeys: async () => (await cluster.query<{ k: string }>('SELECT idempotency_key AS k FROM gateway_ledger')).map((row) => row.k),
    paymentIds: async () => (await cluster.query<{ id: string }>('SELECT id FROM payments')).map((row) => row.id)
  }

  /** Milliseconds until every live instance answers a new keyed payment with 201. */
  const serving = async (): Promise<number> => await until(async () => {
    for (const instance of instances.filter((i) => i.alive)) {
      const res = await fetch(`${instance.base}/api/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID(), ...auth },
        body: JSON.stringify({ amount: 1, currency: 'EUR' }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
      })
      await res.arrayBuffer()
      if (res.status !== 201) return false
    }
    return true
  }, 20_000)

  /**
   * Runs keyed load, applies `fault` 1.5 s in (it resolves when the fault is over), measures
   * how long until both instances serve again, lets the load run 1.5 s more, then checks.
   */
  async function underLoad (t: Test, name: string, fault: () => Promise<void>, expect: { alive: boolean[], settleWithinMs: number, longest409RunMs?: number }): Promise<KeyHistory[]> {
    const logsFrom = instances.map((instance) => ({ instance, from: instance.logs.length }))
    let stopAt = Number.POSITIVE_INFINITY
    const load = keyedLoad({ bases, auth, clients: CLIENTS, stopAt: () => stopAt, giveUpAt: Date.now() + 90_000, attemptTimeoutMs: REQUEST_TIMEOUT_MS + 5000 })
    await sleep(1500)
    const faultStarted = Date.now()
    await fault()
    const faultEnd = Date.now()
    const servingAfterMs = await serving()
    stopAt = Date.now() + 1500
    const histories = await load
    t.same(instances.map((i) => i.alive), expect.alive, 'the instances survived the fault', {
      died: instances.filter((i) => !i.alive).map((i) => ({ stderr: i.stderr.slice(-3000), lastLogs: i.logs.slice(-5) }))
    })
    const verdict = await verify(t, histories, read, faultEnd, REQUEST_TIMEOUT_MS)
    t.ok(servingAfterMs < 5000, `both instances serve again ${servingAfterMs} ms after the fault ended`)
    t.ok(verdict.settledAfterMs < expect.settleWithinMs, `every key settled ${verdict.settledAfterMs} ms after the fault ended (IDEMPOTENCY_LOCK_SECONDS ${LOCK_SECONDS})`)
    const longest409 = expect.longest409RunMs ?? 3000
    t.ok(verdict.longest409RunMs < longest409, `no key answered 409 in use for ${longest409} ms in a row (longest ${verdict.longest409RunMs} ms; IDEMPOTENCY_LOCK_SECONDS ${LOCK_SECONDS})`)
    // Quiet faults: the outage is logged when it starts and ends, not once per 503 answer or per job and poll.
    const loud = logsFrom.map(({ instance, from }) => loudLines(instance.logs, from))
    const answered503 = verdict.statuses['503'] ?? 0
    for (const [i, lines] of loud.entries()) {
      const total = Object.values(lines).reduce((sum, n) => sum + n, 0)
      t.equal(lines['background job failed'] ?? 0, 0, `instance ${i}: no "background job failed" errors for an outage`, { lines })
      t.ok((lines['database unavailable: answering 503 with Retry-After until it is back'] ?? 0) <= 2, `instance ${i}: the outage logged once (twice for two restarts)`, { lines })
      t.ok((lines['background job paused: the database is unavailable; it retries every interval'] ?? 0) <= 10, `instance ${i}: each job says once per outage that it paused`, { lines })
      // A payment caught inside its gateway call when the database went away says once what it could not record (its
      // call log, attempt, event, key): at most one such payment per client at once (twice for two restarts), however
      // fast this machine is.
      const perPayment = Object.entries(lines).filter(([message]) => CAUGHT_PAYMENT.test(message))
      t.ok(perPayment.every(([, n]) => n <= 2 * CLIENTS), `instance ${i}: each payment caught by the fault logged once (${CLIENTS} clients)`, { lines })
      const rest = total - perPayment.reduce((sum, [, n]) => sum + n, 0)
      t.ok(rest <= 15, `instance ${i}: ${rest} other lines at warn or above while clients saw ${answered503} 503 answers`, { lines })
    }
    measurements[name] = { faultMs: faultEnd - faultStarted, servingAfterMs, ...verdict, loudLines: loud.map((lines) => Object.values(lines).reduce((sum, n) => sum + n, 0)) }
    t.comment(`${name}: ${JSON.stringify(measurements[name])}`)
    return histories
  }

  const blip = { alive: [true, true], settleWithinMs: 10_000 }

  t.test('PostgreSQL restarted (fast shutdown) under load', async (t) => {
    await underLoad(t, 'restart-fast', async () => { await cluster.restart('fast') }, blip)
  })

  t.test('PostgreSQL restarted (immediate shutdown: a crash) under load, twice in a row', async (t) => {
    await underLoad(t, 'restart-immediate', async () => {
      await cluster.restart('immediate')
      await sleep(500)
      await cluster.restart('immediate')
    }, blip)
  })

  t.test('PostgreSQL stopped for 8 s under load: 503 with Retry-After meanwhile, readiness 503, then back', async (t) => {
    let readyWhileDown: number[] = []
    await underLoad(t, 'stopped-8s', async () => {
      await cluster.stop()
      await sleep(3000)
      readyWhileDown = await Promise.all(bases().map(async (base) => await statusOf(`${base}/health/ready`)))
      await sleep(5000)
      await cluster.start()
    }, blip)
    t.same(readyWhileDown, [503, 503], 'readiness said 503 while the database was down')
  })

  t.test('PostgreSQL paused for 10 s (SIGSTOP): requests and probes answer in bounded time, and 503 at once once the pause is known', async (t) => {
    let probe: { status: number, ms: number } | undefined
    let pausedAt = 0
    let resumedAt = 0
    const histories = await underLoad(t, 'paused-10s', async () => {
      pausedAt = Date.now()
      cluster.signalAll('SIGSTOP')
      try {
        await sleep(4000)
        const started = Date.now()
        const status = await statusOf(`${bases()[0]}/health/ready`, 5000)
        probe = { status, ms: Date.now() - started }
        await sleep(Math.max(0, 10_000 - 4000 - probe.ms))
      } finally {
        cluster.signalAll('SIGCONT')
        resumedAt = Date.now()
      }
    }, blip)
    // The heartbeat (500 ms, on its own connection with a 2 s read time-out) finds the pause within about 2.5 s;
    // from then on requests are answered 503 at once instead of each waiting for its own connection time-out.
    const knownPaused = histories.flatMap((h) => h.attempts).filter((a) => a.at >= pausedAt + 4000 && a.at + a.ms < resumedAt)
    const slowest = Math.max(0, ...knownPaused.map((a) => a.ms))
    t.ok(knownPaused.length >= 6, `${knownPaused.length} requests sent 4 s into the pause and answered before it ended`)
    t.ok(knownPaused.every((a) => a.status === 503), 'all 503')
    t.ok(slowest < 1000, `each answered within a second once the pause was known (slowest ${slowest} ms; the connection time-out is 5 s)`)
    measurements['paused-10s-known-slowest-ms'] = slowest
    t.equal(probe?.status, 503, 'readiness is 503 while the database does not answer')
    t.ok((probe?.ms ?? Infinity) < 3000, `the readiness probe answered in ${probe?.ms} ms`)
  })

  t.test('Redis killed: rate limiting fails open (no 5xx), readiness stays 200, then reconnects', async (t) => {
    let redisCheck: Array<string | undefined> = []
    let readyStatuses: number[] = []
    const histories = await underLoad(t, 'redis-killed', async () => {
      await redis.kill()
      await sleep(3000)
      readyStatuses = await Promise.all(bases().map(async (base) => await statusOf(`${base}/health/ready`)))
      await redis.launch()
    }, { alive: [true, true], settleWithinMs: 5000 })
    t.same(readyStatuses, [200, 200], 'Redis away does not take the instances out of rotation')
    t.notOk(histories.some((h) => h.attempts.some((a) => a.status >= 500)), 'no 5xx at all while Redis was away')
    const reconnectMs = await until(async () => {
      const checks = await Promise.all(bases().map(async (base) => ((await (await fetch(`${base}/health/ready`)).json()) as { checks: Record<string, string> }).checks.redis))
      redisCheck = checks
      return checks.every((state) => state === 'ok')
    }, 15_000)
    t.same(redisCheck, ['ok', 'ok'], `both instances use Redis again ${reconnectMs} ms after it came back`)
    measurements['redis-reconnect-ms'] = reconnectMs
  })

  t.test('one of two instances SIGKILLed under load: retries on the other replay, resume or take the key over within seconds, no second charge', async (t) => {
    await underLoad(t, 'instance-sigkilled', async () => {
      first.child.kill('SIGKILL')
      await first.exited
    }, { alive: [false, true], settleWithinMs: DEAD_AFTER_MS + 4000, longest409RunMs: DEAD_AFTER_MS + 3000 })
  })

  t.teardown(() => { process.stdout.write(`# fault measurements: ${JSON.stringify(measurements)}\n`) })
}

main().catch((err: unknown) => { t.fail(String(err)) })
