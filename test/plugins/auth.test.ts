/**
 * Authentication and authorization through app.inject: who may do what, in each area's shape.
 * Every request here states its credential (credentials: 'none').
 */
import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import type { LightMyRequestResponse } from 'fastify'
import { ADMIN_AUTH, TEST_ADMIN_KEY, buildTestApp, merchantWithKey, type MerchantCredentials } from '../helpers/app'
import { spyGateway, type SpyGateway } from '../helpers/gateway'
import { ACCESS_LEVELS, MAX_ACTIVE_API_KEYS } from '../../src/domain/api-keys'
import { newPendingPayment } from '../../src/domain/payments'
import type { App } from '../../app/app'

const REALM = 'Bearer realm="product-payment-service"'
const UNKNOWN_KEY = 'sk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
const json = { 'content-type': 'application/json' }

async function setup (t: Test, env: Record<string, string> = {}, clock?: { now: number }, validateResponses = true) {
  const gateway = spyGateway()
  const app = await buildTestApp(t, env, { gateway, ...(clock === undefined ? {} : { clock: () => clock.now }) }, { credentials: 'none', validateResponses })
  const alice = await merchantWithKey(app, { name: 'Alice' })
  const bob = await merchantWithKey(app, { name: 'Bob' })
  return { app, gateway, alice, bob }
}

async function pay (app: App, who: { authorization: string } | Record<string, never>, extra: Record<string, string> = {}, url = '/api/payments') {
  return await app.inject({ method: 'POST', url, headers: { ...json, ...who, ...extra }, payload: { amount: 10, currency: 'USD' } })
}

function withoutTrace (res: LightMyRequestResponse): unknown {
  const { traceId: _traceId, instance: _instance, ...rest } = res.json()
  return rest
}

