/**
 * Redis-backed rate limiting: counters shared between instances, failing open
 * (served, logged, reported as degraded) when Redis is away.
 */
import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { buildTestApp } from '../helpers/app'
import { ensureRedis, REDIS_TEST_URL, uniquePrefix } from '../helpers/redis'
import { redisRateLimitStore } from '../../plugins/http/redis-rate-limit-store'
import { REDIS_DEGRADED } from '../../plugins/redis'
import type { App } from '../../app/app'

interface LogLine { level: number, msg: string, [key: string]: unknown }

function capture (): { lines: LogLine[], logger: { level: string, stream: { write: (line: string) => void } } } {
  const lines: LogLine[] = []
  return { lines, logger: { level: 'info', stream: { write: (line) => { lines.push(JSON.parse(line) as LogLine) } } } }
}

const get = (app: App, ip = '127.0.0.1') => app.inject({ method: 'GET', url: '/products/nope', remoteAddress: ip })

t.test('without REDIS_URL there is no client and readiness does not mention Redis', async (t) => {
  const app = await buildTestApp(t)
  t.equal(app.redis, null)
  app.reportRedisFailure(new Error('ignored'))
  t.same((await app.inject({ method: 'GET', url: '/health/ready' })).json(), { status: 'ok', checks: { database: 'ok' } })
})

t.test('Redis unreachable at start-up: the service starts, serves past the limit, warns, and stays ready (degraded)', async (t) => {
  const { lines, logger } = capture()
  const started = Date.now()
  const app = await buildTestApp(t, { REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_MAX: '2' }, { logger })
  t.ok(Date.now() - started < 5000, 'start-up is not held up')
  for (let i = 0; i < 5; i++) t.equal((await get(app)).statusCode, 404, `request ${i + 1} served (fail open)`)
  const warnings = lines.filter((line) => line.level === 40 && /Redis unreachable/.test(line.msg))
  t.ok(warnings.length >= 1, 'a warning is logged')
  t.ok(warnings.length <= 2, 'but not one per request')
  const ready = await app.inject({ method: 'GET', url: '/health/ready' })
  t.equal(ready.statusCode, 200, 'Redis is not critical: the instance stays in rotation')
  t.same(ready.json(), { status: 'ok', checks: { database: 'ok', redis: REDIS_DEGRADED } })
  await app.close()
  let attempts = 0
  app.redis?.on('error', () => { attempts++ })
  app.redis?.on('connecting', () => { attempts++ })
  await new Promise((resolve) => setTimeout(resolve, 700))
  t.equal(attempts, 0, 'the client stops reconnecting when the app closes')
})

