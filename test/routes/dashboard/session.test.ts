import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LightMyRequestResponse } from 'fastify'
import { ADMIN_AUTH, TEST_ADMIN_KEY, buildTestApp, merchantWithKey, type MerchantCredentials } from '../../helpers/app'
import type { App } from '../../../app/app'
import { sessionIdOf } from '../../../src/domain/dashboard-sessions'

const NONE = { authorization: undefined }

function sessionCookieOf (res: LightMyRequestResponse): string {
  const cookie = res.cookies.find((c) => c.name === 'dashboard_session')
  if (cookie === undefined) throw new Error('no session cookie')
  return cookie.value
}

interface Session { cookie: string, csrf: string, headers: Record<string, string | undefined> }

async function signIn (app: App, apiKey: string, extra: Record<string, string> = {}): Promise<Session & { res: LightMyRequestResponse }> {
  const res = await app.inject({ method: 'POST', url: '/dashboard/session', headers: { ...NONE, ...extra }, payload: { apiKey } })
  if (res.statusCode !== 201) throw new Error(`sign-in answered ${res.statusCode}: ${res.body}`)
  const cookie = sessionCookieOf(res)
  const csrf = res.json().csrfToken as string
  return { res, cookie, csrf, headers: { ...NONE, cookie: `dashboard_session=${cookie}`, 'x-csrf-token': csrf } }
}

async function listPayments (app: App, headers: Record<string, string | undefined>): Promise<LightMyRequestResponse> {
  return await app.inject({ url: '/api/payments', headers })
}

function clock (start = Date.parse('2026-11-25T10:00:00Z')) {
  let now = start
  return { read: () => now, advance: (seconds: number) => { now += seconds * 1000 } }
}

t.test('a merchant key signs in: 201, the cookie\'s attributes, the CSRF token; the session then calls the API', async (t) => {
  const app = await buildTestApp(t, {})
  const merchant = await merchantWithKey(app)
  const session = await signIn(app, merchant.secret)
  t.match(session.res.json(), { principal: { kind: 'merchant', merchantId: merchant.merchantId }, csrfToken: /^[A-Za-z0-9_-]{43}$/ })
  const setCookie = String(session.res.headers['set-cookie'])
  t.match(setCookie, /^dashboard_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/, 'no Secure over plain http')
  t.notMatch(session.res.body, merchant.secret, 'the key is not echoed')
  t.equal(session.res.headers['cache-control'], 'no-store')

  const list = await listPayments(app, session.headers)
  t.equal(list.statusCode, 200, 'cookie + X-CSRF-Token authenticate')
  const created = await app.inject({ method: 'POST', url: '/api/payments', headers: session.headers, payload: { amount: 5, currency: 'EUR' } })
  t.equal(created.statusCode, 201, 'writes too')
  t.equal((await app.inject({ method: 'GET', url: `/api/payments/${created.json().id}`, headers: merchant.auth })).statusCode, 200, 'as the merchant itself')

  const current = await app.inject({ url: '/dashboard/session', headers: { ...NONE, cookie: `dashboard_session=${session.cookie}` } })
  t.equal(current.statusCode, 200, 'GET needs only the cookie')
  t.same(current.json().csrfToken, session.csrf, 'a reload recovers the same CSRF token')
})

t.test('the admin key signs in; admin-only routes accept the session, merchant-only routes refuse it (403)', async (t) => {
  const app = await buildTestApp(t, {})
  const session = await signIn(app, TEST_ADMIN_KEY)
  t.same(session.res.json().principal, { kind: 'admin' })
  t.equal((await app.inject({ url: '/merchants', headers: session.headers })).statusCode, 200)
  t.equal((await listPayments(app, session.headers)).statusCode, 403)
})

t.test('a wrong, malformed or revoked key is 401 and sets no cookie', async (t) => {
  const app = await buildTestApp(t, {})
  const merchant = await merchantWithKey(app)
  await app.inject({ method: 'DELETE', url: `/merchants/${merchant.merchantId}/api-keys/${merchant.keyId}`, headers: ADMIN_AUTH })
  for (const apiKey of ['sk_' + 'x'.repeat(32), 'not a key', merchant.secret]) {
    const res = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NONE, payload: { apiKey } })
    t.equal(res.statusCode, 401, apiKey.slice(0, 8))
    t.equal(res.headers['set-cookie'], undefined)
    t.match(res.json(), { status: 401, instance: '/dashboard/session' })
  }
  const invalid = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NONE, payload: { key: 'x' } })
  t.equal(invalid.statusCode, 400)
})

