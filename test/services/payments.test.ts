/**
 * The payments service (src/services/payments.ts): domain payments in and out, and the recovery worker's pass
 * (recoverPending): back-off and expiry of payments left pending, bounded concurrency, a lease per payment taken
 * just before it is settled, and a prompt stop on shutdown that abandons the gateway call and frees the key.
 */
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { paymentService, recoveryBackoffMs, type RecoveryOptions } from '../../src/services/payments'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { GatewayError, type ChargeRequest, type ChargeResult, type PaymentGateway } from '../../src/gateway/types'
import type { App } from '../../app/app'
import { paymentResponse } from '../../plugins/stored-responses'
import { buildTestApp, defaultMerchantScope } from '../helpers/app'
import { spyGateway, unavailable } from '../helpers/gateway'
import { manualClock, postJson } from '../helpers/payments'
import { connectorRegistry } from '../../src/gateway/registry'

const silent = { info: () => {}, warn: () => {}, error: () => {} }

const MERCHANT = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa'

t.test('the payments service returns domain payments and throws domain errors; it never frees a key itself', async (t) => {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  let released = 0
  const release = db.idempotency.release
  const payments = paymentService({
    registry: connectorRegistry(),
    db: { ...db, idempotency: { ...db.idempotency, release: async (ref) => { released++; return await release(ref) } } },
    gateway: spyGateway(unavailable),
    clock: () => Date.parse('2026-01-01T00:00:00Z'),
    log: silent
  })
  await t.rejects(payments.create({ amount: 1, currency: 'USD', merchantId: MERCHANT }), { code: 'GATEWAY_UNAVAILABLE' })
  t.equal(released, 0, 'the idempotency plugin owns the key, not the service')
  await t.rejects(payments.get('not-a-guid'), { code: 'NOT_FOUND' })
  await t.rejects(payments.get('x'.repeat(5000)), { code: 'NOT_FOUND' }, 'any length: 404, not a validation error')
})

t.test('a settled payment is returned as a domain object', async (t) => {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const payments = paymentService({ db, gateway: spyGateway(), registry: connectorRegistry(), clock: () => 0, log: silent })
  const payment = await payments.create({ amount: 12.34, currency: 'USD', merchantId: MERCHANT })
  t.match(payment, { status: 'succeeded', amountMinor: 1234, currency: 'USD', merchantId: MERCHANT })
  t.same(await payments.get(payment.id.toUpperCase()), payment, 'GUIDs are case-insensitive')
  t.same(await payments.get(payment.id, MERCHANT.toUpperCase()), payment, 'its owner finds it')
  await t.rejects(payments.get(payment.id, 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb'), { code: 'NOT_FOUND' }, 'another merchant does not')
})

const MINUTE = 60_000
const HOUR = 60 * MINUTE

function recorder () {
  const lines: Array<{ level: string, details: Record<string, unknown>, message: string }> = []
  const at = (level: string) => (details: object, message: string) => { lines.push({ level, details: details as Record<string, unknown>, message }) }
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } }
}

function serviceOn (app: App, gateway: PaymentGateway, clock: { read: () => number }) {
  const logs = recorder()
  const service = paymentService({ db: app.db, gateway, registry: app.connectorRegistry, clock: clock.read, log: logs.log })
  const options = { ageSeconds: 120, maxAgeSeconds: 24 * 3600, leaseMs: MINUTE, respond: paymentResponse }
  return { service, logs, pass: async () => await service.recoverPending(options) }
}

t.test('recoveryBackoffMs grows with the age, between one lease and an hour', async (t) => {
  t.equal(recoveryBackoffMs(10_000, MINUTE), MINUTE)
  t.equal(recoveryBackoffMs(5 * MINUTE, MINUTE), 5 * MINUTE)
  t.equal(recoveryBackoffMs(10 * HOUR, MINUTE), HOUR)
})

t.test('a payment pending past PENDING_PAYMENT_MAX_AGE: exponential back-off, then failed, one log line', async (t) => {
  const clock = manualClock()
  const gateway = spyGateway(unavailable)
  const app = await buildTestApp(t, {}, { gateway, clock: clock.read })
  const outage = await app.inject(postJson('/api/payments', { amount: 7, currency: 'USD' }, 'stuck'))
  t.equal(outage.statusCode, 503)
  const paymentId = outage.json().paymentId
  const { logs, pass } = serviceOn(app, gateway, clock)

  const attemptTimes: number[] = []
  const start = clock.now
  while (clock.now - start < 25 * HOUR) {
    clock.now += MINUTE
    const before = gateway.calls.length
    await pass()
    if (gateway.calls.length > before) attemptTimes.push(clock.now - start)
    if ((await app.db.payments.get(paymentId))?.status !== 'pending') break
  }
  const gaps = attemptTimes.slice(1).map((time, i) => time - (attemptTimes[i] ?? Number.NaN))
  t.ok(gaps.length >= 5, `several attempts (${attemptTimes.length})`)
  t.ok(gaps.slice(0, 4).every((gap, i) => i === 0 || gap >= (gaps[i - 1] ?? Number.NaN)), `gaps grow: ${gaps.slice(0, 6).map((g) => g / MINUTE).join(', ')} min`)
  t.ok(gaps.every((gap) => gap <= HOUR + MINUTE), 'capped at an hour')
  t.ok(attemptTimes.length < 60, `far fewer attempts than one a minute (${attemptTimes.length} in 24 h)`)

  const payment = await app.db.payments.get(paymentId)
  t.match(payment, { status: 'failed', failureCode: 'pending_expired' })
  t.same(gateway.voids, [{ chargeIdempotencyKey: `payment-${paymentId}`, paymentId }], 'voided under its downstream key')
  t.equal(logs.lines.length, 1, 'one log line for the one state change, none per attempt')
  t.match(logs.lines[0], { level: 'info', details: { paymentId, status: 'failed', failureCode: 'pending_expired' } })

  t.match((await app.inject(`/api/payments/${paymentId}`)).json(), { status: 'failed', failureCode: 'pending_expired' })
})

