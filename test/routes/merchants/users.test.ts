import t from 'tap'
import { ADMIN_AUTH, buildTestApp, merchantWithKey } from '../../helpers/app'
import { NO_KEY, TEST_PASSWORD, enrollTotp, invite, sessionOf, totpCode, userWithRole } from '../../helpers/users'

function clock (start = Date.parse('2026-12-01T10:00:00Z')) {
  let now = start
  return { read: () => now, advance: (ms: number) => { now += ms } }
}

t.test('the operator invites a user; the invite link works once, sets a password and signs the user in', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const res = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/users`, headers: ADMIN_AUTH, payload: { email: 'Ana@Shop.example', role: 'support' } })
  t.equal(res.statusCode, 201)
  t.equal(res.headers['cache-control'], 'no-store', 'the invite link is a secret')
  const body = res.json()
  t.match(body.user, { merchantId: merchant.merchantId, email: 'ana@shop.example', role: 'support', status: 'invited', twoFactorEnabled: false, lastSignInAt: null })
  t.match(body.invite.url, /^\/dashboard\/#\/invite\/[A-Za-z0-9_-]{43}$/)
  const token = String(body.invite.url).split('/').at(-1)
  t.notMatch(JSON.stringify(await app.db.users.get(body.user.id)), token, 'only the token\'s hash is stored')

  const weak = await app.inject({ method: 'POST', url: '/dashboard/invite', headers: NO_KEY, payload: { token, password: 'password1234' } })
  t.equal(weak.statusCode, 400, 'a common password is refused')
  t.match(weak.json().errors.password[0], /commonly used/)
  const short = await app.inject({ method: 'POST', url: '/dashboard/invite', headers: NO_KEY, payload: { token, password: 'short pw' } })
  t.match(short.json().errors.password[0], /at least 12/)

  const accepted = await app.inject({ method: 'POST', url: '/dashboard/invite', headers: NO_KEY, payload: { token, password: TEST_PASSWORD } })
  t.equal(accepted.statusCode, 201)
  t.match(accepted.json().principal, { kind: 'merchant', merchantId: merchant.merchantId, user: { id: body.user.id, email: 'ana@shop.example', role: 'support', twoFactorEnabled: false } })
  const stored = await app.db.users.get(body.user.id)
  t.match(stored?.passwordHash, /^scrypt\$10\$8\$1\$/, 'scrypt, its cost recorded')
  t.notMatch(stored?.passwordHash, TEST_PASSWORD)
  const again = await app.inject({ method: 'POST', url: '/dashboard/invite', headers: NO_KEY, payload: { token, password: TEST_PASSWORD } })
  t.equal(again.statusCode, 404, 'single use')

  const session = sessionOf(accepted)
  t.equal((await app.inject({ url: '/api/payments', headers: session.headers })).statusCode, 200, 'the session reads the merchant\'s payments')
  const listed = await app.inject({ url: `/merchants/${merchant.merchantId}/users`, headers: ADMIN_AUTH })
  t.match(listed.json().data, [{ id: body.user.id, status: 'active' }])
})

t.test('an invite expires after 72 hours', async (t) => {
  const time = clock()
  const app = await buildTestApp(t, {}, { clock: time.read })
  const merchant = await merchantWithKey(app)
  const { token } = await invite(app, merchant.merchantId, 'viewer')
  time.advance(72 * 3600_000)
  const res = await app.inject({ method: 'POST', url: '/dashboard/invite', headers: NO_KEY, payload: { token, password: TEST_PASSWORD } })
  t.equal(res.statusCode, 404)
})

t.test('emails are unique across merchants; the answer is 409', async (t) => {
  const app = await buildTestApp(t)
  const first = await merchantWithKey(app)
  const second = await merchantWithKey(app)
  await invite(app, first.merchantId, 'viewer', 'same@team.example')
  const res = await app.inject({ method: 'POST', url: `/merchants/${second.merchantId}/users`, headers: ADMIN_AUTH, payload: { email: 'SAME@team.example', role: 'owner' } })
  t.equal(res.statusCode, 409)
  t.equal(res.json().type, 'urn:problem-type:user-email-taken')
  const bad = await app.inject({ method: 'POST', url: `/merchants/${second.merchantId}/users`, headers: ADMIN_AUTH, payload: { email: 'x@y.z', role: 'admin' } })
  t.equal(bad.statusCode, 400, 'an unknown role is a 400')
})

t.test('sign-in with email and password; wrong email and wrong password get the same answer', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const user = await userWithRole(app, merchant.merchantId, 'developer')
  const ok = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, payload: { email: user.email.toUpperCase(), password: TEST_PASSWORD } })
  t.equal(ok.statusCode, 201)
  t.match(ok.json().principal.user, { id: user.userId, role: 'developer' })
  t.ok((await app.db.users.get(user.userId))?.lastSignInAt, 'the sign-in is recorded')

  const wrongPassword = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, payload: { email: user.email, password: 'not the password!' } })
  const unknownEmail = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, payload: { email: 'nobody@team.example', password: 'not the password!' } })
  t.equal(wrongPassword.statusCode, 401)
  t.equal(unknownEmail.statusCode, 401)
  t.equal(wrongPassword.json().detail, unknownEmail.json().detail, 'the answer never says whether the email exists')

  const both = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, payload: { apiKey: merchant.secret, email: user.email, password: TEST_PASSWORD } })
  t.equal(both.statusCode, 400, 'a key and a password at once is a 400')
  const neither = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, payload: { email: user.email } })
  t.equal(neither.statusCode, 400)
  const key = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, payload: { apiKey: merchant.secret } })
  t.equal(key.statusCode, 201, 'the API-key sign-in stays')
  t.notOk(key.json().principal.user)
})

t.test('five failed sign-ins lock the account for 15 minutes, per account and per address', async (t) => {
  const time = clock()
  const app = await buildTestApp(t, {}, { clock: time.read })
  const merchant = await merchantWithKey(app)
  const user = await userWithRole(app, merchant.merchantId, 'viewer')
  const attempt = async (password: string, ip = '198.51.100.1', email = user.email) =>
    await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, remoteAddress: ip, payload: { email, password } })
  for (let i = 1; i <= 4; i++) t.equal((await attempt('wrong password ' + i)).statusCode, 401, `failure ${i}`)
  t.equal((await attempt('wrong password 5')).statusCode, 401, 'the fifth failure is still a 401')
  const locked = await attempt(TEST_PASSWORD)
  t.equal(locked.statusCode, 429, 'then even the right password is refused')
  t.equal(locked.json().type, 'urn:problem-type:sign-in-locked')
  t.equal(Number(locked.headers['retry-after']), 900)
  t.equal((await attempt(TEST_PASSWORD, '198.51.100.2')).statusCode, 429, 'the account is locked from another address too')

  const other = await userWithRole(app, merchant.merchantId, 'viewer')
  t.equal((await attempt(TEST_PASSWORD, '198.51.100.1', other.email)).statusCode, 429, 'the address is locked for other accounts too')
  t.equal((await attempt(TEST_PASSWORD, '198.51.100.3', other.email)).statusCode, 201, 'another account from another address signs in')

  const ghost = 'nobody@team.example'
  for (let i = 1; i <= 5; i++) await attempt('x'.repeat(12), `198.51.100.${10 + i}`, ghost)
  t.equal((await attempt('x'.repeat(12), '198.51.100.20', ghost)).statusCode, 429, 'an unknown email locks the same way: its existence is not told')

  time.advance(15 * 60_000)
  t.equal((await attempt(TEST_PASSWORD)).statusCode, 201, 'after 15 minutes the right password works again')
})

t.test('TOTP: enrollment needs a confirming code; then sign-in needs the current code', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const user = await userWithRole(app, merchant.merchantId, 'owner')
  const started = await app.inject({ method: 'POST', url: '/dashboard/totp', headers: user.headers })
  t.equal(started.statusCode, 201)
  t.match(started.json(), { secret: /^[A-Z2-7]{16,}$/, otpauthUrl: /^otpauth:\/\/totp\// })
  const secret = started.json().secret as string
  const stored = await app.db.users.get(user.userId)
  t.match(stored?.totpSecret, /^enc:v1:/, 'the secret is encrypted at rest')
  t.notOk(stored?.totpEnabledAt, 'not required before it is confirmed')
  const wrong = await app.inject({ method: 'POST', url: '/dashboard/totp/confirm', headers: user.headers, payload: { code: totpCode(secret) === '000000' ? '111111' : '000000' } })
  t.equal(wrong.statusCode, 400)
  const confirmed = await app.inject({ method: 'POST', url: '/dashboard/totp/confirm', headers: user.headers, payload: { code: totpCode(secret) } })
  t.same(confirmed.json(), { twoFactorEnabled: true })

  const noCode = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, payload: { email: user.email, password: TEST_PASSWORD } })
  t.equal(noCode.statusCode, 401)
  t.equal(noCode.json().type, 'urn:problem-type:totp-required')
  const badCode = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, payload: { email: user.email, password: TEST_PASSWORD, totp: 'abcdef' } })
  t.equal(badCode.json().type, 'urn:problem-type:totp-required')
  const ok = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, payload: { email: user.email, password: TEST_PASSWORD, totp: totpCode(secret) } })
  t.equal(ok.statusCode, 201)
  t.equal(ok.json().principal.user.twoFactorEnabled, true)
  const listed = await app.inject({ url: `/merchants/${merchant.merchantId}/users/${user.userId}`, headers: ADMIN_AUTH })
  t.equal(listed.json().twoFactorEnabled, true)

  const keySession = await app.inject({ method: 'POST', url: '/dashboard/totp', headers: merchant.auth })
  t.equal(keySession.statusCode, 403, 'an API key has no authenticator')
})

t.test('a role change and a removal end the user\'s sessions; a password change ends the others', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const user = await userWithRole(app, merchant.merchantId, 'support')
  const second = sessionOf(await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, payload: { email: user.email, password: TEST_PASSWORD } }))

  const changed = await app.inject({ method: 'POST', url: '/dashboard/password', headers: second.headers, payload: { currentPassword: TEST_PASSWORD, newPassword: 'an even longer passphrase 77' } })
  t.equal(changed.statusCode, 204)
  t.equal((await app.inject({ url: '/api/payments', headers: user.headers })).statusCode, 401, 'the other session ended')
  t.equal((await app.inject({ url: '/api/payments', headers: second.headers })).statusCode, 200, 'this one goes on')
  const wrong = await app.inject({ method: 'POST', url: '/dashboard/password', headers: second.headers, payload: { currentPassword: 'not it at all', newPassword: 'an even longer passphrase 78' } })
  t.equal(wrong.statusCode, 400)
  t.ok(wrong.json().errors.currentPassword)

  const patched = await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}/users/${user.userId}`, headers: ADMIN_AUTH, payload: { role: 'viewer' } })
  t.equal(patched.statusCode, 200)
  t.equal(patched.json().role, 'viewer')
  t.equal((await app.inject({ url: '/api/payments', headers: second.headers })).statusCode, 401, 'a role change ends the sessions')

  const third = sessionOf(await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, payload: { email: user.email, password: 'an even longer passphrase 77' } }))
  t.equal((await app.inject({ method: 'DELETE', url: `/merchants/${merchant.merchantId}/users/${user.userId}`, headers: ADMIN_AUTH })).statusCode, 204)
  t.equal((await app.inject({ url: '/api/payments', headers: third.headers })).statusCode, 401, 'a removal ends the sessions at once')
  t.equal((await app.inject({ url: `/merchants/${merchant.merchantId}/users/${user.userId}`, headers: ADMIN_AUTH })).statusCode, 404)
})

