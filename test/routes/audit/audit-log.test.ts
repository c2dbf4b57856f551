import t from 'tap'
import { ADMIN_AUTH, buildTestApp, merchantWithKey } from '../../helpers/app'
import { NO_KEY, TEST_PASSWORD, userWithRole } from '../../helpers/users'

interface Entry { id: string, actor: { type: string, id: string, label: string }, action: string, resource: { type: string, id: string | null }, outcome: string, requestId: string | null, ip: string | null, userAgent: string | null }

t.test('every change names who made it: API key, user, operator; with the request id, address and User-Agent', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const log = async (query = ''): Promise<Entry[]> => (await app.inject({ url: `/api/audit-log${query}`, headers: merchant.auth })).json().data

  const paid = await app.inject({ method: 'POST', url: '/api/payments', headers: { ...merchant.auth, 'user-agent': 'shop-server/1.0', 'x-request-id': 'req-pay-1' }, payload: { amount: 40, currency: 'EUR' } })
  t.equal(paid.statusCode, 201)
  const paymentId = paid.json().id as string
  const [created] = await log()
  t.match(created, {
    actor: { type: 'api_key', id: merchant.keyId, label: `test (${merchant.secret.slice(0, 7)}…)` },
    action: 'payment.create',
    resource: { type: 'payment', id: paymentId },
    requestId: 'req-pay-1',
    ip: '127.0.0.1',
    userAgent: 'shop-server/1.0',
    outcome: 'succeeded'
  })
  t.notMatch(JSON.stringify(created), merchant.secret, 'never the key itself')

  const declined = await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 6001, currency: 'EUR' } })
  t.equal(declined.statusCode, 402)
  t.match((await log())[0], { action: 'payment.create', resource: { id: declined.json().paymentId }, outcome: 'failed' }, 'a declined payment was still made: outcome failed')

  const support = await userWithRole(app, merchant.merchantId, 'support')
  const refund = await app.inject({ method: 'POST', url: `/api/payments/${paymentId}/refunds`, headers: support.headers, payload: { amount: 10 } })
  t.equal(refund.statusCode, 201)
  t.match((await log())[0], { actor: { type: 'user', id: support.userId, label: support.email }, action: 'payment.refund', resource: { type: 'payment', id: paymentId }, outcome: 'succeeded' })

  const byPayment = await log(`?resourceId=${paymentId}`)
  t.same(byPayment.map((entry) => entry.action), ['payment.refund', 'payment.create'], 'a payment\'s page finds who created and refunded it')
  t.same((await log(`?actorId=${support.userId}&action=payment.refund`)).length, 1)

  const viewer = await userWithRole(app, merchant.merchantId, 'viewer')
  const refused = await app.inject({ method: 'POST', url: `/api/payments/${paymentId}/refunds`, headers: viewer.headers, payload: { amount: 10 } })
  t.equal(refused.statusCode, 403)
  t.match((await log())[0], { actor: { type: 'user', label: viewer.email }, action: 'payment.refund', resource: { id: paymentId }, outcome: 'denied' })

  const renamed = await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}`, headers: { ...ADMIN_AUTH, 'content-type': 'application/merge-patch+json' }, payload: { name: 'Renamed shop' } })
  t.equal(renamed.statusCode, 200)
  t.match((await log())[0], { actor: { type: 'operator', label: 'operator' }, action: 'merchant.update', resource: { type: 'merchant', id: merchant.merchantId } })
})

t.test('an Idempotency-Key replay changes nothing and records nothing more', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const send = async () => await app.inject({ method: 'POST', url: '/api/payments', headers: { ...merchant.auth, 'idempotency-key': 'once' }, payload: { amount: 12, currency: 'EUR' } })
  await send()
  const replay = await send()
  t.equal(replay.headers['idempotent-replayed'], 'true')
  const entries = (await app.inject({ url: '/api/audit-log', headers: merchant.auth })).json().data as Entry[]
  t.equal(entries.filter((entry) => entry.action === 'payment.create').length, 1)
})

t.test('sign-in and sign-out of a user are recorded as theirs; invites and role changes as the operator\'s', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const user = await userWithRole(app, merchant.merchantId, 'developer')
  const signedIn = await app.inject({ method: 'POST', url: '/dashboard/session', headers: { ...NO_KEY, 'user-agent': 'Firefox' }, payload: { email: user.email, password: TEST_PASSWORD } })
  t.equal(signedIn.statusCode, 201)
  const cookie = signedIn.cookies.find((c) => c.name === 'dashboard_session')?.value ?? ''
  const out = await app.inject({ method: 'DELETE', url: '/dashboard/session', headers: { ...NO_KEY, cookie: `dashboard_session=${cookie}`, 'x-csrf-token': signedIn.json().csrfToken } })
  t.equal(out.statusCode, 204)
  await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}/users/${user.userId}`, headers: ADMIN_AUTH, payload: { role: 'viewer' } })
  const entries = (await app.inject({ url: `/merchants/${merchant.merchantId}/audit-log`, headers: ADMIN_AUTH })).json().data as Entry[]
  // Accepting the invite signs the user in too: one request, one entry (the first of its changes).
  t.match(entries, [
    { action: 'user.update', actor: { type: 'operator' }, resource: { type: 'user', id: user.userId } },
    { action: 'session.delete', actor: { type: 'user', id: user.userId } },
    { action: 'session.create', actor: { type: 'user', id: user.userId, label: user.email }, userAgent: 'Firefox' },
    { action: 'user.accept_invite', actor: { type: 'user', id: user.userId }, resource: { type: 'user', id: user.userId } },
    { action: 'user.invite', actor: { type: 'operator' }, resource: { type: 'user', id: user.userId } }
  ])
  t.equal(entries.length, 5)
  t.notMatch(JSON.stringify(entries), TEST_PASSWORD, 'never a password')
})