t.test('expiry finds the charge went through: the payment is succeeded, never failed with money taken', async (t) => {
  const clock = manualClock()
  const gateway = spyGateway(unavailable, undefined, () => ({ outcome: 'charged', chargeId: 'ch_late' }))
  const app = await buildTestApp(t, {}, { gateway, clock: clock.read })
  const outage = await app.inject(postJson('/api/payments', { amount: 7, currency: 'USD' }))
  const { pass } = serviceOn(app, gateway, clock)
  clock.now += 25 * HOUR
  t.same(await pass(), { settled: 1, stillPending: 0 })
  t.match(await app.db.payments.get(outage.json().paymentId), { status: 'succeeded' })
})

t.test('expiry finds an authorization captured in part at the PSP: the payment records the part taken, not the amount', async (t) => {
  // Simulation seed 14000030: a pending manual payment captured for 3376 of 4501 in Stripe's Dashboard was expired as if all was taken.
  const clock = manualClock()
  const gateway = spyGateway(unavailable, undefined, () => ({ outcome: 'charged', chargeId: 'ch_part', amountCapturedMinor: 500 }))
  const app = await buildTestApp(t, {}, { gateway, clock: clock.read })
  const outage = await app.inject(postJson('/api/payments', { amount: 20, currency: 'USD', captureMethod: 'manual' }))
  const { pass } = serviceOn(app, gateway, clock)
  clock.now += 25 * HOUR
  t.same(await pass(), { settled: 1, stillPending: 0 })
  t.match(await app.db.payments.get(outage.json().paymentId), { status: 'succeeded', amountMinor: 2000, amountCapturedMinor: 500, connectorReference: 'ch_part' })
})

t.test('expiry while the gateway is still unreachable: failed with gateway_unreachable and an error logged', async (t) => {
  const clock = manualClock()
  const down = spyGateway(unavailable, undefined, () => { throw new GatewayError('unavailable', 'down') })
  const app = await buildTestApp(t, {}, { gateway: down, clock: clock.read })
  const outage = await app.inject(postJson('/api/payments', { amount: 7, currency: 'USD' }))
  const { pass, logs } = serviceOn(app, down, clock)
  clock.now += 25 * HOUR
  await pass()
  t.match(await app.db.payments.get(outage.json().paymentId), { status: 'failed', failureCode: 'gateway_unreachable' })
  t.ok(logs.lines.some((line) => line.level === 'error'), 'an operator is told the outcome is unverified')
})

t.test('PENDING_PAYMENT_MAX_AGE reaches the worker through the config', async (t) => {
  const clock = manualClock()
  const gateway = spyGateway(unavailable)
  const app = await buildTestApp(t, { PENDING_PAYMENT_MAX_AGE: '600', RECOVERY_AGE_SECONDS: '60' }, { gateway, clock: clock.read })
  const outage = await app.inject(postJson('/api/payments', { amount: 7, currency: 'USD' }, 'stuck'))
  const paymentId = outage.json().paymentId
  clock.now += 11 * MINUTE
  t.same(await app.backgroundJobs.recoverPendingPayments(), { settled: 1, stillPending: 0 })
  t.match(await app.db.payments.get(paymentId), { status: 'failed', failureCode: 'pending_expired' })
  const replay = await app.inject(postJson('/api/payments', { amount: 7, currency: 'USD' }, 'stuck'))
  t.equal(replay.statusCode, 402, 'the final response is stored on the key')
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.match(replay.json(), { type: 'urn:problem-type:payment-failed', failureCode: 'pending_expired', paymentId })
})

const START = Date.parse('2026-01-01T00:00:00Z')

/** An app whose gateway is down for the first `pending` payments (left pending under keys k0…), then behaves as `later`. */
async function withPending (t: Test, pending: number, later: (request: ChargeRequest) => Promise<ChargeResult>, env: Record<string, string> = {}) {
  const clock = { now: START }
  let down = true
  const gateway = spyGateway(async (request, n) => down ? await unavailable(request, n) : await later(request))
  const app = await buildTestApp(t, env, { gateway, clock: () => clock.now })
  for (let i = 0; i < pending; i++) {
    const res = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'idempotency-key': `k${i}` }, payload: { amount: 3, currency: 'EUR' } })
    t.equal(res.statusCode, 503)
  }
  down = false
  clock.now += 3600_000
  return { app, gateway, clock }
}

