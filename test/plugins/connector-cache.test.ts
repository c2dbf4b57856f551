/**
 * The routing cache (plugins/connectors.ts): a merchant's enabled connector accounts are read once per
 * CONNECTOR_CACHE_TTL_MS for its new payments and their replays; a write through the connector accounts API
 * forgets them on its instance before it answers and, with Redis, on the other instances within milliseconds;
 * without Redis the TTL bounds how long another instance routes by the previous accounts.
 */
import t from 'tap'
import { buildTestApp, merchantWithKey, type MerchantCredentials } from '../helpers/app'
import { twoInstances } from '../helpers/instances'
import { ensureRedis, REDIS_TEST_URL, uniquePrefix } from '../helpers/redis'
import { manualClock } from '../helpers/payments'
import type { App } from '../../app/app'

/** A merchant with two simulated accounts: `first` (priority 0) routes before `second` (priority 1). */
async function merchantWithTwoAccounts (app: App) {
  const merchant = await merchantWithKey(app)
  const add = async (priority: number): Promise<string> => {
    const res = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: merchant.auth, payload: { type: 'simulated', priority } })
    return res.json().id
  }
  return { merchant, first: await add(0), second: await add(1) }
}

const disable = async (app: App, merchant: MerchantCredentials, id: string) =>
  (await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}/connectors/${id}`, headers: merchant.auth, payload: { status: 'disabled' } })).statusCode

/** The connector account id a new payment was routed to. */
async function routedTo (app: App, merchant: MerchantCredentials, key?: string): Promise<string> {
  const res = await app.inject({
    method: 'POST', url: '/api/payments', headers: { ...merchant.auth, ...(key === undefined ? {} : { 'idempotency-key': key }) }, payload: { amount: 1, currency: 'USD' }
  })
  return res.json().connector.id
}

/** Counts the routing reads that reach the store (a cached one does not). */
function countRoutingReads (app: App): () => number {
  let reads = 0
  const enabledFor = app.db.connectors.enabledFor.bind(app.db.connectors)
  app.db.connectors.enabledFor = async (merchantId) => { reads++; return await enabledFor(merchantId) }
  return () => reads
}

t.test('new payments and their replays read the merchant\'s accounts once; a PATCH is routed by at once on its instance', async (t) => {
  const app = await buildTestApp(t, { CONNECTOR_CACHE_TTL_MS: '60000' })
  const { merchant, first, second } = await merchantWithTwoAccounts(app)
  const reads = countRoutingReads(app)
  t.equal(await routedTo(app, merchant, 'order-1'), first)
  t.equal(await routedTo(app, merchant, 'order-1'), first, 'the replay')
  t.equal(await routedTo(app, merchant), first)
  t.equal(reads(), 1, 'one store read for three requests')
  t.equal(await disable(app, merchant, first), 200)
  t.equal(await routedTo(app, merchant), second, 'the next payment after the PATCH goes to the remaining account')
  t.equal(reads(), 2)
})

t.test('CONNECTOR_CACHE_TTL_MS=0: every new payment reads the accounts', async (t) => {
  const app = await buildTestApp(t, { CONNECTOR_CACHE_TTL_MS: '0' })
  const { merchant, first } = await merchantWithTwoAccounts(app)
  const reads = countRoutingReads(app)
  t.equal(await routedTo(app, merchant), first)
  t.equal(await routedTo(app, merchant), first)
  t.equal(reads(), 2)
})

t.test('without Redis: another instance routes by the previous accounts only until CONNECTOR_CACHE_TTL_MS has passed', async (t) => {
  const clock = manualClock()
  const [a, b] = await twoInstances(t, { CONNECTOR_CACHE_TTL_MS: '1000' }, { clock: clock.read })
  const { merchant, first, second } = await merchantWithTwoAccounts(a)
  t.equal(await routedTo(b, merchant), first, 'B reads and caches the accounts')
  t.equal(await disable(a, merchant, first), 200)
  t.equal(await routedTo(a, merchant), second, 'the writing instance routes by the change at once')
  clock.now += 999
  t.equal(await routedTo(b, merchant), first, 'B still routes by its cache within the TTL')
  clock.now += 1
  t.equal(await routedTo(b, merchant), second, 'and by the change once the TTL has passed')
})

t.test('with Redis: a PATCH through one instance reaches the other\'s routing within a second', async (t) => {
  if (!await ensureRedis(t)) return
  // A TTL far longer than the test: only the announcement can make B forget.
  const [a, b] = await twoInstances(t, { REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: uniquePrefix(t), CONNECTOR_CACHE_TTL_MS: '60000' })
  const { merchant, first, second } = await merchantWithTwoAccounts(a)
  const other = await merchantWithTwoAccounts(a)
  t.equal(await routedTo(b, merchant), first, 'B caches the merchant\'s accounts')
  t.equal(await routedTo(b, other.merchant), other.first, 'and the other merchant\'s')
  t.equal(await disable(a, merchant, first), 200)
  const started = Date.now()
  let routed = first
  while (Date.now() - started < 1000 && (routed = await routedTo(b, merchant)) !== second) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(routed, second, `B routes by the change (after ${Date.now() - started} ms)`)
  const reads = countRoutingReads(b)
  t.equal(await routedTo(b, other.merchant), other.first)
  t.equal(reads(), 0, 'the announcement made B forget that merchant only')
})
