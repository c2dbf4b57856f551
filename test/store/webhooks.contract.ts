import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import type { Database } from '../../src/store/types'
import type { MakeDatabase } from './contract'
import { newPendingPayment, transition, type Payment } from '../../src/domain/payments'
import type { NewEvent } from '../../src/domain/events'
import type { Merchant } from '../../src/domain/merchants'
import type { WebhookEndpoint } from '../../src/domain/webhooks'
import { itemAt } from '../helpers/items'

/** The outbox and webhook stores, run unchanged on SQLite and PostgreSQL. */
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const timeOfV7 = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16)
const T0 = Date.parse('2026-01-01T00:00:00Z')
const iso = (ms: number): string => new Date(ms).toISOString()

async function fresh (t: Test, makeDatabase: MakeDatabase): Promise<Database> {
  const db = await makeDatabase()
  t.teardown(async () => { await db.close() })
  return db
}

async function merchant (db: Database): Promise<Merchant> {
  return await db.merchants.create({
    id: randomUUID(),
    name: 'M',
    email: `${randomUUID()}@example.com`,
    country: null,
    defaultCurrency: null,
    metadata: {},
    status: 'active',
    apiVersion: '2026-11-25',
    version: 1,
    createdAt: iso(T0),
    updatedAt: iso(T0)
  })
}

function endpoint (merchantId: string, fields: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id: randomUUID(),
    merchantId,
    url: 'https://hooks.example.com/x',
    description: null,
    enabledEvents: null,
    secret: 'whsec_c2VjcmV0',
    previousSecret: null,
    previousSecretExpiresAt: null,
    disabled: false,
    disabledReason: null,
    lastSuccessAt: null,
    apiVersion: '2026-11-25',
    createdAt: iso(T0),
    updatedAt: iso(T0),
    ...fields
  }
}

const paymentEvent = (at = T0) => (p: Payment): NewEvent => ({
  id: randomUUID(),
  merchantId: p.merchantId as string,
  type: p.status === 'succeeded' ? 'payment.succeeded' : 'payment.pending',
  resourceType: 'payment',
  resourceId: p.id,
  data: { id: p.id, status: p.status },
  dataFormat: 'snapshot',
  createdAt: iso(at)
})

async function settledPayment (db: Database, merchantId: string, at = T0): Promise<Payment> {
  const pending = { ...newPendingPayment({ id: randomUUID(), amountMinor: 500, currency: 'USD', at: iso(at) }), merchantId }
  await db.payments.create(pending)
  return await db.payments.complete(transition(pending, 'succeeded', iso(at)), undefined, paymentEvent(at))
}

