/**
 * The rendered product cache: a read answers from the instance's cache without the store, a PUT forgets the
 * product on its instance at once and, with Redis, on the other instances within milliseconds; without Redis
 * PRODUCT_CACHE_TTL_MS bounds how long another instance answers the previous version.
 */
import t from 'tap'
import { ADMIN_AUTH, buildTestApp } from '../helpers/app'
import { twoInstances } from '../helpers/instances'
import { ensureRedis, REDIS_TEST_URL, uniquePrefix } from '../helpers/redis'
import { manualClock } from '../helpers/payments'
import type { App } from '../../app/app'

const put = async (app: App, id: string, price: number) =>
  await app.inject({ method: 'PUT', url: `/products/${id}`, headers: ADMIN_AUTH, payload: { name: 'Cup', price } })
const priceOf = async (app: App, id: string): Promise<number> => (await app.inject({ method: 'GET', url: `/products/${id}` })).json().price

/** Counts the product reads that reach the product service (a cached read does not). */
function countStoreReads (app: App): () => number {
  let reads = 0
  const get = app.products.get.bind(app.products)
  app.products.get = async (id) => { reads++; return await get(id) }
  return () => reads
}

t.test('a read is answered from the cache: same bytes, ETag and conditional answers, no store read', async (t) => {
  const app = await buildTestApp(t, { PRODUCT_CACHE_TTL_MS: '60000' })
  t.equal((await put(app, 'cup', 1.5)).statusCode, 200)
  const reads = countStoreReads(app)
  const first = await app.inject({ method: 'GET', url: '/products/cup' })
  const second = await app.inject({ method: 'GET', url: '/products/cup' })
  t.equal(reads(), 1, 'the second read needed no store read')
  t.equal(second.body, first.body)
  t.same(second.json(), { id: 'cup', name: 'Cup', price: 1.5 })
  t.equal(second.headers.etag, first.headers.etag)
  t.equal(second.headers['content-type'], 'application/json; charset=utf-8')
  const notModified = await app.inject({ method: 'GET', url: '/products/cup', headers: { 'if-none-match': String(first.headers.etag) } })
  t.equal(notModified.statusCode, 304)
  t.equal((await app.inject({ method: 'GET', url: '/products/cup', headers: { 'if-match': '"other"' } })).statusCode, 412)
  t.equal((await app.inject({ method: 'HEAD', url: '/products/cup' })).headers.etag, first.headers.etag)
  t.equal(reads(), 1)
  t.equal((await app.inject({ method: 'GET', url: '/products/none' })).statusCode, 404, 'a missing product is not cached')
  t.equal((await app.inject({ method: 'GET', url: '/products/none' })).statusCode, 404)
  t.equal(reads(), 3)
})

t.test('a PUT forgets the product on its instance before it answers', async (t) => {
  const app = await buildTestApp(t, { PRODUCT_CACHE_TTL_MS: '60000' })
  await put(app, 'cup', 1)
  const before = await app.inject({ method: 'GET', url: '/products/cup' })
  const replaced = await put(app, 'cup', 2)
  const after = await app.inject({ method: 'GET', url: '/products/cup' })
  t.equal(after.json().price, 2)
  t.equal(after.headers.etag, replaced.headers.etag)
  t.not(after.headers.etag, before.headers.etag)
  t.equal((await app.inject({ method: 'DELETE', url: '/products/cup', headers: ADMIN_AUTH })).statusCode, 405, 'products are never deleted: PUT is the only write')
})

t.test('without Redis: another instance answers the previous version only until PRODUCT_CACHE_TTL_MS has passed', async (t) => {
  const clock = manualClock()
  const [a, b] = await twoInstances(t, { PRODUCT_CACHE_TTL_MS: '1000' }, { clock: clock.read })
  await put(a, 'cup', 1)
  t.equal(await priceOf(b, 'cup'), 1, 'B reads and caches the product')
  await put(a, 'cup', 2)
  t.equal(await priceOf(a, 'cup'), 2, 'the writing instance answers the new version at once')
  clock.now += 999
  t.equal(await priceOf(b, 'cup'), 1, 'B still answers from its cache within the TTL')
  clock.now += 1
  t.equal(await priceOf(b, 'cup'), 2, 'and the new version once the TTL has passed')
})

t.test('PRODUCT_CACHE_TTL_MS=0: every read goes to the store, so another instance answers a write at once', async (t) => {
  const [a, b] = await twoInstances(t, { PRODUCT_CACHE_TTL_MS: '0' })
  await put(a, 'cup', 1)
  const reads = countStoreReads(b)
  t.equal(await priceOf(b, 'cup'), 1)
  await put(a, 'cup', 2)
  t.equal(await priceOf(b, 'cup'), 2)
  t.equal(reads(), 2)
})

t.test('with Redis: a PUT through one instance reaches the other\'s cache within a second', async (t) => {
  if (!await ensureRedis(t)) return
  // A TTL far longer than the test: only the announcement can make B forget.
  const [a, b] = await twoInstances(t, { REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: uniquePrefix(t), PRODUCT_CACHE_TTL_MS: '60000' })
  await put(a, 'cup', 1)
  await put(a, 'mug', 5)
  t.equal(await priceOf(b, 'cup'), 1, 'B caches cup')
  t.equal(await priceOf(b, 'mug'), 5, 'B caches mug')
  await put(a, 'cup', 2)
  const started = Date.now()
  while (Date.now() - started < 1000 && await priceOf(b, 'cup') !== 2) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(await priceOf(b, 'cup'), 2, `B answers the new version (after ${Date.now() - started} ms)`)
  const reads = countStoreReads(b)
  t.equal(await priceOf(b, 'mug'), 5)
  t.equal(reads(), 0, 'the announcement made B forget cup only: mug is still cached')
})
