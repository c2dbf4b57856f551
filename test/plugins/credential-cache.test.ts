/**
 * The API key cache across instances: two apps on one database, as behind a load balancer.
 * With Redis, a revocation or suspension through one reaches the other's cache within
 * milliseconds; without it, the TTL bounds how long the other may still accept the key.
 */
import t from 'tap'
import { ADMIN_AUTH, buildTestApp, merchantWithKey } from '../helpers/app'
import { sharedDatabase, twoInstances } from '../helpers/instances'
import { ensureRedis, REDIS_TEST_URL, uniquePrefix } from '../helpers/redis'
import { manualClock, postJson } from '../helpers/payments'
import type { App } from '../../app/app'

// Each request names its own key: the test's default credentials would hide which key a request used.
const NO_DEFAULT_CREDENTIALS = { credentials: 'none' } as const

const readMerchant = async (app: App, merchantId: string, auth: { authorization: string }) =>
  (await app.inject({ method: 'GET', url: `/merchants/${merchantId}`, headers: auth })).statusCode

/** Polls `probe` until it returns `expected`, for at most `ms`; resolves the time it took, or undefined. */
async function within (ms: number, probe: () => Promise<number>, expected: number): Promise<number | undefined> {
  const started = Date.now()
  while (Date.now() - started <= ms) {
    if (await probe() === expected) return Date.now() - started
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return undefined
}

t.test('without Redis: another instance accepts a revoked key only until its cached lookup expires', async (t) => {
  const clock = manualClock()
  const [a, b] = await twoInstances(t, { AUTH_CACHE_TTL_MS: '2000' }, { clock: clock.read }, NO_DEFAULT_CREDENTIALS)
  const key = await merchantWithKey(a)
  t.equal(await readMerchant(b, key.merchantId, key.auth), 200, 'B looks the key up and caches it')
  const revoked = await a.inject({ method: 'DELETE', url: `/merchants/${key.merchantId}/api-keys/${key.keyId}`, headers: ADMIN_AUTH })
  t.equal(revoked.statusCode, 204)
  t.equal(await readMerchant(a, key.merchantId, key.auth), 401, 'the revoking instance refuses it at once')
  t.equal(await readMerchant(b, key.merchantId, key.auth), 200, 'B still answers from its cache within the TTL')
  clock.now += 2000
  t.equal(await readMerchant(b, key.merchantId, key.auth), 401, 'and refuses it once the TTL has passed')
})

t.test('AUTH_CACHE_TTL_MS=0: every request reads the key, so another instance refuses a revoked key at once', async (t) => {
  const [a, b] = await twoInstances(t, { AUTH_CACHE_TTL_MS: '0' }, {}, NO_DEFAULT_CREDENTIALS)
  const key = await merchantWithKey(a)
  t.equal(await readMerchant(b, key.merchantId, key.auth), 200)
  await a.apiKeys.revoke(key.merchantId, key.keyId)
  t.equal(await readMerchant(b, key.merchantId, key.auth), 401)
})

t.test('with Redis', async (t) => {
  if (!await ensureRedis(t)) return
  // A TTL far longer than the test: only the announcement can make B forget.
  const env = () => ({ REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: uniquePrefix(t), AUTH_CACHE_TTL_MS: '60000' })

  t.test('a key revoked through one instance is refused by the other within a second', async (t) => {
    const [a, b] = await twoInstances(t, env(), {}, NO_DEFAULT_CREDENTIALS)
    const key = await merchantWithKey(a)
    t.equal(await readMerchant(b, key.merchantId, key.auth), 200, 'B caches the key')
    const revoked = await a.inject({ method: 'DELETE', url: `/merchants/${key.merchantId}/api-keys/${key.keyId}`, headers: key.auth })
    t.equal(revoked.statusCode, 204, 'revoked through A with the key itself')
    t.equal(await readMerchant(a, key.merchantId, key.auth), 401, 'A refuses it at once')
    const took = await within(1000, async () => await readMerchant(b, key.merchantId, key.auth), 401)
    t.ok(took !== undefined, `B refuses it within a second (took ${String(took)} ms)`)
  })

  t.test('a merchant suspended through one instance cannot create payments through the other', async (t) => {
    const [a, b] = await twoInstances(t, env(), {}, NO_DEFAULT_CREDENTIALS)
    const key = await merchantWithKey(a)
    const pay = async () => (await b.inject({ ...postJson('/api/payments', { amount: 10, currency: 'USD' }), headers: { ...postJson('', {}).headers, ...key.auth } })).statusCode
    t.equal(await pay(), 201, 'B caches the active merchant')
    const suspended = await a.inject({
      method: 'PATCH',
      url: `/merchants/${key.merchantId}`,
      headers: { ...ADMIN_AUTH, 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ status: 'suspended' })
    })
    t.equal(suspended.statusCode, 200)
    const took = await within(1000, pay, 403)
    t.ok(took !== undefined, `B refuses the payment within a second (took ${String(took)} ms)`)
  })

  t.test('an unrelated prefix (another deployment) does not clear this cache', async (t) => {
    const clock = manualClock()
    const shared = { DATABASE_URL: sharedDatabase(t), REDIS_URL: REDIS_TEST_URL, AUTH_CACHE_TTL_MS: '60000' }
    const a = await buildTestApp(t, { ...shared, REDIS_KEY_PREFIX: uniquePrefix(t) }, { clock: clock.read }, { credentials: 'none' })
    const b = await buildTestApp(t, { ...shared, REDIS_KEY_PREFIX: uniquePrefix(t) }, { clock: clock.read }, { credentials: 'none' })
    const key = await merchantWithKey(a)
    t.equal(await readMerchant(b, key.merchantId, key.auth), 200)
    await a.apiKeys.revoke(key.merchantId, key.keyId)
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.equal(await readMerchant(b, key.merchantId, key.auth), 200, 'B did not hear it: it listens on its own channel')
    clock.now += 60_000
    t.equal(await readMerchant(b, key.merchantId, key.auth), 401, 'the TTL still bounds it')
  })
})
