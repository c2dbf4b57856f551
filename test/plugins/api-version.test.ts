import t from 'tap'
import { buildTestApp, merchantWithKey, ADMIN_AUTH } from '../helpers/app'
import { API_VERSIONS, LATEST_API_VERSION } from '../../src/domain/api-versions'

const OLD = '2026-11-01'
const NEW = '2026-11-25'

t.test('every response says its version: the header, else the merchant\'s pinned version, else the current one', async (t) => {
  const app = await buildTestApp(t)
  const pinned = await merchantWithKey(app, { apiVersion: OLD })
  const current = await merchantWithKey(app)

  const anonymous = await app.inject({ method: 'GET', url: '/health' })
  t.equal(anonymous.headers['api-version'], LATEST_API_VERSION, 'no merchant, no header: the current version')
  const admin = await app.inject({ method: 'GET', url: '/merchants', headers: ADMIN_AUTH })
  t.equal(admin.headers['api-version'], NEW)

  const own = await app.inject({ method: 'GET', url: `/merchants/${pinned.merchantId}`, headers: pinned.auth })
  t.equal(own.statusCode, 200)
  t.equal(own.headers['api-version'], OLD, 'a merchant\'s requests are answered in its pinned version')
  t.equal(own.json().apiVersion, OLD)
  t.equal((await app.inject({ method: 'GET', url: '/api/payments', headers: current.auth })).headers['api-version'], NEW)

  const overridden = await app.inject({ method: 'GET', url: '/api/payments', headers: { ...pinned.auth, 'api-version': NEW } })
  t.equal(overridden.statusCode, 200)
  t.equal(overridden.headers['api-version'], NEW, 'the header overrides the pinned version')
  t.notOk(overridden.headers.deprecation, 'no Deprecation without a configured sunset')
})

t.test('an unknown version is a 400 listing the supported ones, in each area\'s error shape, before authentication', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const problem = await app.inject({ method: 'GET', url: '/api/payments', headers: { ...merchant.auth, 'api-version': '2025-01-01' } })
  t.equal(problem.statusCode, 400)
  t.match(problem.headers['content-type'], /^application\/problem\+json/)
  const message = problem.json().errors['Api-Version'][0] as string
  for (const version of API_VERSIONS) t.match(message, version, `lists ${version}`)
  t.match(message, /'2025-01-01' is not a supported API version/)
  t.equal(problem.headers['api-version'], LATEST_API_VERSION)

  const unauthenticated = await app.inject({ method: 'GET', url: '/api/payments', headers: { 'api-version': 'latest' } })
  t.equal(unauthenticated.statusCode, 400, 'checked before the key')

  const envelope = await app.inject({ method: 'GET', url: '/products/1', headers: { 'api-version': 'v2' } })
  t.equal(envelope.statusCode, 400)
  t.match(envelope.json(), { code: 'VALIDATION', error: /not a supported API version; supported versions: 2026-11-01, 2026-11-25/ })
})

t.test('PATCH apiVersion upgrades the merchant; its next request (same key, cached lookup) is answered in the new version', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app, { apiVersion: OLD })
  const before = await app.inject({ method: 'GET', url: '/api/payments', headers: merchant.auth })
  t.equal(before.headers['api-version'], OLD)
  const upgraded = await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}`, headers: merchant.auth, payload: { apiVersion: NEW } })
  t.equal(upgraded.statusCode, 200)
  t.equal(upgraded.json().apiVersion, NEW)
  const after = await app.inject({ method: 'GET', url: '/api/payments', headers: merchant.auth })
  t.equal(after.headers['api-version'], NEW, 'the cached principal was forgotten')

  const unknown = await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}`, headers: merchant.auth, payload: { apiVersion: '2099-01-01' } })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().errors.apiVersion[0], /supported versions: 2026-11-01, 2026-11-25/)
})

t.test('new merchants are pinned to the current version unless they ask for a supported one', async (t) => {
  const app = await buildTestApp(t)
  const plain = await app.inject({ method: 'POST', url: '/merchants', headers: ADMIN_AUTH, payload: { name: 'A', email: `a-${Date.now()}@example.com` } })
  t.equal(plain.statusCode, 201)
  t.equal(plain.json().apiVersion, LATEST_API_VERSION)
  const older = await app.inject({ method: 'POST', url: '/merchants', headers: ADMIN_AUTH, payload: { name: 'B', email: `b-${Date.now()}@example.com`, apiVersion: OLD } })
  t.equal(older.json().apiVersion, OLD)
  const unknown = await app.inject({ method: 'POST', url: '/merchants', headers: ADMIN_AUTH, payload: { name: 'C', email: `c-${Date.now()}@example.com`, apiVersion: 'x' } })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().errors.apiVersion[0], /'x' is not a supported API version/)
})

t.test('a version being retired (API_VERSION_SUNSETS) is answered with Deprecation (RFC 9745) and Sunset (RFC 8594)', async (t) => {
  const app = await buildTestApp(t, { API_VERSION_SUNSETS: `${OLD}=2027-05-25` })
  const merchant = await merchantWithKey(app, { apiVersion: OLD })
  const retiring = await app.inject({ method: 'GET', url: '/api/payments', headers: merchant.auth })
  t.equal(retiring.headers['api-version'], OLD)
  t.equal(retiring.headers.deprecation, `@${Date.parse(`${NEW}T00:00:00Z`) / 1000}`, 'deprecated since the next version was released')
  t.equal(retiring.headers.sunset, 'Tue, 25 May 2027 00:00:00 GMT')
  const upgraded = await app.inject({ method: 'GET', url: '/api/payments', headers: { ...merchant.auth, 'api-version': NEW } })
  t.notOk(upgraded.headers.deprecation)
  t.notOk(upgraded.headers.sunset)
})

t.test('Api-Version is not part of the Idempotency-Key fingerprint: a replay in another version replays the stored bytes, labelled with the version they were rendered in', async (t) => {
  const app = await buildTestApp(t, { API_VERSION_SUNSETS: `${OLD}=2027-11-25` })
  const merchant = await merchantWithKey(app)
  const post = (version?: string) => app.inject({
    method: 'POST',
    url: '/api/payments',
    headers: { ...merchant.auth, 'idempotency-key': 'versioned', ...(version !== undefined ? { 'api-version': version } : {}) },
    payload: { amount: 10.1, currency: 'USD' }
  })
  const first = await post(OLD)
  t.equal(first.statusCode, 201)
  t.equal(first.headers['api-version'], OLD)
  t.ok(first.headers.deprecation, 'answered in a version being retired')
  for (const version of [NEW, undefined]) {
    const replay = await post(version)
    t.equal(replay.statusCode, 201, `replayed under ${String(version)}, not 409`)
    t.equal(replay.headers['idempotent-replayed'], 'true')
    t.equal(replay.body, first.body, 'the stored bytes')
    t.equal(replay.headers['api-version'], OLD, 'the version the stored bytes were rendered in, not the one asked for')
    t.equal(replay.headers.deprecation, first.headers.deprecation, 'its retirement headers too')
  }
  const fresh = await app.inject({ method: 'POST', url: '/api/payments', headers: { ...merchant.auth, 'idempotency-key': 'other', 'api-version': NEW }, payload: { amount: 10.1, currency: 'USD' } })
  t.equal(fresh.headers['api-version'], NEW)
  t.notOk(fresh.headers.deprecation)
})
