import t from 'tap'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { webhookService } from '../../src/services/webhooks'
import { eventFactory } from '../../schemas/events'
import type { Database } from '../../src/store/types'

t.test('an endpoint that keeps changing under a PATCH is a 409 after 5 attempts, nothing written', async (t) => {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const now = '2026-01-01T00:00:00.000Z'
  const merchant = await db.merchants.create({ id: '019aa9e8-77d0-7b3f-a2c4-5e91d0f3b6c2', name: 'M', email: 'm@example.com', country: null, defaultCurrency: null, metadata: {}, status: 'active', version: 1, createdAt: now, updatedAt: now })
  let writes = 0
  const racing: Database = { ...db, webhooks: { ...db.webhooks, updateEndpoint: async () => { writes++; return false } } }
  const service = webhookService({
    db: racing,
    clock: () => Date.parse(now),
    log: { info () {}, warn () {}, error () {} },
    client: { post: async () => { throw new Error('not called') }, close: async () => {} },
    events: eventFactory({ clock: Date.now }),
    retryDelays: [1000],
    timeoutMs: 1000,
    allowPrivate: true
  })
  const { endpoint } = await service.create(merchant.id, { url: 'http://127.0.0.1:9/x' })
  await t.rejects(service.update(merchant.id, endpoint.id, { description: 'x' }), { code: 'CONFLICT' })
  t.equal(writes, 5)
  t.equal((await service.get(merchant.id, endpoint.id)).description, null)
  await t.rejects(service.get(merchant.id, 'not-a-guid'), { code: 'NOT_FOUND' })
  await t.rejects(service.list('00000000-0000-4000-8000-000000000000'), { code: 'NOT_FOUND' })
})
