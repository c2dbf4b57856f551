import t from 'tap'
import { buildTestApp, defaultMerchantOf } from '../../helpers/app'

/**
 * Durable commits per payment (issue 17): a fresh-key payment on SQLite costs two group commits of
 * the request's own, (1) the key's claim with the pending payment and (2) the completion (payment
 * result, stored response, key finished, and the connector call log's row of the charge (issue 44: success rate and
 * latency per connector), in the same write) with the simulated gateway's ledger entry, which joins it.
 */
function post (key: string, amount: number) {
  return {
    method: 'POST' as const,
    url: '/api/payments',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    payload: JSON.stringify({ amount, currency: 'USD' })
  }
}

t.test('a fresh-key payment is two commits; its ledger entry rides in the second', async (t) => {
  const app = await buildTestApp(t)
  await app.inject(post('warm-up', 1)) // the merchant key's first use and its recording
  await new Promise((resolve) => setTimeout(resolve, 50))
  const batches: number[] = []
  app.db.instrumentation?.onWriteBatch?.((writes) => { batches.push(writes) })
  const before = await app.db.ledger.count()
  const range = { createdGte: new Date(Date.now() - 3_600_000).toISOString(), createdLt: new Date(Date.now() + 3_600_000).toISOString() }
  const calls = async (merchantId: string): Promise<number> =>
    (await app.db.connectors.attemptStats({ merchantId, ...range })).reduce((sum, figures) => sum + Object.values(figures.counts).reduce((a, b) => a + b, 0), 0)
  const response = await app.inject(post('fresh', 12.34))
  t.equal(response.statusCode, 201)
  t.equal(await calls((await defaultMerchantOf(app)).merchantId), 2, 'the warm-up\'s call and this one: the completion wrote its call row')
  t.same(batches, [1, 2], 'claim + pending payment; then the ledger entry and the completion with the call log\'s row in one commit')
  t.equal(await app.db.ledger.count(), before + 1, 'charged once, recorded')
  t.match(await app.db.idempotency.get({ scope: (await app.db.idempotency.findByResource(response.json().id))?.scope ?? '', method: 'POST', path: '/api/payments', key: 'fresh' }),
    { recoveryPoint: 'finished', resourceId: response.json().id, lockedUntil: null })
})

t.test('a declined fresh-key payment is two commits too', async (t) => {
  const app = await buildTestApp(t)
  await app.inject(post('warm-up', 1))
  await new Promise((resolve) => setTimeout(resolve, 50))
  const batches: number[] = []
  app.db.instrumentation?.onWriteBatch?.((writes) => { batches.push(writes) })
  const response = await app.inject(post('declined', 2500))
  t.equal(response.statusCode, 402)
  t.same(batches, [1, 2])
})

t.test('a fresh-key payment reads the merchant\'s connectors once: its settlement starts from the routing it was prepared with', async (t) => {
  // Without the routing cache, to count the reads a payment makes (test/plugins/connector-cache.test.ts covers the cache).
  const app = await buildTestApp(t, { CONNECTOR_CACHE_TTL_MS: '0' })
  await app.inject(post('warm-up', 1))
  let reads = 0
  const enabledFor = app.db.connectors.enabledFor.bind(app.db.connectors)
  app.db.connectors.enabledFor = async (merchantId) => { reads++; return await enabledFor(merchantId) }
  t.equal((await app.inject(post('routed', 3.21))).statusCode, 201)
  t.equal(reads, 1)
  t.equal((await app.inject(post('routed', 3.21))).statusCode, 201, 'a replay')
  t.equal(reads, 2, 'a replay prepares (and reads) before its key is looked at; it settles nothing')
})

t.test('with the routing cache, payments after the first read no connectors at all', async (t) => {
  const app = await buildTestApp(t, { CONNECTOR_CACHE_TTL_MS: '60000' })
  await app.inject(post('warm-up', 1))
  let reads = 0
  const enabledFor = app.db.connectors.enabledFor.bind(app.db.connectors)
  app.db.connectors.enabledFor = async (merchantId) => { reads++; return await enabledFor(merchantId) }
  t.equal((await app.inject(post('cached', 3.21))).statusCode, 201)
  t.equal((await app.inject(post('cached', 3.21))).statusCode, 201, 'a replay')
  t.equal(reads, 0)
})