t.test('401: no key, a malformed header, an unknown key; with WWW-Authenticate, in each area\'s shape', async (t) => {
  const { app } = await setup(t)
  const none = await app.inject({ method: 'PUT', url: '/products/p1', headers: json, payload: { name: 'A', price: 1 } })
  t.equal(none.statusCode, 401)
  t.equal(none.headers['www-authenticate'], REALM, 'no error attribute when no token was sent')
  t.same(none.json(), { error: 'This operation needs an API key: send `Authorization: Bearer <key>`.', code: 'UNAUTHENTICATED' }, 'products: envelope')

  for (const authorization of [`Bearer ${UNKNOWN_KEY}`, 'Basic dXNlcjpwYXNz', 'Bearer', `Bearer ${UNKNOWN_KEY} extra`, `Token ${TEST_ADMIN_KEY}`, `Bearer ${TEST_ADMIN_KEY.slice(0, -1)}`]) {
    const res = await app.inject({ method: 'POST', url: '/merchants', headers: { ...json, authorization }, payload: { name: 'X', email: 'x@example.com' } })
    t.equal(res.statusCode, 401, authorization.slice(0, 20))
    t.match(res.headers['www-authenticate'], /^Bearer realm="product-payment-service", error="invalid_token"/)
    t.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8', 'merchants: problem document')
    t.match(res.json(), { status: 401, title: 'Unauthorized', type: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.2' })
  }
  const payment = await pay(app, {})
  t.equal(payment.statusCode, 401)
  t.match(payment.json(), { status: 401, instance: '/api/payments' }, 'payments: problem document')
  t.equal((await app.inject({ method: 'GET', url: '/api/payments/3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f' })).statusCode, 401)
  t.equal((await app.inject({ method: 'GET', url: '/merchants/3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f' })).statusCode, 401)
})

t.test('the scheme is case-insensitive (RFC 7235); only the Authorization header counts', async (t) => {
  const { app, alice } = await setup(t)
  t.equal((await pay(app, { authorization: `bearer ${alice.secret}` })).statusCode, 201)
  t.equal((await pay(app, {}, { 'x-api-key': alice.secret })).statusCode, 401)
  t.equal((await app.inject({ method: 'POST', url: `/api/payments?api_key=${alice.secret}`, headers: json, payload: { amount: 1, currency: 'USD' } })).statusCode, 401)
})

t.test('authentication runs before the body is read: an unauthenticated client gets 401, never 413 or 400', async (t) => {
  const { app } = await setup(t, { BODY_LIMIT: '1024' })
  const huge = await app.inject({ method: 'POST', url: '/api/payments', headers: json, payload: JSON.stringify({ pad: 'x'.repeat(100_000) }) })
  t.equal(huge.statusCode, 401)
  const broken = await app.inject({ method: 'PUT', url: '/products/p', headers: { ...json, authorization: `Bearer ${UNKNOWN_KEY}` }, payload: '{"name":' })
  t.equal(broken.statusCode, 401)
  const forbidden = await app.inject({ method: 'PUT', url: '/products/p', headers: { ...json, ...(await merchantWithKey(app)).auth }, payload: '{"name":' })
  t.equal(forbidden.statusCode, 403, 'and authorization too')
})

t.test('products: GET is public, PUT needs the admin key (merchant key 403 envelope)', async (t) => {
  const { app, alice } = await setup(t)
  t.equal((await app.inject({ method: 'PUT', url: '/products/p1', headers: { ...json, ...ADMIN_AUTH }, payload: { name: 'Lamp', price: 5 } })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/products/p1' })).statusCode, 200, 'anonymous read')
  t.equal((await app.inject({ method: 'HEAD', url: '/products/p1' })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/products/p1', headers: alice.auth })).statusCode, 200, 'a merchant reads too')
  t.equal((await app.inject({ method: 'GET', url: '/products/p1', headers: { authorization: `Bearer ${UNKNOWN_KEY}` } })).statusCode, 401,
    'a refused key is refused even where none is needed')
  const merchantPut = await app.inject({ method: 'PUT', url: '/products/p1', headers: { ...json, ...alice.auth }, payload: { name: 'Mine', price: 1 } })
  t.equal(merchantPut.statusCode, 403)
  t.same(merchantPut.json(), { error: 'This operation needs the admin key; a merchant API key may not call it.', code: 'FORBIDDEN' })
  t.notOk(merchantPut.headers['www-authenticate'])
  t.equal((await app.inject({ method: 'GET', url: '/products/p1' })).json().name, 'Lamp', 'unchanged')
})

t.test('merchants: POST admin only; GET/PATCH admin or own, another merchant\'s id is a 404 like an unknown one', async (t) => {
  const { app, alice, bob } = await setup(t)
  const byMerchant = await app.inject({ method: 'POST', url: '/merchants', headers: { ...json, ...alice.auth }, payload: { name: 'X', email: 'x@example.com' } })
  t.equal(byMerchant.statusCode, 403)
  t.match(byMerchant.json(), { status: 403, title: 'Forbidden' })
  t.equal((await app.inject({ method: 'POST', url: '/merchants', headers: { ...json, ...ADMIN_AUTH }, payload: { name: 'X', email: 'x@example.com' } })).statusCode, 201)

  t.equal((await app.inject({ method: 'GET', url: `/merchants/${alice.merchantId}`, headers: alice.auth })).statusCode, 200, 'own')
  t.equal((await app.inject({ method: 'GET', url: `/merchants/${alice.merchantId.toUpperCase()}`, headers: alice.auth })).statusCode, 200, 'own, any case')
  t.equal((await app.inject({ method: 'GET', url: `/merchants/${alice.merchantId}`, headers: ADMIN_AUTH })).statusCode, 200, 'admin')
  const other = await app.inject({ method: 'GET', url: `/merchants/${bob.merchantId}`, headers: alice.auth })
  const unknownId = '00000000-0000-4000-8000-000000000000'
  const unknown = await app.inject({ method: 'GET', url: `/merchants/${unknownId}`, headers: alice.auth })
  t.equal(other.statusCode, 404)
  t.same(withoutTrace(other), { ...withoutTrace(unknown) as object, detail: `No merchant has the id '${bob.merchantId}'.` }, 'the same answer as for a merchant that does not exist')
  t.same(Object.keys(other.headers).sort(), Object.keys(unknown.headers).sort(), 'same headers')

  const patchOther = await app.inject({ method: 'PATCH', url: `/merchants/${bob.merchantId}`, headers: { 'content-type': 'application/merge-patch+json', ...alice.auth }, payload: { name: 'Hijacked' } })
  t.equal(patchOther.statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: `/merchants/${bob.merchantId}`, headers: ADMIN_AUTH })).json().name, 'Bob', 'unchanged')
  t.equal((await app.inject({ method: 'GET', url: `/merchants/${bob.merchantId}/api-keys`, headers: alice.auth })).statusCode, 404)
})

t.test('PATCH: a merchant edits its own record but not its status (403); the admin may', async (t) => {
  const { app, alice } = await setup(t)
  const patch = (who: { authorization: string }, body: unknown) => app.inject({
    method: 'PATCH', url: `/merchants/${alice.merchantId}`, headers: { 'content-type': 'application/merge-patch+json', ...who }, payload: JSON.stringify(body)
  })
  t.equal((await patch(alice.auth, { name: 'Alice GmbH' })).statusCode, 200)
  t.equal((await patch(alice.auth, { status: 'active' })).statusCode, 200, 'repeating the current status changes nothing')
  const suspendSelf = await patch(alice.auth, { status: 'suspended', name: 'Sneaky' })
  t.equal(suspendSelf.statusCode, 403)
  t.match(suspendSelf.json(), { status: 403, detail: /Only the admin key may change a merchant's status/ })
  t.equal((await app.inject({ method: 'GET', url: `/merchants/${alice.merchantId}`, headers: alice.auth })).json().name, 'Alice GmbH', 'nothing of it applied')
  t.equal((await patch(ADMIN_AUTH, { status: 'suspended' })).statusCode, 200)
})

t.test('payments: merchant keys only; each payment is its merchant\'s; another merchant\'s is a 404', async (t) => {
  const { app, gateway, alice, bob } = await setup(t)
  const admin = await pay(app, ADMIN_AUTH)
  t.equal(admin.statusCode, 403, 'the admin key does not act on a merchant\'s behalf')
  t.match(admin.json(), { status: 403, detail: /merchant API key/ })
  t.equal(gateway.calls.length, 0)

  const created = await pay(app, alice.auth)
  t.equal(created.statusCode, 201)
  const id = created.json().id as string
  t.equal((await app.db.payments.get(id))?.merchantId, alice.merchantId, 'the payment records its merchant')
  t.equal((await app.inject({ method: 'GET', url: `/api/payments/${id}`, headers: alice.auth })).statusCode, 200)
  const foreign = await app.inject({ method: 'GET', url: `/api/payments/${id}`, headers: bob.auth })
  const missing = await app.inject({ method: 'GET', url: '/api/payments/00000000-0000-4000-8000-000000000000', headers: bob.auth })
  t.equal(foreign.statusCode, 404)
  t.same(Object.keys(foreign.json()).sort(), Object.keys(missing.json()).sort())
  t.equal(foreign.json().title, missing.json().title)
  t.equal((await app.inject({ method: 'GET', url: `/api/payments/${id}`, headers: ADMIN_AUTH })).statusCode, 403)
})

t.test('payments created before authentication belong to no merchant: no key reads them', async (t) => {
  const { app, alice } = await setup(t)
  const at = new Date().toISOString()
  const legacy = '22222222-2222-4222-8222-222222222222'
  await app.db.payments.create({ ...newPendingPayment({ id: legacy, amountMinor: 100, currency: 'USD', at }), status: 'succeeded' })
  t.equal((await app.inject({ method: 'GET', url: `/api/payments/${legacy}`, headers: alice.auth })).statusCode, 404)
})

t.test('a suspended merchant\'s key reads and refunds but creates no payments (403)', async (t) => {
  const { app, gateway, alice } = await setup(t)
  const before = await pay(app, alice.auth)
  await app.inject({ method: 'PATCH', url: `/merchants/${alice.merchantId}`, headers: { ...json, ...ADMIN_AUTH }, payload: { status: 'suspended' } })
  const refused = await pay(app, alice.auth)
  t.equal(refused.statusCode, 403)
  t.match(refused.json(), { status: 403, detail: /suspended/ })
  t.equal(gateway.calls.length, 1, 'nothing charged')
  t.equal((await app.inject({ method: 'GET', url: `/api/payments/${before.json().id as string}`, headers: alice.auth })).statusCode, 200, 'reading stays allowed')
  t.equal((await app.inject({ method: 'GET', url: `/merchants/${alice.merchantId}`, headers: alice.auth })).statusCode, 200)
  const refund = await app.inject({ method: 'POST', url: `/api/payments/${before.json().id as string}/refunds`, headers: alice.auth })
  t.equal(refund.statusCode, 201, 'refunding stays allowed: money can still go back to customers')
  t.match(refund.json(), { status: 'succeeded', amount: before.json().amount })
})

t.test('Idempotency-Keys are scoped by merchant and route pattern', async (t) => {
  // The OpenAPI check matches raw paths, and the re-spelled URLs below are the point of this test.
  const { app, gateway, alice, bob } = await setup(t, {}, undefined, false)
  const key = { 'idempotency-key': 'order-42' }
  const first = await pay(app, alice.auth, key)
  const other = await pay(app, bob.auth, key)
  t.equal(first.statusCode, 201)
  t.equal(other.statusCode, 201)
  t.not(other.json().id, first.json().id, 'two merchants with the same key get two payments')
  t.notOk(other.headers['idempotent-replayed'])

  const encoded = await pay(app, alice.auth, key, '/api/pay%6Dents')
  const encodedPrefix = await pay(app, alice.auth, key, '/%61pi/payments')
  for (const res of [encoded, encodedPrefix]) {
    t.equal(res.statusCode, 201)
    t.equal(res.headers['idempotent-replayed'], 'true', 'the same route, whatever its spelling: a replay')
    t.equal(res.json().id, first.json().id)
  }
  t.equal(gateway.calls.length, 2, 'two charges: one per merchant, none for the re-spelled URLs')
  t.equal(await app.db.payments.count(), 2)

  const rotated = await app.apiKeys.create(alice.merchantId, { name: 'rotation' })
  const afterRotation = await pay(app, { authorization: `Bearer ${rotated.secret}` }, key)
  t.equal(afterRotation.headers['idempotent-replayed'], 'true', 'the scope is the merchant, not the key: a retry after rotation replays')
})

t.test('API keys: create (secret once), list (never a secret), revoke (refused from the next request)', async (t) => {
  const { app, alice, bob } = await setup(t)
  const created = await app.inject({ method: 'POST', url: `/merchants/${alice.merchantId}/api-keys`, headers: { ...json, ...alice.auth }, payload: { name: 'ci', expiresAt: '2999-01-01T00:00:00Z' } })
  t.equal(created.statusCode, 201)
  t.equal(created.headers['cache-control'], 'no-store')
  const key = created.json()
  t.match(key, { id: String, name: 'ci', secret: /^sk_[A-Za-z0-9_-]{32}$/, prefix: /^sk_/, last4: String, createdAt: String, expiresAt: '2999-01-01T00:00:00.000Z', lastUsedAt: null })
  t.equal(key.secret.slice(0, 7), key.prefix)
  t.equal(key.secret.slice(-4), key.last4)

  const noBody = await app.inject({ method: 'POST', url: `/merchants/${alice.merchantId}/api-keys`, headers: ADMIN_AUTH })
  t.equal(noBody.statusCode, 201, 'the body is optional; the admin creates keys for any merchant')
  t.equal(noBody.json().name, 'API key')
  t.equal((await app.inject({ method: 'POST', url: `/merchants/${alice.merchantId}/api-keys`, headers: bob.auth })).statusCode, 404, 'not for another merchant')
  t.equal((await app.inject({ method: 'POST', url: '/merchants/00000000-0000-4000-8000-000000000000/api-keys', headers: ADMIN_AUTH })).statusCode, 404)
  const past = await app.inject({ method: 'POST', url: `/merchants/${alice.merchantId}/api-keys`, headers: { ...json, ...ADMIN_AUTH }, payload: { expiresAt: '2001-01-01T00:00:00Z' } })
  t.equal(past.statusCode, 400)
  t.match(past.json().errors, { expiresAt: [/future/] })
  t.equal((await app.inject({ method: 'POST', url: `/merchants/${alice.merchantId}/api-keys`, headers: { ...json, ...ADMIN_AUTH }, payload: { secret: 'mine' } })).statusCode, 400, 'no chosen secrets')

  t.equal((await pay(app, { authorization: `Bearer ${key.secret as string}` })).statusCode, 201, 'the new key works at once')
  const list = await app.inject({ method: 'GET', url: `/merchants/${alice.merchantId}/api-keys`, headers: alice.auth })
  t.equal(list.statusCode, 200)
  t.equal(list.json().data.length, 3)
  t.notMatch(list.body, /sk_[A-Za-z0-9_-]{32}/, 'no secret in the list')
  t.notMatch(list.body, /[0-9a-f]{64}/, 'no hash either')
  t.same(Object.keys(list.json().data[0]).sort(), ['createdAt', 'expiresAt', 'id', 'last4', 'lastUsedAt', 'name', 'prefix'])

  const revoke = await app.inject({ method: 'DELETE', url: `/merchants/${alice.merchantId}/api-keys/${key.id as string}`, headers: alice.auth })
  t.equal(revoke.statusCode, 204)
  t.equal(revoke.body, '')
  const refused = await pay(app, { authorization: `Bearer ${key.secret as string}` })
  t.equal(refused.statusCode, 401)
  t.match(refused.headers['www-authenticate'], /error="invalid_token"/)
  t.equal((await pay(app, alice.auth)).statusCode, 201, 'the merchant\'s other keys keep working')
  t.equal((await app.inject({ method: 'DELETE', url: `/merchants/${alice.merchantId}/api-keys/${key.id as string}`, headers: alice.auth })).statusCode, 404, 'already revoked')
  t.equal((await app.inject({ method: 'DELETE', url: `/merchants/${bob.merchantId}/api-keys/${bob.keyId}`, headers: alice.auth })).statusCode, 404, 'not another merchant\'s key')
  t.equal((await app.inject({ method: 'DELETE', url: `/merchants/${alice.merchantId}/api-keys/${bob.keyId}`, headers: alice.auth })).statusCode, 404, 'not through one\'s own id')
  t.equal((await pay(app, bob.auth)).statusCode, 201)
})

t.test('an expired key is refused (401)', async (t) => {
  const clock = { now: Date.parse('2026-06-01T00:00:00Z') }
  const { app, alice } = await setup(t, {}, clock)
  const created = await app.inject({ method: 'POST', url: `/merchants/${alice.merchantId}/api-keys`, headers: { ...json, ...alice.auth }, payload: { expiresAt: '2026-06-01T01:00:00Z' } })
  const auth = { authorization: `Bearer ${created.json().secret as string}` }
  t.equal((await app.inject({ method: 'GET', url: `/merchants/${alice.merchantId}`, headers: auth })).statusCode, 200)
  clock.now += 3600_000
  const expired = await app.inject({ method: 'GET', url: `/merchants/${alice.merchantId}`, headers: auth })
  t.equal(expired.statusCode, 401)
  t.match(expired.headers['www-authenticate'], /invalid_token/)
})

t.test('the rate limit counts per credential when authenticated, per address otherwise', async (t) => {
  const { app, alice, bob } = await setup(t, { RATE_LIMIT_MAX: '2' })
  const get = (headers: Record<string, string> = {}) => app.inject({ method: 'GET', url: '/products/none', headers, remoteAddress: '192.0.2.7' })
  t.same([(await get(alice.auth)).statusCode, (await get(alice.auth)).statusCode, (await get(alice.auth)).statusCode], [404, 404, 429])
  t.equal((await get(bob.auth)).statusCode, 404, 'another merchant from the same address has its own budget')
  t.equal((await get(ADMIN_AUTH)).statusCode, 404, 'so has the admin')
  t.same([(await get()).statusCode, (await get({ authorization: `Bearer ${UNKNOWN_KEY}` })).statusCode, (await get()).statusCode], [404, 401, 429],
    'anonymous requests and refused keys share the address\'s budget')
})

t.test('every route declares who may call it', async (t) => {
  const { app } = await setup(t)
  const routes = app.routeAccess()
  t.ok(routes.length > 20)
  for (const route of routes) t.ok(ACCESS_LEVELS.includes(route.auth as typeof ACCESS_LEVELS[number]), `${route.method} ${route.url}: ${String(route.auth)}`)
  const accessOf = (method: string, url: string) => routes.find((r) => r.method === method && r.url === url)?.auth
  t.same({
    getProduct: accessOf('GET', '/products/:id'),
    putProduct: accessOf('PUT', '/products/:id'),
    createPayment: accessOf('POST', '/api/payments'),
    getPayment: accessOf('GET', '/api/payments/:id'),
    createMerchant: accessOf('POST', '/merchants'),
    getMerchant: accessOf('GET', '/merchants/:id'),
    patchMerchant: accessOf('PATCH', '/merchants/:id'),
    createKey: accessOf('POST', '/merchants/:id/api-keys'),
    listKeys: accessOf('GET', '/merchants/:id/api-keys'),
    revokeKey: accessOf('DELETE', '/merchants/:id/api-keys/:keyId'),
    docs: accessOf('GET', '/docs/json'),
    health: accessOf('GET', '/health/ready')
  }, {
    getProduct: 'public',
    putProduct: 'admin',
    createPayment: 'merchant',
    getPayment: 'merchant',
    createMerchant: 'admin',
    getMerchant: 'admin-or-own-merchant',
    patchMerchant: 'admin-or-own-merchant',
    createKey: 'admin-or-own-merchant',
    listKeys: 'admin-or-own-merchant',
    revokeKey: 'admin-or-own-merchant',
    docs: 'public',
    health: 'public'
  })
})

t.test('secrets never reach the logs', async (t) => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const gateway: SpyGateway = spyGateway()
  const app = await buildTestApp(t, { LOG_LEVEL: 'trace' }, { gateway, logger: { level: 'trace', stream } }, { credentials: 'none' })
  const alice: MerchantCredentials = await merchantWithKey(app)
  const created = await app.inject({ method: 'POST', url: `/merchants/${alice.merchantId}/api-keys`, headers: ADMIN_AUTH })
  const secrets = [TEST_ADMIN_KEY, alice.secret, created.json().secret as string]
  await pay(app, alice.auth)
  await pay(app, { authorization: `Bearer ${UNKNOWN_KEY}` })
  await app.inject({ method: 'PUT', url: '/products/x', headers: { ...json, ...alice.auth }, payload: '{' })
  app.log.info({ headers: { authorization: `Bearer ${alice.secret}` } }, 'a careless log line with headers')
  app.log.info({ req: { headers: { authorization: `Bearer ${alice.secret}` } } }, 'and one with a request')
  t.ok(lines.length >= 8, `logs were captured (${lines.length} lines)`)
  t.ok(lines.some((line) => line.includes('[redacted]')), 'the careless lines were redacted')
  for (const secret of secrets) t.notOk(lines.some((line) => line.includes(secret)), `${secret.slice(0, 7)}… is in no log line`)
})

t.test('a merchant holds at most MAX_ACTIVE_API_KEYS unrevoked keys: one more is 409; revoking frees a place', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const url = `/merchants/${merchant.merchantId}/api-keys`
  const created: string[] = []
  for (let i = 1; i < MAX_ACTIVE_API_KEYS; i++) {
    const res = await app.inject({ method: 'POST', url, headers: ADMIN_AUTH, payload: { name: `k${i}` } })
    t.equal(res.statusCode, 201)
    created.push(res.json().id)
  }
  const list = await app.inject({ method: 'GET', url, headers: ADMIN_AUTH })
  t.equal(list.json().data.length, MAX_ACTIVE_API_KEYS)
  const over = await app.inject({ method: 'POST', url, headers: ADMIN_AUTH, payload: {} })
  t.equal(over.statusCode, 409)
  t.match(over.json().detail, `at most ${MAX_ACTIVE_API_KEYS} API keys`)
  t.equal((await app.inject({ method: 'DELETE', url: `${url}/${created[0]}`, headers: ADMIN_AUTH })).statusCode, 204)
  t.equal((await app.inject({ method: 'POST', url, headers: ADMIN_AUTH, payload: {} })).statusCode, 201, 'revoking frees a place')
})
