import t, { type Test } from 'tap'
import { ADMIN_AUTH, buildTestApp, merchantWithKey } from '../../helpers/app'
import { spyGateway } from '../../helpers/gateway'
import { createPayment, manualClock, PROBLEM } from '../../helpers/payments'

const DAY = 86_400_000

async function setup (t: Test) {
  const clock = manualClock(Date.parse('2026-11-24T09:00:00Z'))
  const gateway = spyGateway((request) => request.amountMinor === 250_000
    ? { outcome: 'declined', chargeId: 'c', declineCode: 'card_declined' }
    : { outcome: 'succeeded', chargeId: 'c' })
  const app = await buildTestApp(t, {}, { gateway, clock: clock.read })
  return { app, clock }
}

t.test('GET /api/payments/summary: every day of the default range, per currency, amounts as decimals, the success rate', async (t) => {
  const { app, clock } = await setup(t)
  const paid = await createPayment(app, { amount: 10.1, currency: 'EUR' })
  t.equal(paid.status, 201)
  await createPayment(app, { amount: 20.4, currency: 'EUR' })
  t.equal((await createPayment(app, { amount: 2500, currency: 'EUR' })).status, 402)
  await createPayment(app, { amount: 500, currency: 'JPY' })
  clock.now += DAY
  const refund = await app.inject({ method: 'POST', url: `/api/payments/${paid.id}/refunds`, payload: { amount: 2.5 } })
  t.equal(refund.statusCode, 201)

  const res = await app.inject('/api/payments/summary')
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.equal(body.from, '2026-10-27', '30 days ending today (the injected clock)')
  t.equal(body.to, '2026-11-25')
  t.same(body.currencies.map((c: { currency: string }) => c.currency), ['EUR', 'JPY'])
  const [eur, jpy] = body.currencies
  t.equal(eur.days.length, 30, 'zeros included')
  t.same(eur.days[0], { date: '2026-10-27', succeeded: { count: 0, amount: 0 }, declined: { count: 0, amount: 0 }, refunded: { count: 0, amount: 0 } })
  t.same(eur.days[28], { date: '2026-11-24', succeeded: { count: 2, amount: 30.5 }, declined: { count: 1, amount: 2500 }, refunded: { count: 0, amount: 0 } })
  t.same(eur.days[29].refunded, { count: 1, amount: 2.5 }, 'the refund on its own day')
  t.same(eur.totals, { succeeded: { count: 2, amount: 30.5 }, declined: { count: 1, amount: 2500 }, refunded: { count: 1, amount: 2.5 }, successRate: 2 / 3 })
  t.same(jpy.totals, { succeeded: { count: 1, amount: 500 }, declined: { count: 0, amount: 0 }, refunded: { count: 0, amount: 0 }, successRate: 1 })

  const single = (await app.inject('/api/payments/summary?from=2026-11-25&to=2026-11-25')).json()
  t.same(single.currencies.map((c: { currency: string, days: unknown[] }) => [c.currency, c.days.length]), [['EUR', 1]], 'only currencies with figures in the range')
  t.equal(single.currencies[0].totals.successRate, null, 'no payment decided that day')
  t.same((await app.inject('/api/payments/summary?from=2025-01-01&to=2025-01-31')).json().currencies, [])
})

t.test('the summary is the merchant\'s own; the admin key is 403; no credential is 401', async (t) => {
  const { app } = await setup(t)
  await createPayment(app, { amount: 10, currency: 'EUR' })
  const bob = await merchantWithKey(app)
  const bobs = await app.inject({ url: '/api/payments/summary', headers: bob.auth })
  t.equal(bobs.statusCode, 200)
  t.same(bobs.json().currencies, [], 'Bob does not see the default merchant\'s payment')
  const admin = await app.inject({ url: '/api/payments/summary', headers: ADMIN_AUTH })
  t.equal(admin.statusCode, 403)
  t.equal(admin.headers['content-type'], PROBLEM)
  t.equal((await app.inject({ url: '/api/payments/summary', headers: { authorization: undefined } })).statusCode, 401)

  const signIn = await app.inject({ method: 'POST', url: '/dashboard/session', headers: { authorization: undefined }, payload: { apiKey: bob.secret } })
  t.equal(signIn.statusCode, 201)
  const cookie = `dashboard_session=${signIn.cookies.find((c) => c.name === 'dashboard_session')?.value ?? ''}`
  const viaSession = await app.inject({ url: '/api/payments/summary', headers: { authorization: undefined, cookie, 'x-csrf-token': signIn.json().csrfToken } })
  t.equal(viaSession.statusCode, 200, 'the dashboard session (cookie + CSRF header) reads it')
  t.same(viaSession.json().currencies, [])
  t.equal((await app.inject({ url: '/api/payments/summary', headers: { authorization: undefined, cookie } })).statusCode, 401, 'the cookie alone is ignored')
})

t.test('the range: real dates, from ≤ to, at most 366 days, no other parameter → 400 problems', async (t) => {
  const { app } = await setup(t)
  const problem = async (query: string) => {
    const res = await app.inject(`/api/payments/summary?${query}`)
    t.equal(res.statusCode, 400, query)
    t.equal(res.headers['content-type'], PROBLEM)
    return res.json()
  }
  t.match((await problem('from=2026-02-30')).errors, { from: [/calendar date/] })
  t.match((await problem('to=2026-13-01')).errors, { to: [/calendar date/] })
  t.match((await problem('from=2026-11-02&to=2026-11-01')).errors, { from: [/not be after/] })
  t.match((await problem('from=2025-01-01&to=2026-01-02')).errors, { from: [/at most 366 days/] })
  t.match((await problem('from=2026%2F11%2F01')).errors, { from: [String] }, 'not YYYY-MM-DD')
  await problem('from=2026-11-01T00:00:00Z')
  await problem('limit=10')
  const leap = await app.inject('/api/payments/summary?from=2024-01-01&to=2024-12-31')
  t.equal(leap.statusCode, 200, '366 days are allowed')
  t.same([leap.json().from, leap.json().to], ['2024-01-01', '2024-12-31'])
  const onlyTo = (await app.inject('/api/payments/summary?to=2026-02-28')).json()
  t.same([onlyTo.from, onlyTo.to], ['2026-01-30', '2026-02-28'], 'from defaults to 29 days before to')
})

t.test('summary is a route of its own, not a payment id', async (t) => {
  const { app } = await setup(t)
  t.equal((await app.inject('/api/payments/SUMMARY')).statusCode, 404, 'other spellings reach GET /api/payments/:id: no such payment')
  const post = await app.inject({ method: 'POST', url: '/api/payments/summary', payload: {} })
  t.equal(post.statusCode, 405)
  t.equal(post.headers.allow, 'GET, HEAD, OPTIONS')
})
