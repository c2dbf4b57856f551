import t from 'tap'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { webhookService } from '../../src/services/webhooks'
import { eventFactory } from '../../src/domain/event-factory'
import { renderEventData } from '../../schemas/events'
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
    renderData: renderEventData,
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
    renderData: renderEventData,
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
      (stored) => ({ id: newId(), merchantId: stored.id, type: 'merchant.updated', resourceType: 'merchant', resourceId: stored.id, data: {}, dataFormat: 'rendered', createdAt: at(clock) }))
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

t.test('an endpoint\'s events store a snapshot without its secrets; the receiver gets the endpoint\'s representation', async (t) => {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const now = Date.parse('2026-01-01T00:00:00.000Z')
  const merchant = await db.merchants.create({ id: newId(), name: 'M', email: 's@example.com', country: null, defaultCurrency: null, metadata: {}, status: 'active', apiVersion: '2026-11-25', version: 1, createdAt: new Date(now).toISOString(), updatedAt: new Date(now).toISOString() })
  const bodies: string[] = []
  const service = webhookService({
    db,
    clock: () => now,
    log: { info () {}, warn () {}, error () {} },
    // 410: the test is recorded failed (the endpoint stays enabled); a delivery of the worker disables the endpoint.
    client: { post: async (_url, _headers, body) => { bodies.push(body); return { statusCode: 410, retryAfter: undefined, body: null, error: null, durationMs: 1 } }, close: async () => {} },
    events: eventFactory({ clock: () => now }),
    renderData: renderEventData,
    retryDelays: [1000],
    timeoutMs: 1000,
    allowPrivate: true,
    secrets
  })
  const created = await service.create(merchant.id, { url: 'http://127.0.0.1:9/x' })
  const rotated = await service.rotateSecret(merchant.id, created.endpoint.id, 3600)
  await service.sendTest(merchant.id, created.endpoint.id)
  await db.merchants.update(merchant.id, merchant.version, { ...merchant, name: 'N' }, new Date(now).toISOString(), eventFactory({ clock: () => now }).merchant)
  await service.deliverDue(10)
  t.equal((await service.get(merchant.id, created.endpoint.id)).disabledReason, 'gone', 'the 410 disabled it')

  const events = (await db.events.list({ merchantId: merchant.id, limit: 10 })).data.filter((event) => event.resourceType === 'webhook_endpoint')
  t.same(events.map((event) => [event.type, event.dataFormat]).sort(), [['webhook_endpoint.disabled', 'snapshot'], ['webhook_endpoint.test', 'snapshot']])
  for (const event of events) {
    const row = JSON.stringify(event.data)
    t.notOk(row.includes(created.secret) || row.includes(rotated.secret), `${event.type}: no secret in clear`)
    t.notOk('secret' in event.data || 'previousSecret' in event.data, `${event.type}: no secret member, sealed or not`)
    t.notOk(row.includes('enc:'), `${event.type}: no sealed secret`)
  }
  const [testBody] = bodies
  t.match(JSON.parse(testBody ?? '{}'), { type: 'webhook_endpoint.test', data: { id: created.endpoint.id, url: 'http://127.0.0.1:9/x', enabledEvents: ['*'], secretRotatingUntil: String } })
  for (const body of bodies) t.notOk(body.includes('whsec_') || body.includes('enc:'), 'no delivery carries a secret')
})
