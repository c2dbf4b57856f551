import t from 'tap'
import { ADMIN_AUTH, buildTestApp, merchantWithKey } from '../../helpers/app'
import { manualClock } from '../../helpers/payments'

const json = { 'content-type': 'application/json' }
const mergePatch = { 'content-type': 'application/merge-patch+json' }

t.test('merchant metadata: stored as sent, merge-patched (null removes a key), limits are 400 errors.metadata', async (t) => {
  const app = await buildTestApp(t)
  const created = await app.inject({ method: 'POST', url: '/merchants', headers: json, payload: { name: 'M', email: 'm@example.com', metadata: { crmId: 'C-1', tier: 'gold' } } })
  t.equal(created.statusCode, 201)
  t.same(created.json().metadata, { crmId: 'C-1', tier: 'gold' })
  const id = created.json().id
  const etag = created.headers.etag

  const patched = await app.inject({ method: 'PATCH', url: `/merchants/${id}`, headers: mergePatch, payload: { metadata: { tier: null, region: 'eu' } } })
  t.equal(patched.statusCode, 200)
  t.same(patched.json().metadata, { crmId: 'C-1', region: 'eu' }, 'null removed tier, region added, crmId kept')
  t.not(patched.headers.etag, etag, 'a metadata change is a change')

  const same = await app.inject({ method: 'PATCH', url: `/merchants/${id}`, headers: mergePatch, payload: { metadata: { region: 'eu' } } })
  t.equal(same.headers.etag, patched.headers.etag, 'setting the same value changes nothing')

  const cleared = await app.inject({ method: 'PATCH', url: `/merchants/${id}`, headers: mergePatch, payload: { metadata: null } })
  t.notOk('metadata' in cleared.json(), 'metadata: null removes every key (omitted when empty)')

  const full = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v']))
  t.equal((await app.inject({ method: 'PATCH', url: `/merchants/${id}`, headers: mergePatch, payload: { metadata: full } })).statusCode, 200)
  const over = await app.inject({ method: 'PATCH', url: `/merchants/${id}`, headers: mergePatch, payload: { metadata: { k50: 'v' } } })
  t.equal(over.statusCode, 400, 'the merged result is held to 50 keys')
  t.match(over.json().errors, { metadata: [/at most 50 keys/] })
  for (const metadata of [{ k: 1 }, { ['x'.repeat(41)]: 'v' }, { k: 'v'.repeat(501) }, 'text']) {
    const res = await app.inject({ method: 'PATCH', url: `/merchants/${id}`, headers: mergePatch, payload: { metadata } })
    t.equal(res.statusCode, 400, JSON.stringify(metadata).slice(0, 40))
    t.ok(res.json().errors.metadata)
  }
  const badCreate = await app.inject({ method: 'POST', url: '/merchants', headers: json, payload: { name: 'N', email: 'n@example.com', metadata: { k: null } } })
  t.equal(badCreate.statusCode, 400, 'null is only a removal in a patch')
  t.ok(badCreate.json().errors.metadata)
})

t.test('GET /merchants: newest first, cursors, limit rules', async (t) => {
  const clock = manualClock()
  const app = await buildTestApp(t, {}, { clock: clock.read })
  const ids: string[] = []
  for (let i = 0; i < 5; i++) {
    clock.now += 1000
    ids.push((await app.inject({ method: 'POST', url: '/merchants', headers: json, payload: { name: `M${i}`, email: `m${i}@example.com` } })).json().id)
  }
  const first = await app.inject('/merchants?limit=2')
  t.equal(first.statusCode, 200)
  t.same(first.json().data.map((m: { id: string }) => m.id), [ids[4], ids[3]])
  t.equal(first.json().hasMore, true)
  const next = (await app.inject(`/merchants?limit=2&startingAfter=${ids[3]}`)).json()
  t.same(next.data.map((m: { id: string }) => m.id), [ids[2], ids[1]])
  const previous = (await app.inject(`/merchants?endingBefore=${ids[2]}`)).json()
  t.same(previous.data.map((m: { id: string }) => m.id), [ids[4], ids[3]])
  t.equal((await app.inject('/merchants')).json().data.length, 5)
  for (const query of ['limit=0', 'limit=101', 'limit=x', 'startingAfter=nope', 'other=1']) {
    t.equal((await app.inject(`/merchants?${query}`)).statusCode, 400, query)
  }
})

t.test('GET /merchants is the admin\'s: a merchant key is 403, no key 401', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const withMerchantKey = await app.inject({ url: '/merchants', headers: merchant.auth })
  t.equal(withMerchantKey.statusCode, 403)
  t.equal(withMerchantKey.headers['content-type'], 'application/problem+json; charset=utf-8')
  t.notOk('data' in withMerchantKey.json(), 'no merchant is listed')
  const anonymous = await app.inject({ url: '/merchants', headers: { authorization: undefined } })
  t.equal(anonymous.statusCode, 401)
  t.match(anonymous.headers['www-authenticate'], /^Bearer realm=/)
  t.equal((await app.inject({ url: '/merchants', headers: ADMIN_AUTH })).statusCode, 200, 'the admin key lists')
})