export function webhookStoreContract (t: Test, makeDatabase: MakeDatabase): void {
  t.test('the outbox: an event with the change only, numbered per resource, fanned out to matching enabled endpoints', async (t) => {
    const db = await fresh(t, makeDatabase)
    const m = await merchant(db)
    const all = endpoint(m.id)
    const refundsOnly = endpoint(m.id, { enabledEvents: ['refund.succeeded'] })
    const disabled = endpoint(m.id, { disabled: true, disabledReason: 'manual' })
    for (const e of [all, refundsOnly, disabled]) t.ok(await db.webhooks.createEndpoint(e, 16))
    const pending = { ...newPendingPayment({ id: randomUUID(), amountMinor: 500, currency: 'USD', at: iso(T0) }), merchantId: m.id }
    await db.payments.create(pending)
    const pendingEvent = await db.events.appendPaymentPending(paymentEvent()(pending))
    t.equal(pendingEvent?.sequence, 1)
    t.equal(await db.events.appendPaymentPending(paymentEvent()(pending)), undefined, 'payment.pending once')
    await db.payments.complete(transition(pending, 'succeeded', iso(T0)), undefined, paymentEvent())
    // A second completion loses (already settled): no event.
    await db.payments.complete(transition(pending, 'declined', iso(T0), 'card_declined'), undefined, paymentEvent())
    t.equal(await db.events.appendPaymentPending(paymentEvent()(pending)), undefined, 'no payment.pending once settled')
    const page = await db.events.list({ merchantId: m.id, limit: 10 })
    t.same(page.data.map((e) => [e.type, e.sequence]).sort(), [['payment.pending', 1], ['payment.succeeded', 2]])
    t.same(await db.events.list({ merchantId: m.id, limit: 10, type: 'payment.succeeded' }).then((p) => p.data.length), 1)
    const firstEvent = itemAt(page.data, 0)
    t.equal(await db.events.get(randomUUID(), firstEvent.id), undefined, 'another merchant cannot read it')
    t.same((await db.events.get(m.id, firstEvent.id))?.data, firstEvent.data)
    t.equal(firstEvent.dataFormat, 'snapshot', 'the data format round-trips')
    const toAll = await db.webhooks.listDeliveries(all.id, { limit: 10 })
    t.equal(toAll.data.length, 2, 'the endpoint for every type got both')
    t.equal((await db.webhooks.listDeliveries(refundsOnly.id, { limit: 10 })).data.length, 0)
    t.equal((await db.webhooks.listDeliveries(disabled.id, { limit: 10 })).data.length, 0)

    const updated = await db.merchants.update(m.id, 1, { ...m, name: 'N' }, iso(T0 + 1), (stored) => ({
      id: randomUUID(), merchantId: stored.id, type: 'merchant.updated', resourceType: 'merchant', resourceId: stored.id, data: { name: stored.name }, dataFormat: 'rendered', createdAt: iso(T0 + 1)
    }))
    t.equal(updated.kind, 'updated')
    const lost = await db.merchants.update(m.id, 1, { ...m, name: 'O' }, iso(T0 + 2), () => { throw new Error('not called when the compare-and-set loses') })
    t.equal(lost.kind, 'version_mismatch')
    t.same((await db.events.list({ merchantId: m.id, limit: 10, type: 'merchant.updated' })).data.map((e) => [e.data, e.dataFormat]), [[{ name: 'N' }, 'rendered']])
  })

  t.test('an endpoint\'s API version round-trips and a client update moves it', async (t) => {
    const db = await fresh(t, makeDatabase)
    const m = await merchant(db)
    const a = endpoint(m.id, { apiVersion: '2026-11-01' })
    await db.webhooks.createEndpoint(a, 16)
    t.equal((await db.webhooks.getEndpoint(m.id, a.id))?.apiVersion, '2026-11-01')
    t.ok(await db.webhooks.updateEndpoint({ ...a, apiVersion: '2026-11-25', updatedAt: iso(T0 + 1) }, a.updatedAt))
    t.equal((await db.webhooks.getEndpoint(m.id, a.id))?.apiVersion, '2026-11-25')
    t.equal(itemAt(await db.webhooks.listEndpoints(m.id), 0).apiVersion, '2026-11-25')
  })

  t.test('an Idempotency-Key\'s response commits with the endpoint it creates or the change it makes, and only then', async (t) => {
    const db = await fresh(t, makeDatabase)
    const m = await merchant(db)
    const claimed = async (key: string) => {
      const ref = { scope: 'admin', method: 'POST', path: '/merchants/:id/webhook-endpoints', key }
      await db.idempotency.claim({ ref, fingerprint: 'f', now: T0, lockUntil: T0 + 60_000, expiresAt: T0 + 3_600_000 })
      return ref
    }
    const response = { statusCode: 201, headers: { 'content-type': 'application/json' }, body: 'enc:v1:k:sealed' }
    const a = endpoint(m.id)
    const created = await claimed('create')
    t.ok(await db.webhooks.createEndpoint(a, 16, { ref: created, response }))
    const record = await db.idempotency.get(created)
    t.equal(record?.recoveryPoint, 'finished')
    t.same(record?.response, response)
    const full = await claimed('full')
    t.notOk(await db.webhooks.createEndpoint(endpoint(m.id), 1, { ref: full, response }), 'over the limit: nothing inserted')
    t.equal((await db.idempotency.get(full))?.recoveryPoint, 'started', 'and the key keeps no answer')
    const changed = await claimed('change')
    t.notOk(await db.webhooks.updateEndpoint({ ...a, description: 'x', updatedAt: iso(T0 + 2) }, iso(T0 + 1), { ref: changed, response }), 'a lost compare-and-set')
    t.equal((await db.idempotency.get(changed))?.recoveryPoint, 'started', 'stores no answer')
    t.ok(await db.webhooks.updateEndpoint({ ...a, description: 'x', updatedAt: iso(T0 + 2) }, a.updatedAt, { ref: changed, response }))
    t.equal((await db.idempotency.get(changed))?.recoveryPoint, 'finished')
  })

  t.test('claims lease due deliveries once; outcomes: retry, success, 410 disables with an event', async (t) => {
    const db = await fresh(t, makeDatabase)
    const m = await merchant(db)
    const a = endpoint(m.id, { apiVersion: '2026-11-01' })
    await db.webhooks.createEndpoint(a, 16)
    await settledPayment(db, m.id)
    t.equal(await db.webhooks.oldestDueAt(T0 - 1), undefined)
    t.equal(await db.webhooks.oldestDueAt(T0 + 5000), T0)
    const claim = itemAt(await db.webhooks.claimDue(T0 + 10, T0 + 1000, 10), 0)
    t.equal(claim.roundAttempt, 1)
    t.equal(claim.endpoint.id, a.id)
    t.equal(claim.endpoint.apiVersion, '2026-11-01', 'the claim carries the endpoint\'s API version (the body is rendered in it)')
    t.equal(claim.event.type, 'payment.succeeded')
    t.same(await db.webhooks.claimDue(T0 + 20, T0 + 2000, 10), [], 'leased: nobody else gets it')
    const attempt = { attempt: 1, at: iso(T0), receiverStatus: 500, durationMs: 3, error: null, responseBody: 'x' }
    t.equal(await db.webhooks.recordAttempt({ deliveryId: claim.delivery.id, endpointId: a.id, leaseUntil: 1, attempt, now: iso(T0), outcome: { kind: 'succeeded' } }), false, 'not with another lease')
    t.ok(await db.webhooks.recordAttempt({ deliveryId: claim.delivery.id, endpointId: a.id, leaseUntil: claim.leaseUntil, attempt, now: iso(T0 + 20), outcome: { kind: 'retry', at: T0 + 5000 } }))
    t.same(await db.webhooks.claimDue(T0 + 4000, T0 + 9000, 10), [], 'not before the retry time')
    const second = itemAt(await db.webhooks.claimDue(T0 + 5000, T0 + 9000, 10), 0)
    t.equal(second.roundAttempt, 2)
    t.ok(await db.webhooks.recordAttempt({ deliveryId: second.delivery.id, endpointId: a.id, leaseUntil: second.leaseUntil, attempt: { ...attempt, attempt: 2, receiverStatus: 200 }, now: iso(T0 + 5000), outcome: { kind: 'succeeded' } }))
    const delivery = itemAt((await db.webhooks.listDeliveries(a.id, { limit: 10 })).data, 0)
    t.equal(delivery.status, 'succeeded')
    t.equal(delivery.attempts, 2)
    t.same(delivery.log.map((l) => l.receiverStatus), [500, 200])
    t.ok((await db.webhooks.getEndpoint(m.id, a.id))?.lastSuccessAt)

    // A crashed worker's lease runs out and the delivery is claimed again.
    await settledPayment(db, m.id, T0 + 6000)
    const abandoned = itemAt(await db.webhooks.claimDue(T0 + 6000, T0 + 7000, 10), 0)
    const again = itemAt(await db.webhooks.claimDue(T0 + 7000, T0 + 8000, 10), 0)
    t.equal(again.delivery.id, abandoned.delivery.id)
    // 410: the endpoint is disabled and webhook_endpoint.disabled recorded, once.
    const disabledEvent = (e: WebhookEndpoint): NewEvent => ({ id: randomUUID(), merchantId: e.merchantId, type: 'webhook_endpoint.disabled', resourceType: 'webhook_endpoint', resourceId: e.id, data: { disabled: e.disabled, reason: e.disabledReason }, dataFormat: 'snapshot', createdAt: iso(T0 + 8000) })
    t.ok(await db.webhooks.recordAttempt({ deliveryId: again.delivery.id, endpointId: a.id, leaseUntil: again.leaseUntil, attempt, now: iso(T0 + 7000), outcome: { kind: 'failed', disable: 'gone' }, disabledEvent }))
    const gone = await db.webhooks.getEndpoint(m.id, a.id)
    t.equal(gone?.disabled, true)
    t.equal(gone?.disabledReason, 'gone')
    const events = await db.events.list({ merchantId: m.id, limit: 10, type: 'webhook_endpoint.disabled' })
    t.same(events.data.map((e) => [e.sequence, e.data]), [[1, { disabled: true, reason: 'gone' }]])
    // New events skip the disabled endpoint.
    await settledPayment(db, m.id, T0 + 9000)
    t.same(await db.webhooks.claimDue(T0 + 9000, T0 + 10_000, 10), [])
  })

  t.test('a test delivery: its event numbered after the endpoint\'s, one leased delivery to that endpoint only, due when the lease runs out', async (t) => {
    const db = await fresh(t, makeDatabase)
    const m = await merchant(db)
    const a = endpoint(m.id, { enabledEvents: ['payment.succeeded'] })
    const b = endpoint(m.id)
    await db.webhooks.createEndpoint(a, 16)
    await db.webhooks.createEndpoint(b, 16)
    const testEvent = (e: WebhookEndpoint, at: number): NewEvent => ({ id: randomUUID(), merchantId: e.merchantId, type: 'webhook_endpoint.test', resourceType: 'webhook_endpoint', resourceId: e.id, data: { id: e.id }, dataFormat: 'snapshot', createdAt: iso(at) })
    const deliveryId = randomUUID()
    const event = await db.webhooks.beginTestDelivery(testEvent(a, T0), { id: deliveryId, endpointId: a.id, leaseUntil: T0 + 1000, at: iso(T0) })
    t.equal(event?.sequence, 1)
    t.same((await db.webhooks.listDeliveries(b.id, { limit: 10 })).data, [], 'no other endpoint gets it')
    const [delivery] = (await db.webhooks.listDeliveries(a.id, { limit: 10 })).data
    t.match(delivery, { id: deliveryId, eventId: event?.id, eventType: 'webhook_endpoint.test', status: 'pending', attempts: 0, nextAttemptAt: T0 + 1000 })
    t.same(await db.webhooks.claimDue(T0 + 10, T0 + 2000, 10), [], 'leased to the test: the worker leaves it')
    const attempt = { attempt: 1, at: iso(T0), receiverStatus: 204, durationMs: 3, error: null, responseBody: null }
    t.ok(await db.webhooks.recordAttempt({ deliveryId, endpointId: a.id, leaseUntil: T0 + 1000, attempt, now: iso(T0 + 20), outcome: { kind: 'succeeded' } }))
    t.match(itemAt((await db.webhooks.listDeliveries(a.id, { limit: 10 })).data, 0), { status: 'succeeded', attempts: 1, nextAttemptAt: null })

    // Another test is numbered after it; one whose outcome is never recorded (the instance stopped) is the worker's after the lease.
    const second = await db.webhooks.beginTestDelivery(testEvent(a, T0 + 30), { id: randomUUID(), endpointId: a.id, leaseUntil: T0 + 2000, at: iso(T0 + 30) })
    t.equal(second?.sequence, 2)
    t.same(await db.webhooks.claimDue(T0 + 1999, T0 + 3000, 10), [])
    const claimed = itemAt(await db.webhooks.claimDue(T0 + 2000, T0 + 3000, 10), 0)
    t.equal(claimed.event.id, second?.id)
    t.same([claimed.event.data, claimed.event.dataFormat], [{ id: a.id }, 'snapshot'], 'a claim reads the event\'s data and its format')
    t.equal(claimed.endpoint.id, a.id)

    // Another merchant's endpoint, or none: nothing written.
    const other = await merchant(db)
    t.equal(await db.webhooks.beginTestDelivery({ ...testEvent(a, T0 + 40), merchantId: other.id }, { id: randomUUID(), endpointId: a.id, leaseUntil: T0 + 3000, at: iso(T0 + 40) }), undefined)
    t.equal(await db.webhooks.beginTestDelivery(testEvent(a, T0 + 40), { id: randomUUID(), endpointId: randomUUID(), leaseUntil: T0 + 3000, at: iso(T0 + 40) }), undefined)
    t.equal((await db.events.list({ merchantId: m.id, limit: 10, type: 'webhook_endpoint.test' })).data.length, 2)
    t.equal((await db.events.list({ merchantId: other.id, limit: 10 })).data.length, 0)
  })

  t.test('a retry never clears a live lease: the attempt in flight stays the only one', async (t) => {
    const db = await fresh(t, makeDatabase)
    const m = await merchant(db)
    const a = endpoint(m.id)
    await db.webhooks.createEndpoint(a, 16)
    await settledPayment(db, m.id)
    const claim = itemAt(await db.webhooks.claimDue(T0, T0 + 1000, 10), 0)
    t.same(await db.webhooks.retryDelivery(a.id, claim.delivery.id, T0 + 10, iso(T0 + 10)), { kind: 'in_flight', leaseUntil: T0 + 1000 })
    t.same(await db.webhooks.claimDue(T0 + 20, T0 + 2000, 10), [], 'no second pass gets it while the lease lives')
    const attempt = { attempt: 1, at: iso(T0), receiverStatus: 200, durationMs: 3, error: null, responseBody: null }
    t.ok(await db.webhooks.recordAttempt({ deliveryId: claim.delivery.id, endpointId: a.id, leaseUntil: claim.leaseUntil, attempt, now: iso(T0 + 30), outcome: { kind: 'succeeded' } }),
      'the attempt in flight records its outcome')
    const again = await db.webhooks.retryDelivery(a.id, claim.delivery.id, T0 + 40, iso(T0 + 40))
    t.equal(again.kind === 'retried' && again.delivery.status, 'pending', 'once recorded, a retry makes it due again')

    // A lease that ran out (a crashed instance) does not block a retry.
    const abandoned = itemAt(await db.webhooks.claimDue(T0 + 40, T0 + 500, 10), 0)
    t.equal(abandoned.delivery.id, claim.delivery.id)
    t.equal((await db.webhooks.retryDelivery(a.id, claim.delivery.id, T0 + 500, iso(T0 + 500))).kind, 'retried')
  })

  t.test('replay works in batches of `limit` events, resuming after the last one (time, then id)', async (t) => {
    const db = await fresh(t, makeDatabase)
    const m = await merchant(db)
    const a = endpoint(m.id, { enabledEvents: ['payment.succeeded'] })
    await db.webhooks.createEndpoint(a, 16)
    // Two events in each of two milliseconds: the batch of 3 ends inside the second one.
    for (const at of [T0, T0, T0 + 1, T0 + 1]) await settledPayment(db, m.id, at)
    const events = (await db.events.list({ merchantId: m.id, limit: 10 })).data.reverse()
    t.equal(events.length, 4)
    const range = { from: iso(T0), to: iso(T0 + 2) }
    const first = await db.webhooks.replay(a, range, T0 + 10, 3)
    const third = itemAt(events, 2)
    t.same(first, { replayed: 3, next: third.id }, 'the first 3 events, and where to resume')
    const cursor = { createdAt: third.createdAt, id: third.id }
    t.same(await db.webhooks.replay(a, { ...range, after: cursor }, T0 + 10, 3), { replayed: 1 }, 'the rest; nothing more')
    const replayed = (await db.webhooks.listDeliveries(a.id, { limit: 20 })).data.filter((d) => d.createdAt === iso(T0 + 10))
    t.same(replayed.map((d) => d.eventId).sort(), events.map((e) => e.id).sort(), 'each event once')
  })

  t.test('stored secrets: those not under a prefix, by id; a compare-and-set rewrite', async (t) => {
    const db = await fresh(t, makeDatabase)
    const m = await merchant(db)
    const ids = [randomUUID(), randomUUID(), randomUUID()].sort()
    await db.webhooks.createEndpoint(endpoint(m.id, { id: itemAt(ids, 0), secret: 'enc:v1:new:x' }), 16)
    await db.webhooks.createEndpoint(endpoint(m.id, { id: itemAt(ids, 1), secret: 'enc:v1:new:y', previousSecret: 'whsec_b2xk' }), 16)
    await db.webhooks.createEndpoint(endpoint(m.id, { id: itemAt(ids, 2), secret: 'whsec_c2VjcmV0' }), 16)
    t.same(await db.webhooks.secretsNotUnder('enc:v1:new:', '', 10), [
      { id: itemAt(ids, 1), secret: 'enc:v1:new:y', previousSecret: 'whsec_b2xk' },
      { id: itemAt(ids, 2), secret: 'whsec_c2VjcmV0', previousSecret: null }
    ], 'a previous secret counts too; a missing one does not')
    t.same((await db.webhooks.secretsNotUnder('enc:v1:new:', itemAt(ids, 1), 10)).map((s) => s.id), [itemAt(ids, 2)], 'after an id')
    t.same((await db.webhooks.secretsNotUnder('enc:v1:new:', '', 1)).map((s) => s.id), [itemAt(ids, 1)], 'at most limit')
    t.same((await db.webhooks.secretsNotUnder('enc:v1:', '', 10)).map((s) => s.id), [itemAt(ids, 1), itemAt(ids, 2)])

    const stored = { id: itemAt(ids, 2), secret: 'whsec_c2VjcmV0', previousSecret: null }
    t.equal(await db.webhooks.replaceSecrets({ ...stored, secret: 'whsec_stale' }, { secret: 'enc:v1:new:z', previousSecret: null }), false, 'not over a secret that changed')
    t.equal(await db.webhooks.replaceSecrets({ ...stored, previousSecret: 'whsec_stale' }, { secret: 'enc:v1:new:z', previousSecret: null }), false, 'nor a previous secret')
    t.equal(await db.webhooks.replaceSecrets(stored, { secret: 'enc:v1:new:z', previousSecret: null }), true)
    t.equal(await db.webhooks.replaceSecrets({ id: itemAt(ids, 1), secret: 'enc:v1:new:y', previousSecret: 'whsec_b2xk' }, { secret: 'enc:v1:new:y', previousSecret: 'enc:v1:new:w' }), true)
    t.same(await db.webhooks.secretsNotUnder('enc:v1:new:', '', 10), [], 'all under the prefix now')
    const read = await db.webhooks.getEndpoint(m.id, itemAt(ids, 1))
    t.same([read?.secret, read?.previousSecret], ['enc:v1:new:y', 'enc:v1:new:w'])
  })

  t.test('a failed schedule disables the endpoint only without a success since the delivery began; retry, replay, delete, reap', async (t) => {
    const db = await fresh(t, makeDatabase)
    const m = await merchant(db)
    const a = endpoint(m.id, { lastSuccessAt: iso(T0 + 50) })
    await db.webhooks.createEndpoint(a, 16)
    t.equal(await db.webhooks.createEndpoint(endpoint(m.id), 1), false, 'the per-merchant limit')
    await settledPayment(db, m.id)
    const attempt = { attempt: 1, at: iso(T0), receiverStatus: 500, durationMs: 3, error: null, responseBody: null }
    const claim = itemAt(await db.webhooks.claimDue(T0, T0 + 1000, 10), 0)
    await db.webhooks.recordAttempt({ deliveryId: claim.delivery.id, endpointId: a.id, leaseUntil: claim.leaseUntil, attempt, now: iso(T0 + 100), outcome: { kind: 'failed', disable: 'failing', failingSince: claim.delivery.createdAt } })
    t.equal((await db.webhooks.getEndpoint(m.id, a.id))?.disabled, false, 'it succeeded after this delivery began')
    const retried = await db.webhooks.retryDelivery(a.id, claim.delivery.id, T0 + 200, iso(T0 + 200))
    t.equal(retried.kind === 'retried' && retried.delivery.status, 'pending')
    t.same(await db.webhooks.retryDelivery(a.id, randomUUID(), T0, iso(T0)), { kind: 'not_found' })
    const fresh2 = itemAt(await db.webhooks.claimDue(T0 + 200, T0 + 1000, 10), 0)
    t.equal(fresh2.roundAttempt, 1, 'a manual retry starts a fresh schedule')
    await db.webhooks.recordAttempt({ deliveryId: fresh2.delivery.id, endpointId: a.id, leaseUntil: fresh2.leaseUntil, attempt, now: iso(T0 + 300), outcome: { kind: 'failed', disable: 'failing', failingSince: iso(T0 + 100) } })
    t.equal((await db.webhooks.getEndpoint(m.id, a.id))?.disabledReason, 'failing')

    const read = (await db.webhooks.getEndpoint(m.id, a.id)) as WebhookEndpoint
    t.equal(read.updatedAt, iso(T0 + 300), 'the automatic disable moved updatedAt')
    const enabled = { ...read, disabled: false, disabledReason: null, enabledEvents: ['payment.succeeded' as const], lastSuccessAt: null, updatedAt: iso(T0 + 301) }
    t.equal(await db.webhooks.updateEndpoint(enabled, iso(T0)), false, 'a change made on a stale copy writes nothing')
    t.equal((await db.webhooks.getEndpoint(m.id, a.id))?.disabled, true)
    t.equal(await db.webhooks.updateEndpoint(enabled, read.updatedAt), true)
    t.equal((await db.webhooks.getEndpoint(m.id, a.id))?.lastSuccessAt, iso(T0 + 50), 'the worker\'s lastSuccessAt is never overwritten by a client change')
    t.same((await db.webhooks.getEndpoint(m.id, a.id))?.enabledEvents, ['payment.succeeded'])
    t.same(await db.webhooks.replay(enabled, { from: iso(T0 - 1), to: iso(T0 + 1) }, T0 + 400, 100), { replayed: 1 })
    t.same(await db.webhooks.replay(enabled, { from: iso(T0 + 1), to: iso(T0 + 2) }, T0 + 400, 100), { replayed: 0 })
    const deliveries = (await db.webhooks.listDeliveries(a.id, { limit: 10 })).data
    t.equal(deliveries.length, 2)
    for (const delivery of deliveries) t.match(delivery.id, UUID_V7, 'outbox and replay deliveries get UUIDv7 ids')
    for (const delivery of deliveries) t.ok(Math.abs(timeOfV7(delivery.id) - Date.now()) < 60_000, 'its first 48 bits are the time it was made')
    t.same((await db.webhooks.listEndpoints(m.id)).map((e) => e.id), [a.id])

    t.equal(await db.events.reap(iso(T0 + 1), 100), 1)
    t.equal((await db.webhooks.listDeliveries(a.id, { limit: 10 })).data.length, 0, 'deliveries go with their event')
    t.equal(await db.webhooks.deleteEndpoint(randomUUID(), a.id), false)
    t.equal(await db.webhooks.deleteEndpoint(m.id, a.id), true)
    t.equal(await db.webhooks.getEndpoint(m.id, a.id), undefined)
  })
}