t.test('owners manage users; the last owner stays; another merchant\'s users are 404', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const other = await merchantWithKey(app)
  const owner = await userWithRole(app, merchant.merchantId, 'owner')
  const invited = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/users`, headers: owner.headers, payload: { email: 'dev@team.example', role: 'developer' } })
  t.equal(invited.statusCode, 201, 'an owner invites')
  const demote = await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}/users/${owner.userId}`, headers: owner.headers, payload: { role: 'viewer' } })
  t.equal(demote.statusCode, 409)
  t.equal(demote.json().type, 'urn:problem-type:last-owner')
  t.equal((await app.inject({ method: 'DELETE', url: `/merchants/${merchant.merchantId}/users/${owner.userId}`, headers: ADMIN_AUTH })).statusCode, 409)
  t.equal((await app.inject({ url: `/merchants/${other.merchantId}/users`, headers: owner.headers })).statusCode, 404, 'another merchant: 404')
  const foreign = await userWithRole(app, other.merchantId, 'viewer')
  t.equal((await app.inject({ url: `/merchants/${merchant.merchantId}/users/${foreign.userId}`, headers: ADMIN_AUTH })).statusCode, 404, 'a user of another merchant under this one: 404')
  t.equal((await app.inject({ url: `/merchants/${merchant.merchantId}/users`, headers: merchant.auth })).statusCode, 403, 'an API key does not manage people')
})

