/**
 * Scale-out, proven with real processes: two service instances on one PostgreSQL
 * schema and one Redis, as behind a load balancer. One Idempotency-Key split across
 * both gives one payment and one charge; the rate limit is one limit for both; a key
 * revoked through one instance is refused by the other within a second (its cached
 * lookup is cleared through Redis, long before AUTH_CACHE_TTL_MS, set to a minute here).
 * Skipped with a message when PostgreSQL or Redis is unreachable; failed instead
 * with REQUIRE_POSTGRES=1 / REQUIRE_REDIS=1 (CI).
 */
import t from 'tap'
import { provisionMerchant, ServerProcess } from '../helpers/server-process'
import { TEST_ADMIN_KEY, TEST_ENCRYPTION_KEYS } from '../helpers/app'
import { describeUrl, freshSchema, POSTGRES_TEST_URL, postgresUnreachable } from '../helpers/postgres'
import { REDIS_TEST_URL, redisUnreachable, uniquePrefix } from '../helpers/redis'
import { postgresMigrations } from '../../src/store/postgres/migrations'
import { itemAt } from '../helpers/items'

const RATE_LIMIT = 120

interface Answer { instance: number, status: number, replayed: string | null, body: { id?: string, type?: string } }

async function servicesAvailable (): Promise<boolean> {
  const missing: Array<{ message: string, required: boolean }> = []
  const pgWhy = await postgresUnreachable()
  if (pgWhy !== undefined) {
    missing.push({ message: `PostgreSQL tests skipped: cannot connect to ${describeUrl(POSTGRES_TEST_URL)} (${pgWhy})`, required: process.env.REQUIRE_POSTGRES === '1' })
  }
  const redisWhy = await redisUnreachable()
  if (redisWhy !== undefined) {
    missing.push({ message: `Redis tests skipped: cannot connect to ${REDIS_TEST_URL} (${redisWhy})`, required: process.env.REQUIRE_REDIS === '1' })
  }
  if (missing.length === 0) return true
  const required = missing.filter((m) => m.required)
  if (required.length > 0) {
    for (const m of required) t.fail(m.message.replace(' tests skipped: ', ' is required (REQUIRE_*=1) but unreachable: '))
  } else {
    const message = missing.map((m) => m.message).join('; ')
    process.stderr.write(`${message}\n`)
    t.plan(0, message)
  }
  return false
}

