import t, { type Test } from 'tap'
import { buildTestApp } from '../../helpers/app'
import { spyGateway } from '../../helpers/gateway'
import { createPayment, manualClock, PROBLEM } from '../../helpers/payments'

async function setup (t: Test, count: number) {
  const clock = manualClock()
  const gateway = spyGateway((request) => request.amountMinor === 250_000
    ? { outcome: 'declined', chargeId: 'c', declineCode: 'card_declined' }
    : { outcome: 'succeeded', chargeId: 'c' })
  const app = await buildTestApp(t, {}, { gateway, clock: clock.read })
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    // Every third payment shares its creation instant with the one before: the id breaks the tie.
    if (i % 3 !== 0) clock.now += 1000
    ids.push((await createPayment(app, { amount: i === 4 ? 2500 : i + 1, currency: 'USD', metadata: { n: String(i) } })).id)
  }
  return { app, clock, ids }
}

t.test('newest first, limit default 10, cursors forward and back, no skip or repeat while payments arrive', async (t) => {
  const { app } = await setup(t, 25)
  const all = (await app.inject('/api/payments?limit=100')).json()
  t.equal(all.data.length, 25)
  t.equal(all.hasMore, false)
  const order: string[] = all.data.map((p: { id: string }) => p.id)
  const created = all.data.map((p: { createdAt: string }) => p.createdAt)
  t.same(created, [...created].sort().reverse(), 'newest first')

  const first = await app.inject('/api/payments')
  t.equal(first.statusCode, 200)
  t.equal(first.json().data.length, 10, 'default limit 10')
  t.equal(first.json().hasMore, true)
  const seen: string[] = first.json().data.map((p: { id: string }) => p.id)
  await createPayment(app, { amount: 1, currency: 'USD' })
  let more = true
  while (more) {
    const page = (await app.inject(`/api/payments?limit=7&startingAfter=${seen[seen.length - 1]}`)).json()
    seen.push(...page.data.map((p: { id: string }) => p.id))
    more = page.hasMore
  }
  t.same(seen, order, 'each payment exactly once, in order, despite the new one')

  const back = (await app.inject(`/api/payments?limit=5&endingBefore=${order[12]}`)).json()
  t.same(back.data.map((p: { id: string }) => p.id), order.slice(7, 12))
  t.equal(back.hasMore, true)
  t.match(all.data[0], { metadata: { n: '24' }, amountRefunded: 0 })
})

t.test('filters: status, createdGte (inclusive), createdLt (exclusive)', async (t) => {
  const { app } = await setup(t, 6)
  const declined = (await app.inject('/api/payments?status=declined')).json()
  t.equal(declined.data.length, 1)
  t.equal(declined.data[0].status, 'declined')
  t.equal((await app.inject('/api/payments?status=succeeded')).json().data.length, 5)
  const all = (await app.inject('/api/payments?limit=100')).json().data
  const middle = all[2].createdAt
  const gte = (await app.inject(`/api/payments?createdGte=${encodeURIComponent(middle)}`)).json().data
  t.ok(gte.every((p: { createdAt: string }) => p.createdAt >= middle) && gte.length >= 3)
  const lt = (await app.inject(`/api/payments?createdLt=${encodeURIComponent(middle)}`)).json().data
  t.ok(lt.every((p: { createdAt: string }) => p.createdAt < middle))
  t.equal(gte.length + lt.length, 6)
  const offset = (await app.inject(`/api/payments?createdGte=${encodeURIComponent('2026-01-01T01:00:03+01:00')}`)).json().data
  t.ok(offset.every((p: { createdAt: string }) => p.createdAt >= '2026-01-01T00:00:03.000Z'), 'offsets are normalised to UTC')
})

t.test('bad list requests are 400 problems naming the field', async (t) => {
  const { app, ids } = await setup(t, 2)
  for (const [query, field] of [
    ['limit=0', 'limit'], ['limit=101', 'limit'], ['limit=abc', 'limit'], ['limit=1.5', 'limit'], ['limit=', 'limit'], ['limit=1&limit=2', 'limit'],
    ['status=paid', 'status'], ['createdGte=yesterday', 'createdGte'], ['createdLt=2026-13-01T00:00:00Z', 'createdLt'],
    ['startingAfter=00000000-0000-4000-8000-000000000000', 'startingAfter'], ['endingBefore=nope', 'endingBefore'],
    [`startingAfter=${ids[0]}&endingBefore=${ids[1]}`, 'endingBefore'], ['colour=blue', 'colour']
  ] as const) {
    const res = await app.inject(`/api/payments?${query}`)
    t.equal(res.statusCode, 400, query)
    t.equal(res.headers['content-type'], PROBLEM)
    t.ok(res.json().errors?.[field], `${query}: errors.${field}`)
  }
  t.equal((await app.inject('/api/payments?limit=100')).statusCode, 200)
  t.equal((await app.inject('/api/payments?limit=1')).statusCode, 200)
})

t.test('POST /api/payments stores metadata as sent; violations are 400 errors.metadata and charge nothing', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const created = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'content-type': 'application/json' }, payload: { amount: 5, currency: 'USD', metadata: { z: '1', a: '2' } } })
  t.equal(created.statusCode, 201)
  t.same(Object.keys(created.json().metadata), ['z', 'a'], 'key order as sent')
  t.same((await app.inject(`/api/payments/${created.json().id}`)).json().metadata, { z: '1', a: '2' })
  const bad = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'content-type': 'application/json' }, payload: { amount: 5, currency: 'USD', metadata: { k: 5 } } })
  t.equal(bad.statusCode, 400)
  t.match(bad.json().errors, { metadata: [/string/] })
  t.equal(gateway.calls.length, 1)
  const empty = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'content-type': 'application/json' }, payload: { amount: 5, currency: 'USD', metadata: {} } })
  t.notOk('metadata' in empty.json(), 'empty metadata is omitted')
})
