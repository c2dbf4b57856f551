import t from 'tap'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { webhookService } from '../../src/services/webhooks'
import { eventFactory } from '../../schemas/events'
import type { Database } from '../../src/store/types'
import { newId } from '../../src/domain/ids'
import { REPLAY_BATCH_EVENTS } from '../../src/domain/webhooks'
import { secretBox } from '../../src/secrets/encryption'
import { itemAt } from '../helpers/items'

const secrets = secretBox([{ id: 'test', key: Buffer.alloc(32, 7) }])

t.test('an endpoint that keeps changing under a PATCH is a 409 after 5 attempts, nothing written', async (t) => {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const now = '2026-01-01T00:00:00.000Z'
  const merchant = await db.merchants.create({ id: '019aa9e8-77d0-7b3f-a2c4-5e91d0f3b6c2', name: 'M', email: 'm@example.com', country: null, defaultCurrency: null, metadata: {}, status: 'active', apiVersion: '2026-11-25', version: 1, createdAt: now, updatedAt: now })
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
    allowPrivate: true,
    secrets
  })
  const { endpoint } = await service.create(merchant.id, { url: 'http://127.0.0.1:9/x' })
  await t.rejects(service.update(merchant.id, endpoint.id, { description: 'x' }), { code: 'CONFLICT' })
  t.equal(writes, 5)
  t.equal((await service.get(merchant.id, endpoint.id)).description, null)
  await t.rejects(service.get(merchant.id, 'not-a-guid'), { code: 'NOT_FOUND' })
  await t.rejects(service.list('00000000-0000-4000-8000-000000000000'), { code: 'NOT_FOUND' })
})

t.test('a replay call schedules at most REPLAY_BATCH_EVENTS deliveries; startingAfter continues where it stopped', async (t) => {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const start = Date.parse('2026-01-01T00:00:00.000Z')
  let clock = start
  const at = (ms: number): string => new Date(ms).toISOString()
  let merchant = await db.merchants.create({ id: newId(), name: 'M', email: 'r@example.com', country: null, defaultCurrency: null, metadata: {}, status: 'active', apiVersion: '2026-11-25', version: 1, createdAt: at(start), updatedAt: at(start) })
  const service = webhookService({
    db,
    clock: () => clock,
    log: { info () {}, warn () {}, error () {} },
    client: { post: async () => { throw new Error('not called') }, close: async () => {} },
    events: eventFactory({ clock: () => clock }),
    retryDelays: [1000],
    timeoutMs: 1000,
    allowPrivate: true,
    secrets
  })
  const { endpoint } = await service.create(merchant.id, { url: 'http://127.0.0.1:9/x', enabledEvents: ['payment.succeeded'] })
  // More events than one batch, three to a millisecond (the batch ends inside one: the cursor orders by time, then id); none sent to the endpoint (it wants payments only).
  const total = REPLAY_BATCH_EVENTS + 5
  for (let i = 0; i < total; i++) {
    clock = start + 1 + Math.floor(i / 3)
    const updated = await db.merchants.update(merchant.id, merchant.version, { ...merchant, name: `M${i}` }, at(clock),
      (stored) => ({ id: newId(), merchantId: stored.id, type: 'merchant.updated', resourceType: 'merchant', resourceId: stored.id, data: {}, createdAt: at(clock) }))
    if (updated.kind !== 'updated') throw new Error('the update did not apply')
    merchant = updated.merchant
  }
  await service.update(merchant.id, endpoint.id, { enabledEvents: ['*'] })
  const range = { from: at(start), to: at(clock + 1) }
  const first = await service.replay(merchant.id, endpoint.id, range)
  t.equal(first.replayed, REPLAY_BATCH_EVENTS, 'one call schedules one batch')
  t.type(first.next, 'string')
  const second = await service.replay(merchant.id, endpoint.id, { ...range, ...(first.next === undefined ? {} : { startingAfter: first.next }) })
  t.same(second, { replayed: 5 }, 'the rest, and no more')
  const deliveries = await db.webhooks.listDeliveries(endpoint.id, { limit: 100 })
  t.equal(deliveries.hasMore, true)
  const all = new Set<string>()
  let page = await db.webhooks.listDeliveries(endpoint.id, { limit: 100 })
  for (;;) {
    for (const delivery of page.data) all.add(delivery.eventId)
    if (!page.hasMore) break
    page = await db.webhooks.listDeliveries(endpoint.id, { limit: 100, startingAfter: itemAt(page.data, page.data.length - 1).id })
  }
  t.equal(all.size, total, 'every event of the range once, none twice')
  await t.rejects(service.replay(merchant.id, endpoint.id, { ...range, startingAfter: newId() }), { code: 'VALIDATION', errors: { startingAfter: [/no event/] } })
})