async function main (): Promise<void> {
  if (!await servicesAvailable()) return

  t.test('two instances on PostgreSQL + Redis: one key, one payment; one shared rate limit; revocation', async (t) => {
    const schema = await freshSchema(t)
    const env = {
      PORT: '0',
      LOG_LEVEL: 'info',
      DATABASE_URL: schema.url,
      ADMIN_API_KEY: TEST_ADMIN_KEY,
      ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
      DATABASE_POOL_SIZE: '5',
      REDIS_URL: REDIS_TEST_URL,
      REDIS_KEY_PREFIX: uniquePrefix(t),
      // Per credential: one merchant key sends the 102 payment requests below.
      RATE_LIMIT_MAX: String(RATE_LIMIT),
      // The load balancer in front (here: the test) says who the client is.
      TRUST_PROXY: '127.0.0.1',
      GATEWAY_SIM_LATENCY_MS: '200',
      // Far longer than the test: only the announcement through Redis can make B forget a revoked key.
      AUTH_CACHE_TTL_MS: '60000'
    }
    // Both start at once on an empty schema: the advisory lock lets exactly one migrate.
    const instances = [new ServerProcess(t, env), new ServerProcess(t, env)]
    // Generous: each child compiles the TypeScript sources on start, and CI machines may be busy.
    const bases = await Promise.all(instances.map(async (server) => {
      const line = await server.waitForLog((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('Server listening at '), 90_000)
      return (line.msg as string).slice('Server listening at '.length)
    }))
    t.not(bases[0], bases[1], 'two processes on two ports')
    const migrated = await schema.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
    t.same(migrated.map((row) => row.version), postgresMigrations.map((m) => m.version), 'every migration applied once')

    for (const base of bases) {
      const ready = await fetch(`${base}/health/ready`)
      t.equal(ready.status, 200)
      t.same(await ready.json(), { status: 'ok', checks: { database: 'ok', redis: 'ok' } }, `${base} is ready`)
    }

    // Warm both up (pool connections, prepared statements, JIT) so their claims really race.
    await Promise.all(bases.flatMap((base) => Array.from({ length: 10 }, async (_, i) => {
      await (await fetch(`${base}/products/warm-up`, { headers: { 'x-forwarded-for': `10.8.0.${i}` } })).arrayBuffer()
    })))

    const merchant = await provisionMerchant(itemAt(bases, 0), TEST_ADMIN_KEY)

    await t.test('100 concurrent POSTs with one Idempotency-Key across both instances', async (t) => {
      const body = JSON.stringify({ amount: 49.99, currency: 'EUR' })
      const send = async (i: number): Promise<Answer> => {
        const instance = i % 2
        const res = await fetch(`${bases[instance]}/api/payments`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': 'scale-out-key', ...merchant.auth },
          body
        })
        return { instance, status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.json() as Answer['body'] }
      }
      const answers = await Promise.all(Array.from({ length: 100 }, async (_, i) => await send(i)))
      const originals = answers.filter((a) => a.status === 201 && a.replayed !== 'true')
      const replays = answers.filter((a) => a.status === 201 && a.replayed === 'true')
      const conflicts = answers.filter((a) => a.status === 409)
      t.equal(originals.length, 1, 'exactly one request created the payment')
      t.equal(originals.length + replays.length + conflicts.length, 100, 'every other answer is a replay or a 409')
      const id = originals[0]?.body.id
      t.ok(replays.every((a) => a.body.id === id), 'replays name the same payment')
      t.ok(conflicts.every((a) => a.body.type === 'urn:problem-type:idempotency-key-in-use'), '409s are key-in-use')
      t.comment(`original on instance ${originals[0]?.instance}; replays ${replays.length}, 409s ${conflicts.length} ` +
        `(instance 0: ${conflicts.filter((a) => a.instance === 0).length}, instance 1: ${conflicts.filter((a) => a.instance === 1).length})`)

      // Once settled, both instances replay it.
      const after = await Promise.all([1000, 1001].map(send))
      for (const a of after) t.match(a, { status: 201, replayed: 'true', body: { id } }, `instance ${a.instance} replays`)

      const [payments] = await schema.query<{ n: number }>('SELECT count(*)::int AS n FROM payments')
      const [charges] = await schema.query<{ n: number }>('SELECT count(*)::int AS n FROM gateway_ledger')
      t.equal(payments?.n, 1, 'one payment row')
      t.equal(charges?.n, 1, 'one ledger charge')
      const [stored] = await schema.query<{ id: string, status: string, amount_minor: string }>('SELECT id, status, amount_minor FROM payments')
      t.same(stored, { id, status: 'succeeded', amount_minor: '4999' })
    })

    await t.test('a key revoked through instance A is refused by instance B within a second', async (t) => {
      const rotated = await provisionMerchant(itemAt(bases, 0), TEST_ADMIN_KEY)
      const read = async (base: string) => (await fetch(`${base}/merchants/${rotated.merchantId}`, { headers: rotated.auth })).status
      t.equal(await read(itemAt(bases, 1)), 200, 'instance B accepts the key')
      const revoked = await fetch(`${bases[0]}/merchants/${rotated.merchantId}/api-keys/${rotated.keyId}`, { method: 'DELETE', headers: rotated.auth })
      t.equal(revoked.status, 204, 'revoked through instance A (with the key itself)')
      t.equal(await read(itemAt(bases, 0)), 401, 'instance A refuses it at once')
      const started = Date.now()
      let refused = await fetch(`${bases[1]}/merchants/${rotated.merchantId}`, { headers: rotated.auth })
      while (refused.status === 200 && Date.now() - started < 1000) {
        await new Promise((resolve) => setTimeout(resolve, 10))
        refused = await fetch(`${bases[1]}/merchants/${rotated.merchantId}`, { headers: rotated.auth })
      }
      t.equal(refused.status, 401, `instance B refuses it within a second (${Date.now() - started} ms)`)
      t.match(refused.headers.get('www-authenticate'), /error="invalid_token"/)
    })

    await t.test(`RATE_LIMIT_MAX=${RATE_LIMIT} is one limit for both instances`, async (t) => {
      const client = { 'x-forwarded-for': '10.9.9.9' }
      const statuses: number[] = []
      for (let i = 0; i < RATE_LIMIT; i++) statuses.push((await fetch(`${bases[i % 2]}/products/missing`, { headers: client })).status)
      t.same(statuses, Array(RATE_LIMIT).fill(404), `${RATE_LIMIT} anonymous requests, half to each instance, are served`)
      for (const base of bases) {
        const res = await fetch(`${base}/products/missing`, { headers: client })
        t.equal(res.status, 429, `the next request is limited on ${base} too`)
        t.ok(Number(res.headers.get('retry-after')) >= 1)
      }
      t.equal((await fetch(`${bases[1]}/products/missing`, { headers: { 'x-forwarded-for': '10.9.9.10' } })).status, 404, 'another client is not')
    })

    for (const server of instances) server.child.kill('SIGTERM')
    const exits = await Promise.all(instances.map(async (server) => await server.exited))
    t.same(exits.map((e) => e.code), [0, 0], 'both shut down cleanly (pool and Redis client closed)')
  })
}

main().catch((err: unknown) => { t.threw(err as Error) })