t.test('Secure is added when the request came over https (directly or through a trusted proxy)', async (t) => {
  const app = await buildTestApp(t, { TRUST_PROXY: 'true' })
  const merchant = await merchantWithKey(app)
  const session = await signIn(app, merchant.secret, { 'x-forwarded-proto': 'https' })
  t.match(String(session.res.headers['set-cookie']), /; Secure/)
  const untrusted = await buildTestApp(t, {})
  const other = await merchantWithKey(untrusted)
  const plain = await signIn(untrusted, other.secret, { 'x-forwarded-proto': 'https' })
  t.notMatch(String(plain.res.headers['set-cookie']), /Secure/, 'an untrusted proxy header is ignored')
})

t.test('the cookie without its CSRF header, or with another, is ignored: 401 like no credential', async (t) => {
  const app = await buildTestApp(t, {})
  const merchant = await merchantWithKey(app)
  const session = await signIn(app, merchant.secret)
  const cookieOnly = { ...NONE, cookie: `dashboard_session=${session.cookie}` }
  const noHeader = await listPayments(app, cookieOnly)
  t.equal(noHeader.statusCode, 401)
  t.equal(noHeader.headers['www-authenticate'], 'Bearer realm="product-payment-service"', 'as without any credential')
  t.equal((await listPayments(app, { ...cookieOnly, 'x-csrf-token': '' })).statusCode, 401, 'empty header')
  const other = await signIn(app, merchant.secret)
  t.equal((await listPayments(app, { ...cookieOnly, 'x-csrf-token': other.csrf })).statusCode, 401, 'another session\'s token')
  t.equal((await listPayments(app, { ...cookieOnly, 'x-csrf-token': 'x'.repeat(43) })).statusCode, 401, 'a made-up token')
  const signOut = await app.inject({ method: 'DELETE', url: '/dashboard/session', headers: cookieOnly })
  t.equal(signOut.statusCode, 401, 'sign-out needs the header too')
  t.equal((await listPayments(app, session.headers)).statusCode, 200, 'the session still works with its header')
  const unknown = await listPayments(app, { ...NONE, cookie: `dashboard_session=${'A'.repeat(43)}`, 'x-csrf-token': session.csrf })
  t.equal(unknown.statusCode, 401, 'an unknown session')
  t.match(unknown.json().detail, /session has ended/)
})

t.test('a bearer header wins over the session', async (t) => {
  const app = await buildTestApp(t, {})
  const alice = await merchantWithKey(app)
  const bob = await merchantWithKey(app)
  const session = await signIn(app, alice.secret)
  const created = await app.inject({ method: 'POST', url: '/api/payments', headers: { ...session.headers, ...bob.auth }, payload: { amount: 5, currency: 'EUR' } })
  t.equal(created.statusCode, 201)
  t.equal((await app.inject({ url: `/api/payments/${created.json().id}`, headers: bob.auth })).statusCode, 200, 'made as Bob')
  t.equal((await app.inject({ url: `/api/payments/${created.json().id}`, headers: session.headers })).statusCode, 404, 'Alice\'s session cannot read Bob\'s payment')
  const badBearer = await listPayments(app, { ...session.headers, authorization: 'Bearer sk_' + 'x'.repeat(32) })
  t.equal(badBearer.statusCode, 401, 'an invalid bearer key is not rescued by the cookie')
})

t.test('sign-out deletes the session on the server and clears the cookie', async (t) => {
  const app = await buildTestApp(t, {})
  const merchant = await merchantWithKey(app)
  const session = await signIn(app, merchant.secret)
  const res = await app.inject({ method: 'DELETE', url: '/dashboard/session', headers: session.headers })
  t.equal(res.statusCode, 204)
  t.match(String(res.headers['set-cookie']), /^dashboard_session=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict$/)
  t.equal((await listPayments(app, session.headers)).statusCode, 401, 'the old cookie no longer works')
  t.equal((await app.inject({ url: '/dashboard/session', headers: session.headers })).statusCode, 401)
  t.equal((await app.inject({ method: 'DELETE', url: '/dashboard/session', headers: session.headers })).statusCode, 401, 'twice')
  const first = await app.inject({ url: '/dashboard/session', headers: NONE })
  t.equal(first.statusCode, 204, 'no cookie at all: nobody signed in, not an error (a first visit logs no 401)')
  t.equal(first.body, '')
})

t.test('revoking the key ends its sessions; suspending the merchant makes them read-only, like the key', async (t) => {
  const app = await buildTestApp(t, {})
  const merchant: MerchantCredentials = await merchantWithKey(app)
  const session = await signIn(app, merchant.secret)
  const suspend = await app.inject({
    method: 'PATCH', url: `/merchants/${merchant.merchantId}`, headers: { ...ADMIN_AUTH, 'content-type': 'application/merge-patch+json' }, payload: { status: 'suspended' }
  })
  t.equal(suspend.statusCode, 200)
  t.equal((await listPayments(app, session.headers)).statusCode, 200, 'a suspended merchant still reads')
  const write = await app.inject({ method: 'POST', url: '/api/payments', headers: session.headers, payload: { amount: 5, currency: 'EUR' } })
  t.equal(write.statusCode, 403, 'but creates no payment')

  const revoke = await app.inject({ method: 'DELETE', url: `/merchants/${merchant.merchantId}/api-keys/${merchant.keyId}`, headers: ADMIN_AUTH })
  t.equal(revoke.statusCode, 204)
  t.equal((await listPayments(app, session.headers)).statusCode, 401, 'the key\'s revocation ends the session at once')
  t.equal((await app.inject({ url: '/dashboard/session', headers: session.headers })).statusCode, 401)
})