t.test('with a real Redis', async (t) => {
  if (!await ensureRedis(t)) return

  async function instance (t: Test, prefix: string, env: Record<string, string> = {}, overrides = {}): Promise<App> {
    // Anonymous requests: the limit keys on the address (authenticated ones key on the credential).
    return await buildTestApp(t, { REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_MAX: '3', ...env }, overrides, { credentials: 'none' })
  }

  t.test('two instances share one limit per client', async (t) => {
    const prefix = uniquePrefix(t)
    const a = await instance(t, prefix)
    const b = await instance(t, prefix)
    t.equal((await get(a)).statusCode, 404)
    t.equal((await get(b)).statusCode, 404)
    const third = await get(a)
    t.equal(third.statusCode, 404)
    t.equal(third.headers['x-ratelimit-remaining'], '0', 'the count is shared')
    const fourth = await get(b)
    t.equal(fourth.statusCode, 429, 'the 4th request, to the other instance, is limited')
    t.ok(Number(fourth.headers['retry-after']) >= 1)
    t.equal((await get(a, '10.0.0.9')).statusCode, 404, 'other clients have their own count')
    const keys = await a.redis?.keys(`${prefix}*`)
    t.same(keys?.sort(), [`${prefix}rate-limit:ip:10.0.0.9`, `${prefix}rate-limit:ip:127.0.0.1`], 'keys live under REDIS_KEY_PREFIX')
    t.same((await a.inject({ method: 'GET', url: '/health/ready' })).json(), { status: 'ok', checks: { database: 'ok', redis: 'ok' } })
  })

  t.test('different prefixes do not share counters', async (t) => {
    const a = await instance(t, uniquePrefix(t), { RATE_LIMIT_MAX: '1' })
    const b = await instance(t, uniquePrefix(t), { RATE_LIMIT_MAX: '1' })
    t.equal((await get(a)).statusCode, 404)
    t.equal((await get(b)).statusCode, 404)
    t.equal((await get(a)).statusCode, 429)
  })

  t.test('losing Redis mid-run: requests are served, a warning is logged, readiness says degraded; close still works', async (t) => {
    const { lines, logger } = capture()
    const app = await instance(t, uniquePrefix(t), { RATE_LIMIT_MAX: '1' }, { logger })
    t.equal((await get(app)).statusCode, 404)
    t.equal((await get(app)).statusCode, 429)
    app.redis?.disconnect()
    t.equal((await get(app)).statusCode, 404, 'served while Redis is away')
    t.ok(lines.some((line) => line.level === 40 && /Redis unreachable/.test(line.msg)), 'warned')
    const ready = await app.inject({ method: 'GET', url: '/health/ready' })
    t.equal(ready.statusCode, 200)
    t.equal(ready.json().checks.redis, REDIS_DEGRADED)
  })

  t.test('a failing PING while connected is degraded too', async (t) => {
    const app = await instance(t, uniquePrefix(t))
    const redis = app.redis as Redis
    const ping = redis.ping.bind(redis)
    redis.ping = (async () => { throw new Error('Command timed out') }) as unknown as typeof redis.ping
    t.teardown(() => { redis.ping = ping })
    t.equal((await app.inject({ method: 'GET', url: '/health/ready' })).json().checks.redis, REDIS_DEGRADED)
  })

  t.test('reconnecting is logged', async (t) => {
    const { lines, logger } = capture()
    const app = await instance(t, uniquePrefix(t), {}, { logger })
    const redis = app.redis as Redis
    redis.emit('error', new Error('connection reset'))
    redis.emit('ready')
    t.ok(lines.some((line) => line.level === 30 && /Redis reachable again/.test(line.msg)))
  })

  t.test('invalidation channels: every instance hears an announcement; after a reconnect each channel hears it may have missed some', async (t) => {
    const prefix = uniquePrefix(t)
    const a = await instance(t, prefix)
    const b = await instance(t, prefix)
    const heard: string[] = []
    const missed = { a: 0, b: 0 }
    const announce = await a.invalidationChannel('test-invalidations', { onMessage: (message) => { heard.push(`a:${message}`) }, onMissed: () => { missed.a++ } })
    await b.invalidationChannel('test-invalidations', { onMessage: (message) => { heard.push(`b:${message}`) }, onMissed: () => { missed.b++ } })
    const until = async (done: () => boolean) => {
      const started = Date.now()
      while (!done() && Date.now() - started < 3000) await new Promise((resolve) => setTimeout(resolve, 10))
    }
    await announce('one')
    await until(() => heard.length === 2)
    t.same(heard.sort(), ['a:one', 'b:one'], 'both instances heard it, the announcing one too')

    // Cut B's subscriber connection (one per instance, named after the prefix: both instances share it here, so both are cut).
    const admin = new Redis(REDIS_TEST_URL)
    t.teardown(() => { admin.disconnect() })
    const clients = String(await admin.client('LIST')).split('\n').filter((line) => line.includes(`name=${prefix}invalidations `))
    t.equal(clients.length, 2, 'one subscriber connection per instance')
    for (const line of clients) await admin.client('KILL', 'ID', /id=(\d+)/.exec(line)?.[1] ?? '')
    await until(() => missed.a > 0 && missed.b > 0)
    t.ok(missed.a > 0 && missed.b > 0, 'each channel was told it may have missed announcements')
    heard.length = 0
    // Announced until both hear it: each instance joins again on its own reconnect.
    await until(() => {
      announce('two').catch(() => {})
      return heard.includes('a:two') && heard.includes('b:two')
    })
    t.ok(heard.includes('a:two') && heard.includes('b:two'), 'and both joined the channel again')
  })

  t.test('the store: route children get their own keys; continueExceeding extends the window', async (t) => {
    const prefix = uniquePrefix(t)
    const redis = new Redis(REDIS_TEST_URL)
    t.teardown(() => { redis.disconnect() })
    const errors: Error[] = []
    const Store = redisRateLimitStore(redis, prefix, (err) => { errors.push(err) })
    redisRateLimitStore(redis, prefix, () => {}) // defining the script twice is harmless
    const store = new Store({})
    const child = store.child({ routeInfo: { method: 'GET', url: '/x' }, continueExceeding: true } as never)
    const incr = async (s: typeof store, key: string, window: number, max: number) => await new Promise<{ current: number, ttl: number }>((resolve, reject) => {
      (s.incr as (key: string, cb: (err: Error | null, result?: { current: number, ttl: number }) => void, timeWindow: number, max: number) => void)(
        key, (err, result) => { if (err !== null) reject(err); else resolve(result as { current: number, ttl: number }) }, window, max)
    })
    t.match(await incr(store, 'ip', 10_000, 1), { current: 1, ttl: 10_000 })
    const second = await incr(store, 'ip', 10_000, 1)
    t.equal(second.current, 2)
    t.ok(second.ttl <= 10_000 && second.ttl > 0)
    t.match(await incr(child, 'ip', 5000, 1), { current: 1 }, 'a route child counts separately')
    await incr(child, 'ip', 5000, 1)
    t.match(await incr(child, 'ip', 60_000, 1), { current: 3, ttl: 60_000 }, 'over the limit the window restarts')
    t.same((await redis.keys(`${prefix}*`)).sort(), [`${prefix}GET/x-ip`, `${prefix}ip`])
    const defaults = new Store({})
    t.match(await incr(defaults, 'defaults', undefined as unknown as number, undefined as unknown as number), { current: 1 }, 'defaults without window arguments')
    redis.disconnect()
    await t.rejects(incr(store, 'ip', 10_000, 1))
    t.equal(errors.length, 1, 'failures reach onError')
  })
})
