/**
 * Routing in the payments service (src/services/payments.ts): a payment starts on the merchant's first
 * connector, moves to the next only after an attempt that certainly did nothing (not_processed), stays
 * on a connector whose outcome is unknown and is resumed there under the same downstream key; a
 * decline is an answer, not a failure. Refunds and captures go to the connector that charged.
 */
import t, { type Test } from 'tap'
import { paymentService } from '../../src/services/payments'
import { refundService } from '../../src/services/refunds'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { GatewayError, type PaymentGateway } from '../../src/gateway/types'
import type { ConnectorDirectory, RoutedConnector } from '../../src/gateway/connectors'
import { spyGateway, type SpyGateway } from '../helpers/gateway'
import type { Database } from '../../src/store/types'
import { connectorRegistry } from '../../src/gateway/registry'

const silent = { info: () => {}, warn: () => {}, error: () => {} }
const MERCHANT = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa'
const A = '019aa9f2-0000-7000-8000-00000000000a'
const B = '019aa9f2-0000-7000-8000-00000000000b'

const refusedConnection = () => { throw new GatewayError('not_processed', 'connection refused', 'connection_refused') }
const serverError = () => { throw new GatewayError('unavailable', '500 from the PSP', 'server_error') }

/** A directory over named spy gateways; `routing` is the merchant's order, changeable between calls. */
function directoryOf (gateways: Record<string, PaymentGateway>, routing: { order: string[] }): ConnectorDirectory {
  const routed = (id: string): RoutedConnector => {
    const gateway = gateways[id]
    if (gateway === undefined) throw new Error(`no gateway ${id}`)
    return { id, type: 'stripe', gateway }
  }
  return {
    candidatesFor: async () => routing.order.map(routed),
    gatewayOf: async (connector) => routed(connector.id ?? 'default').gateway
  }
}

async function setup (t: Test, gateways: Record<string, SpyGateway>, order = [A, B]) {
  const db: Database = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const routing = { order }
  const connectors = directoryOf(gateways, routing)
  const deps = { db, gateway: spyGateway(), connectors, registry: connectorRegistry(), clock: () => Date.parse('2026-01-01T00:00:00Z'), log: silent }
  return { db, routing, payments: paymentService(deps), refunds: refundService(deps) }
}

t.test('not_processed on the first connector: the second charges under the same key; both attempts are recorded', async (t) => {
  const a = spyGateway(refusedConnection)
  const b = spyGateway(() => ({ outcome: 'succeeded', chargeId: 'pi_b' }))
  const { payments, db } = await setup(t, { [A]: a, [B]: b })
  const payment = await payments.create({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethod: 'pm_card_visa' })
  t.match(payment, { status: 'succeeded', connector: { id: B, type: 'stripe' }, connectorReference: 'pi_b', paymentMethod: 'pm_card_visa' })
  t.match(payment.attempts, [
    { connectorId: A, outcome: 'not_processed', code: 'connection_refused' },
    { connectorId: B, outcome: 'succeeded', code: null }
  ])
  t.equal(payment.attempts.length, 2, 'the pending attempt on B was replaced by its outcome')
  t.same(a.calls.map((call) => call.idempotencyKey), [`payment-${payment.id}`])
  t.same(b.calls.map((call) => call.idempotencyKey), [`payment-${payment.id}`], 'the key is derived from the payment')
  t.equal(b.calls[0]?.paymentMethod, 'pm_card_visa')
  t.same(await db.payments.get(payment.id), payment, 'as stored')
})

t.test('an unknown outcome (5xx) never fails over: pending on that connector, resumed there under the same key', async (t) => {
  let failing = true
  const a = spyGateway(() => { if (failing) serverError(); return { outcome: 'succeeded', chargeId: 'pi_a' } })
  const b = spyGateway()
  const { payments, db } = await setup(t, { [A]: a, [B]: b })
  const prepared = await payments.prepare({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethod: 'pm_card_visa' })
  await t.rejects(payments.create({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethod: 'pm_card_visa' }, undefined, prepared), { code: 'GATEWAY_UNAVAILABLE' })
  const pending = await db.payments.get(prepared.payment.id)
  t.match(pending, { status: 'pending', connector: { id: A }, attempts: [{ connectorId: A, outcome: 'unknown', code: 'server_error' }] })
  t.equal(b.calls.length, 0, 'the second connector is never asked')
  failing = false
  const resumed = await payments.recoverPending({ ageSeconds: -1, leaseMs: 1000, respond: () => ({ statusCode: 200, headers: {}, body: '' }) })
  t.same(resumed, { settled: 1, stillPending: 0 })
  const settled = await db.payments.get(prepared.payment.id)
  t.match(settled, { status: 'succeeded', connector: { id: A }, connectorReference: 'pi_a' })
  t.match(settled?.attempts.map((attempt) => [attempt.connectorId, attempt.outcome]), [[A, 'unknown'], [A, 'succeeded']], 'the history: unknown, then the outcome')
  t.same(a.calls.map((call) => call.idempotencyKey), [`payment-${prepared.payment.id}`, `payment-${prepared.payment.id}`], 'the same key twice: the PSP replays')
  t.equal(b.calls.length, 0)
})

