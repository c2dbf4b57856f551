import t from 'tap'
import { buildTestApp } from '../helpers/app'
import { spyGateway, unavailable } from '../helpers/gateway'
import { manualClock, postJson } from '../helpers/payments'
import { paymentService, recoveryBackoffMs } from '../../src/services/payments'
import { renderSettled } from '../../routes/payments/responses'
import { GatewayError, type PaymentGateway } from '../../src/gateway/types'
import type { App } from '../../src/app'

const MINUTE = 60_000
const HOUR = 60 * MINUTE

function recorder () {
  const lines: Array<{ level: string, details: Record<string, unknown>, message: string }> = []
  const at = (level: string) => (details: object, message: string) => { lines.push({ level, details: details as Record<string, unknown>, message }) }
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } }
}

function serviceOn (app: App, gateway: PaymentGateway, clock: { read: () => number }) {
  const logs = recorder()
  const service = paymentService({ db: app.db, gateway, clock: clock.read, log: logs.log, renderSettled })
  const options = { ageSeconds: 120, maxAgeSeconds: 24 * 3600, leaseMs: MINUTE }
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
  const gaps = attemptTimes.slice(1).map((time, i) => time - attemptTimes[i])
  t.ok(gaps.length >= 5, `several attempts (${attemptTimes.length})`)
  t.ok(gaps.slice(0, 4).every((gap, i) => i === 0 || gap >= gaps[i - 1]), `gaps grow: ${gaps.slice(0, 6).map((g) => g / MINUTE).join(', ')} min`)
  t.ok(gaps.every((gap) => gap <= HOUR + MINUTE), 'capped at an hour')
  t.ok(attemptTimes.length < 60, `far fewer attempts than one a minute (${attemptTimes.length} in 24 h)`)

  const payment = await app.db.payments.get(paymentId)
  t.match(payment, { status: 'failed', failureCode: 'pending_expired' })
  t.same(gateway.voids, [{ chargeIdempotencyKey: `payment-${paymentId}` }], 'voided under its downstream key')
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