t.test('the log: the merchant reads its own, the operator any merchant\'s; cursor pages; bad queries are 400; another merchant\'s is 404', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const other = await merchantWithKey(app)
  for (let i = 0; i < 3; i++) await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 5 + i, currency: 'EUR' } })
  const first = (await app.inject({ url: '/api/audit-log?limit=2', headers: merchant.auth })).json()
  t.equal(first.data.length, 2)
  t.equal(first.hasMore, true)
  const second = (await app.inject({ url: `/api/audit-log?limit=2&startingAfter=${String(first.data[1].id)}`, headers: merchant.auth })).json()
  t.equal(second.data.length, 1)
  t.equal(second.hasMore, false)
  t.equal((await app.inject({ url: '/api/audit-log?limit=0', headers: merchant.auth })).statusCode, 400)
  t.equal((await app.inject({ url: '/api/audit-log?startingAfter=nope', headers: merchant.auth })).statusCode, 400)
  t.equal((await app.inject({ url: '/api/audit-log?color=red', headers: merchant.auth })).statusCode, 400)
  t.same((await app.inject({ url: '/api/audit-log', headers: other.auth })).json().data, [], 'another merchant sees none of it')
  t.equal((await app.inject({ url: `/merchants/${merchant.merchantId}/audit-log`, headers: other.auth })).statusCode, 404)
  t.equal((await app.inject({ url: `/merchants/${merchant.merchantId}/audit-log`, headers: ADMIN_AUTH })).json().data.length, 3)
  t.equal((await app.inject({ url: '/merchants/00000000-0000-4000-8000-000000000000/audit-log', headers: ADMIN_AUTH })).statusCode, 404)
  t.equal((await app.inject({ url: '/api/audit-log', headers: ADMIN_AUTH })).statusCode, 403, 'the operator reads a merchant\'s log under /merchants')
  for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
    t.equal((await app.inject({ method, url: '/api/audit-log', headers: merchant.auth })).statusCode, 405, `${method}: no route changes the log`)
  }
})

t.test('concurrent changes of two merchants each record their own entry (a group commit runs each write in its own request\'s context)', async (t) => {
  const app = await buildTestApp(t)
  const first = await merchantWithKey(app)
  const second = await merchantWithKey(app)
  const made = await Promise.all(Array.from({ length: 10 }, async (_, i) => {
    const merchant = i % 2 === 0 ? first : second
    const res = await app.inject({ method: 'POST', url: '/api/payments', headers: { ...merchant.auth, 'x-request-id': `req-${i}` }, payload: { amount: 10 + i, currency: 'EUR' } })
    return { merchant, id: res.json().id as string, requestId: `req-${i}` }
  }))
  for (const merchant of [first, second]) {
    const entries = (await app.inject({ url: '/api/audit-log?limit=100', headers: merchant.auth })).json().data as Entry[]
    const mine = made.filter((payment) => payment.merchant === merchant)
    t.equal(entries.length, mine.length, 'one entry per payment')
    for (const payment of mine) {
      t.match(entries.find((entry) => entry.resource.id === payment.id), { actor: { id: merchant.keyId }, requestId: payment.requestId }, 'its own request\'s entry')
    }
  }
})