t.test('unknown after failing over: pinned to the second connector even when the routing changes', async (t) => {
  const a = spyGateway(refusedConnection)
  let bFails = true
  const b = spyGateway(() => { if (bFails) throw new GatewayError('timeout', 'no answer'); return { outcome: 'succeeded', chargeId: 'pi_b' } })
  const { payments, db, routing } = await setup(t, { [A]: a, [B]: b })
  const prepared = await payments.prepare({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethod: 'pm_card_visa' })
  await t.rejects(payments.create({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethod: 'pm_card_visa' }, undefined, prepared), { code: 'GATEWAY_UNAVAILABLE' })
  t.match(await db.payments.get(prepared.payment.id), {
    connector: { id: B },
    attempts: [{ connectorId: A, outcome: 'not_processed' }, { connectorId: B, outcome: 'unknown', code: 'timeout' }]
  })
  routing.order = [A]
  a.calls.length = 0
  bFails = false
  await payments.recoverPending({ ageSeconds: -1, leaseMs: 1000, respond: () => ({ statusCode: 200, headers: {}, body: '' }) })
  t.match(await db.payments.get(prepared.payment.id), { status: 'succeeded', connector: { id: B }, connectorReference: 'pi_b' })
  t.equal(a.calls.length, 0, 'A is not asked again: B may have charged')
})

t.test('a decline is an answer: no failover', async (t) => {
  const a = spyGateway(() => ({ outcome: 'declined', chargeId: 'pi_a', declineCode: 'insufficient_funds' }))
  const b = spyGateway()
  const { payments } = await setup(t, { [A]: a, [B]: b })
  const payment = await payments.create({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethod: 'pm_card_visa' })
  t.match(payment, { status: 'declined', declineCode: 'insufficient_funds', connector: { id: A }, attempts: [{ outcome: 'declined', code: 'insufficient_funds' }] })
  t.equal(b.calls.length, 0)
})

t.test('every connector refused: pending (503), nothing charged; the retry starts again from the first', async (t) => {
  let refusing = true
  const a = spyGateway(() => { if (refusing) refusedConnection(); return { outcome: 'succeeded', chargeId: 'pi_a' } })
  const b = spyGateway(refusedConnection)
  const { payments, db } = await setup(t, { [A]: a, [B]: b })
  const prepared = await payments.prepare({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethod: 'pm_card_visa' })
  await t.rejects(payments.create({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethod: 'pm_card_visa' }, undefined, prepared), { code: 'GATEWAY_UNAVAILABLE' })
  const pending = await db.payments.get(prepared.payment.id)
  t.match(pending, { status: 'pending', attempts: [{ connectorId: A, outcome: 'not_processed' }, { connectorId: B, outcome: 'not_processed' }] })
  refusing = false
  await payments.recoverPending({ ageSeconds: -1, leaseMs: 1000, respond: () => ({ statusCode: 200, headers: {}, body: '' }) })
  const settled = await db.payments.get(prepared.payment.id)
  t.match(settled, { status: 'succeeded', connector: { id: A } })
  t.match(settled?.attempts.map((attempt) => [attempt.connectorId, attempt.outcome]), [[A, 'not_processed'], [B, 'not_processed'], [A, 'succeeded']])
})

t.test('a merchant without any connector (GATEWAY=none) is refused before anything is stored', async (t) => {
  const { payments, db } = await setup(t, {}, [])
  await t.rejects(payments.prepare({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethod: 'pm_card_visa' }), { code: 'NO_CONNECTOR' })
  await t.rejects(payments.create({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethod: 'pm_card_visa' }), { code: 'NO_CONNECTOR' })
  t.equal(await db.payments.count(), 0)
})

t.test('a refund goes to the connector that charged, with its reference', async (t) => {
  const a = spyGateway(refusedConnection)
  const b = spyGateway(() => ({ outcome: 'succeeded', chargeId: 'pi_b' }))
  const { payments, refunds } = await setup(t, { [A]: a, [B]: b })
  const payment = await payments.create({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethod: 'pm_card_visa' })
  const refund = await refunds.create({ paymentId: payment.id, amount: 4 })
  t.equal(refund.status, 'succeeded')
  t.equal(a.refunds.length, 0)
  t.match(b.refunds, [{ idempotencyKey: `refund-${refund.id}`, chargeReference: 'pi_b', amountMinor: 400 }])
})

t.test('payment methods per connector: each connector gets its own token; one with none is skipped, not asked', async (t) => {
  const a = spyGateway()
  const b = spyGateway()
  const { payments } = await setup(t, { [A]: a, [B]: b })
  const byId = await payments.create({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethods: { [B.toUpperCase()]: 'tok_b' }, shopperReference: 'shopper-1' })
  t.match(byId, { status: 'succeeded', connector: { id: B }, paymentMethods: { [B]: 'tok_b' }, shopperReference: 'shopper-1' })
  t.match(byId.attempts, [{ connectorId: A, outcome: 'skipped', code: 'no_payment_method' }, { connectorId: B, outcome: 'succeeded' }])
  t.equal(a.calls.length, 0, 'the connector without a method is not asked')
  t.match(b.calls, [{ paymentMethod: 'tok_b', shopperReference: 'shopper-1' }])

  const byType = await payments.create({ amount: 10, currency: 'USD', merchantId: MERCHANT, paymentMethod: 'pm_fallback', paymentMethods: { stripe: 'pm_typed' } })
  t.match(byType, { connector: { id: A } })
  t.equal(a.calls.at(-1)?.paymentMethod, 'pm_typed', 'the type entry wins over paymentMethod')
})

t.test('no connector of the merchant can use the payment: 400 paymentMethod, nothing stored', async (t) => {
  const { payments, db } = await setup(t, { [A]: spyGateway(), [B]: spyGateway() })
  await t.rejects(payments.prepare({ amount: 10, currency: 'USD', merchantId: MERCHANT }), { code: 'VALIDATION', errors: { paymentMethod: [/stripe/] } })
  t.equal(await db.payments.count(), 0)
})