t.test('a user of a merchant that is gone, or a user deleted, has no session', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const user = await userWithRole(app, merchant.merchantId, 'viewer')
  t.equal(await app.users.principalOf('00000000-0000-7000-8000-000000000000'), undefined)
  const secret = await enrollTotp(app, user)
  t.ok(secret)
})

t.test('guesses sent in parallel are counted too: at most five are checked, the rest are refused before any hashing', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const user = await userWithRole(app, merchant.merchantId, 'viewer')
  const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
    await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, remoteAddress: `198.51.100.${i % 2}`, payload: { email: user.email, password: `wrong guess number ${i}` } })))
  const statuses = answers.map((res) => res.statusCode)
  t.ok(statuses.filter((status) => status === 401).length <= 5, `at most five checked (${statuses.join(' ')})`)
  t.equal(statuses.filter((status) => status === 429).length, 20 - statuses.filter((status) => status === 401).length, 'the others locked out')
  const after = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, remoteAddress: '198.51.100.9', payload: { email: user.email, password: TEST_PASSWORD } })
  t.equal(after.statusCode, 429, 'and the account is locked')
})

t.test('a wrong current password counts against the account like a failed sign-in', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const user = await userWithRole(app, merchant.merchantId, 'viewer')
  for (let i = 0; i < 5; i++) {
    const res = await app.inject({ method: 'POST', url: '/dashboard/password', headers: user.headers, payload: { currentPassword: `not it ${i} at all`, newPassword: 'an even longer passphrase 79' } })
    t.equal(res.statusCode, 400)
  }
  const locked = await app.inject({ method: 'POST', url: '/dashboard/password', headers: user.headers, payload: { currentPassword: TEST_PASSWORD, newPassword: 'an even longer passphrase 79' } })
  t.equal(locked.statusCode, 429)
})

t.test('two-factor cannot be restarted (and so turned off) by a session once it is on', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const user = await userWithRole(app, merchant.merchantId, 'support')
  await enrollTotp(app, user)
  const again = await app.inject({ method: 'POST', url: '/dashboard/totp', headers: user.headers })
  t.equal(again.statusCode, 409)
  const noCode = await app.inject({ method: 'POST', url: '/dashboard/session', headers: NO_KEY, payload: { email: user.email, password: TEST_PASSWORD } })
  t.equal(noCode.json().type, 'urn:problem-type:totp-required', 'still required')
})

t.test('a developer lists and revokes API keys but may not mint one (a key acts with an owner\'s rights)', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const developer = await userWithRole(app, merchant.merchantId, 'developer')
  t.equal((await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/api-keys`, headers: developer.headers, payload: {} })).statusCode, 403)
  t.equal((await app.inject({ url: `/merchants/${merchant.merchantId}/api-keys`, headers: developer.headers })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: `/merchants/${merchant.merchantId}/api-keys/${merchant.keyId}`, headers: developer.headers })).statusCode, 204)
})