const recover = async (app: App, options: Omit<RecoveryOptions, 'respond'>) => await app.payments.recoverPending({ ...options, respond: paymentResponse })
/** The key as the default test merchant's payments store it. */
const ref = async (app: App, key: string) => ({ scope: await defaultMerchantScope(app), method: 'POST', path: '/api/payments', key })

t.test('settles with at most `concurrency` gateway calls at once', async (t) => {
  let inFlight = 0
  let most = 0
  const { app } = await withPending(t, 10, async (request) => {
    inFlight++
    most = Math.max(most, inFlight)
    await sleep(30)
    inFlight--
    return { outcome: 'succeeded', chargeId: `ch_${request.idempotencyKey}` }
  })
  const result = await recover(app, { ageSeconds: 60, leaseMs: 60_000, concurrency: 3 })
  t.same(result, { settled: 10, stillPending: 0 })
  t.equal(most, 3, 'three at a time, never more')
  const replay = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'idempotency-key': 'k7' }, payload: { amount: 3, currency: 'EUR' } })
  t.equal(replay.statusCode, 201, 'the key holds the final response')
})

t.test('leases one payment at a time per lane: a slow payment holds only its own key', async (t) => {
  let releaseFirst: () => void = () => {}
  let reachedFirst: () => void = () => {}
  const firstCall = new Promise<void>((resolve) => { reachedFirst = resolve })
  let n = 0
  const later = async (request: ChargeRequest): Promise<ChargeResult> => {
    if (n++ === 0) {
      reachedFirst()
      await new Promise<void>((resolve) => { releaseFirst = resolve })
    }
    return { outcome: 'succeeded', chargeId: `ch_${request.idempotencyKey}` }
  }
  const { app } = await withPending(t, 3, later)
  const pass = recover(app, { ageSeconds: 60, leaseMs: 60_000, concurrency: 1 })
  await firstCall
  const locked = await Promise.all(['k0', 'k1', 'k2'].map(async (key) => (await app.db.idempotency.get(await ref(app, key)))?.lockedUntil !== null))
  t.same(locked.filter(Boolean).length, 1, 'only the payment being settled is leased (its key locked); the others stay free')
  releaseFirst()
  t.same(await pass, { settled: 3, stillPending: 0 })
})

t.test('stops at once when aborted: the hanging gateway call is abandoned and its key released', async (t) => {
  const { app } = await withPending(t, 2, async () => await new Promise<never>(() => {}), { GATEWAY_TIMEOUT_MS: '60000' })
  const shutdown = new AbortController()
  const pass = recover(app, { ageSeconds: 60, leaseMs: 120_000, concurrency: 4, signal: shutdown.signal })
  await sleep(100)
  const started = Date.now()
  shutdown.abort()
  const result = await pass
  t.ok(Date.now() - started < 500, `stopped in ${Date.now() - started} ms`)
  t.same(result, { settled: 0, stillPending: 2 })
  for (const key of ['k0', 'k1']) {
    t.equal((await app.db.idempotency.get(await ref(app, key)))?.lockedUntil, null, `${key} is free: a client retry resumes it at once`)
  }
  t.same(await recover(app, { ageSeconds: 60, leaseMs: 120_000, signal: shutdown.signal }), { settled: 0, stillPending: 0 }, 'an aborted worker leases nothing')
})

t.test('a pass stops at the first gateway failure instead of trying every pending payment', async (t) => {
  const { app, gateway } = await withPending(t, 6, async (request) => await unavailable(request, 0))
  const before = gateway.calls.length
  const result = await recover(app, { ageSeconds: 60, leaseMs: 60_000, concurrency: 1 })
  t.same(result, { settled: 0, stillPending: 1 })
  t.equal(gateway.calls.length - before, 1, 'one gateway call, not six')
})

t.test('app.close() during a recovery pass returns promptly', async (t) => {
  const clock = { now: START }
  let hang = false
  const gateway = spyGateway(async (request, n) => hang ? await new Promise<never>(() => {}) : await unavailable(request, n))
  const app = await buildTestApp(t, { RECOVERY_INTERVAL_MS: '20', RECOVERY_AGE_SECONDS: '1', GATEWAY_TIMEOUT_MS: '60000' }, { gateway, clock: () => clock.now })
  await app.inject({ method: 'POST', url: '/api/payments', headers: { 'idempotency-key': 'k0' }, payload: { amount: 3, currency: 'EUR' } })
  hang = true
  clock.now += 3600_000
  const inWorker = gateway.calls.length
  for (let i = 0; i < 100 && gateway.calls.length === inWorker; i++) await sleep(20)
  t.equal(gateway.calls.length, inWorker + 1, 'the worker is waiting on the gateway')
  const started = Date.now()
  await app.close()
  t.ok(Date.now() - started < 1000, `closed in ${Date.now() - started} ms`)
})
