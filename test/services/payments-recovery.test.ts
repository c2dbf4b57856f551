/**
 * The recovery worker (PaymentService.recoverPending): bounded concurrency, a lease per payment taken just before it is
 * settled, and a prompt stop on shutdown that abandons the gateway call and frees the key.
 */
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildTestApp, defaultMerchantScope } from '../helpers/app'
import { spyGateway, unavailable } from '../helpers/gateway'
import type { ChargeRequest, ChargeResult } from '../../src/gateway/types'
import type { App } from '../../src/app'
import type { RecoveryOptions } from '../../src/services/payments'

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

const recover = async (app: App, options: RecoveryOptions) => await app.payments.recoverPending(options)
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