t.test('another ADMIN_API_KEY ends admin sessions made with the previous one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dashboard-admin-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const shared = `file:${join(dir, 'service.db')}`
  const before = await buildTestApp(t, { DATABASE_URL: shared })
  const session = await signIn(before, TEST_ADMIN_KEY)
  t.equal((await before.inject({ url: '/merchants', headers: session.headers })).statusCode, 200)
  const after = await buildTestApp(t, { DATABASE_URL: shared, ADMIN_API_KEY: 'another-admin-key-0123456789abcdefghijklmnop' })
  t.equal((await after.inject({ url: '/merchants', headers: session.headers })).statusCode, 401)
})

t.test('idle expiry, sliding renewal at most once a minute, and the absolute lifetime (fake clock)', async (t) => {
  const time = clock()
  const app = await buildTestApp(t, { DASHBOARD_SESSION_IDLE_SECONDS: '600', DASHBOARD_SESSION_MAX_SECONDS: '1800' }, { clock: time.read })
  const merchant = await merchantWithKey(app)
  const session = await signIn(app, merchant.secret)
  t.equal(session.res.json().expiresAt, '2026-11-25T10:10:00.000Z', 'idle timeout from sign-in')
  const touches: string[] = []
  const touch = app.db.dashboardSessions.touch
  app.db.dashboardSessions.touch = async (id, at) => { touches.push(at); await touch(id, at) }

  time.advance(30)
  t.equal((await listPayments(app, session.headers)).statusCode, 200)
  t.same(touches, [], 'no write within the first minute')
  time.advance(560)
  t.equal((await listPayments(app, session.headers)).statusCode, 200, 'used just before the idle timeout')
  t.same(touches, ['2026-11-25T10:09:50.000Z'], 'renewed by that use')
  for (let i = 0; i < 5; i++) await listPayments(app, session.headers)
  t.equal(touches.length, 1, 'one write, however many requests')
  const current = await app.inject({ url: '/dashboard/session', headers: session.headers })
  t.equal(current.json().expiresAt, '2026-11-25T10:19:50.000Z', 'the idle timeout slides')

  time.advance(600)
  t.equal((await listPayments(app, session.headers)).statusCode, 401, 'idle for the whole timeout: ended')
  t.equal(await app.db.dashboardSessions.get(sessionIdOf(session.cookie)), undefined, 'and deleted')

  const long = await signIn(app, merchant.secret)
  for (let elapsed = 0; elapsed < 1800 - 300; elapsed += 300) {
    time.advance(300)
    t.equal((await listPayments(app, long.headers)).statusCode, 200, `in use after ${elapsed + 300} s`)
  }
  t.equal((await app.inject({ url: '/dashboard/session', headers: long.headers })).json().expiresAt, '2026-11-25T10:49:50.000Z',
    'capped by the absolute lifetime')
  time.advance(300)
  t.equal((await listPayments(app, long.headers)).statusCode, 401, 'absolute lifetime reached despite use')

  const forgotten = await signIn(app, merchant.secret)
  time.advance(3600)
  t.equal(await app.backgroundJobs.reapDashboardSessions(), 1, 'the reaper deletes what ended and was not yet seen')
  t.equal(await app.db.dashboardSessions.get(sessionIdOf(forgotten.cookie)), undefined)
})

t.test('a session of one merchant cannot read another merchant\'s payment (404)', async (t) => {
  const app = await buildTestApp(t, {})
  const alice = await merchantWithKey(app)
  const bob = await merchantWithKey(app)
  const bobs = await app.inject({ method: 'POST', url: '/api/payments', headers: bob.auth, payload: { amount: 5, currency: 'EUR' } })
  const session = await signIn(app, alice.secret)
  const res = await app.inject({ url: `/api/payments/${bobs.json().id}`, headers: session.headers })
  t.equal(res.statusCode, 404)
  t.equal((await app.inject({ url: `/merchants/${bob.merchantId}`, headers: session.headers })).statusCode, 404, 'nor the other merchant')
})

t.test('CORS never lets another origin send the session: no credentials, and X-CSRF-Token is not an allowed header', async (t) => {
  const app = await buildTestApp(t, { CORS_ORIGINS: 'https://shop.example' })
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/api/payments',
    headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-csrf-token' }
  })
  t.equal(preflight.headers['access-control-allow-credentials'], undefined)
  t.notMatch(String(preflight.headers['access-control-allow-headers']), /x-csrf-token/i)
})
