/**
 * The deterministic simulation (world.ts) on the real service: a few seeds hold every invariant, and a bug planted on
 * purpose for each invariant is found within a bounded number of seeds. Longer runs: `npm run simulate` (CI step 9).
 */
import t, { type Test } from 'tap'
import * as domainPayments from '../../src/domain/payments'
import * as paymentServices from '../../src/services/payments'
import * as sqliteEvents from '../../src/store/sqlite/events'
import * as webhookSend from '../../src/webhooks/send'
import type { Database } from '../../src/store/types'
import { opsOf, simulate, shrink, type Op, type SimulationOptions, type SimulationResult } from './world'

const STEPS = 120

/** Replaces a module's export for the test's duration (the service calls it through the module object). */
function patch<M extends object, K extends keyof M> (t: Test, module: M, name: K, replacement: M[K]): void {
  const original = module[name]
  module[name] = replacement
  t.teardown(() => { module[name] = original })
}

/** A database whose `area` has some methods replaced (the rest as opened). */
function tampered<A extends keyof Database> (db: Database, area: A, methods: Partial<Database[A]>): Database {
  const inner = db[area] as object
  const wrapped = new Proxy(inner, { get: (target, property, receiver) => property in methods ? (methods as Record<string | symbol, unknown>)[property] : Reflect.get(target, property, receiver) })
  return new Proxy(db, { get: (target, property, receiver) => property === area ? wrapped : Reflect.get(target, property, receiver) })
}

/** Runs seeds from `first` until one violates `invariant` (or `budget` seeds pass). */
async function hunt (invariant: number, options: Partial<SimulationOptions> = {}, budget = 12, first = 1): Promise<SimulationResult | undefined> {
  for (let seed = first; seed < first + budget; seed++) {
    const result = await simulate({ seed, steps: STEPS, db: 'sqlite', ...options })
    if (result.violations.some((violation) => violation.invariant === invariant)) return result
  }
  return undefined
}

t.test('the same seed draws the same history; seeds hold every invariant on the service as it is', async (t) => {
  t.same(opsOf(7, 50), opsOf(7, 50), 'a seed is a history')
  t.not(JSON.stringify(opsOf(7, 50)), JSON.stringify(opsOf(8, 50)))
  for (const seed of [101, 102, 103]) {
    const result = await simulate({ seed, steps: STEPS, db: 'sqlite' })
    t.same(result.violations, [], `seed ${seed}`)
    t.ok((result.checks.touched_payment ?? 0) > 0 && (result.checks.quiescent_payment ?? 0) > 0, 'invariants were checked')
    t.ok(Object.keys(result.faults).length > 3, `faults injected: ${JSON.stringify(result.faults)}`)
  }
  const [first, again] = [await simulate({ seed: 101, steps: STEPS, db: 'sqlite' }), await simulate({ seed: 101, steps: STEPS, db: 'sqlite' })]
  t.equal(again.fingerprint, first.fingerprint, 'a replayed seed makes the same records (ids, states, events)')
  t.not((await simulate({ seed: 102, steps: STEPS, db: 'sqlite' })).fingerprint, first.fingerprint, 'another seed makes others')
})

t.test('regression seeds: each found a bug in the service, fixed since', async (t) => {
  // Found before customer-present payments and dashboard captures and cancels were simulated: replayed in generation 1.
  const replay = async (options: SimulationOptions): Promise<SimulationResult> => await simulate({ ...options, generation: 1 })
  // Seed 1039 (300 steps): an Adyen authorization reported for a payment expired as failed (gateway_unreachable) was
  // recorded `held`, its release failed under a fault, and nothing asked again (fixed: the recovery worker's pass).
  t.same((await replay({ seed: 1039, steps: 300, db: 'sqlite' })).violations, [], 'seed 1039')
  // Seeds 13806179 and 13806193 (150 steps, CI 2026-11-26): an Adyen payment aged past an hour by a clock jump was
  // deferred by the recovery worker for an hour, and quiescence ended 24 minutes later with it pending (fixed in the
  // simulator: quiescence's clock runs past the worker's longest back-off).
  for (const seed of [13806179, 13806193]) t.same((await replay({ seed, steps: 150, db: 'sqlite' })).violations, [], `seed ${seed}`)
  // Seeds 183704 and 2936067 (300 steps): a dispute of a payment whose capture answer was lost, or with a refund in
  // flight, was capped to what our records had left, for good (fixed: the event is answered 503 and applies when sent again).
  // Seeds 2929376 and 2457205 (300 steps): the same for a refund made in the Stripe Dashboard or Adyen's Customer Area.
  // Seeds 1656178 and 1656186 (300 steps): a pending payment expired, or canceled, whose charge had gone through was
  // recorded succeeded without its charge's reference, so the dispute or refund made at the PSP later never matched it.
  for (const seed of [183704, 2936067, 2929376, 2457205, 1656178, 1656186]) t.same((await replay({ seed, steps: 300, db: 'sqlite' })).violations, [], `seed ${seed}`)
  // Seeds 7105577 and 7105597 (1,000 steps, CI 2026-11-26): a refund made at Adyen after a dispute the PSP had already
  // reinstated (its CHARGEBACK_REVERSED not told yet) did not fit what our records left and was dropped (fixed: sent again).
  for (const seed of [7105577, 7105597]) t.same((await replay({ seed, steps: 1000, db: 'sqlite' })).violations, [], `seed ${seed}`)
  // Seed 6298015 (1,000 steps, CI 2026-11-27): an Adyen charge reported for a payment expired as failed was held and its
  // release refused while a dispute held the money; the dispute was won, and the PSP replayed the refused key for good
  // (fixed: a refusal is recorded `release_refused` and the release asked again later under a key counting refusals).
  t.same((await replay({ seed: 6298015, steps: 1000, db: 'sqlite' })).violations, [], 'seed 6298015')
})

t.test('regression seeds of generation 2 (customer-present payments, the PSPs\' dashboards): each found a bug, fixed since', async (t) => {
  // Seeds 20005 and 20047 (1,000 steps, 2026-12-05): a CAPTURE or a refund made in Adyen's Customer Area that overtook the
  // AUTHORISATION of a payment waiting for its shopper was dropped (fixed: answered 503 until the authorisation is recorded).
  // Seed 30079 (1,000 steps, 2026-12-05): an authorization reported for a failed payment was given back by a cancel, which
  // Adyen refused because it had been captured in the Customer Area meanwhile; the money stayed (fixed: refunded instead).
  // Seed 40061 (1,000 steps, 2026-12-05): the same capture of a payment whose answer was lost (its pspReference not
  // recorded) named no payment and was ignored (fixed: 503 while a payment is pending, as refunds made there).
  for (const seed of [20005, 20047, 30079, 40061]) t.same((await simulate({ seed, steps: 1000, db: 'sqlite', generation: 2 })).violations, [], `seed ${seed}`)
})

t.test('regression seeds of generation 3 (refunds made in the PSPs\' dashboards of extra charges being given back)', async (t) => {
  // Seeds 71123 and 71165 (1,000 steps, 2026-12-05; seed 7105671 of the old world before them): part of an extra Adyen
  // charge a failed payment was giving back was refunded in the Customer Area first, so the release of the whole charge
  // was refused 20 times and the rest stayed with the merchant (fixed: the release refunds what those refunds left).
  for (const seed of [71123, 71165]) t.same((await simulate({ seed, steps: 1000, db: 'sqlite', generation: 3 })).violations, [], `seed ${seed}`)
})

t.test('regression seed of generation 3 (an authorization being canceled was captured in the PSP\'s dashboard)', async (t) => {
  // Seed 9032953 (1,000 steps, CI 2026-12-06): an extra Adyen authorization's cancel was received, then refused (captured
  // in the Customer Area meanwhile, part refunded there); the refund asked instead was refused before that refund was
  // reported, and the payment counted as released for good. Fixed: a refusal after a release means held again, and an
  // authorization whose cancel was refused is refunded, not canceled again.
  t.same((await simulate({ seed: 9032953, steps: 1000, db: 'sqlite', generation: 3 })).violations, [], 'seed 9032953')
})

t.test('regression seed of generation 3 (a shopper\'s manual payment captured in part in Stripe\'s Dashboard before we heard of it)', async (t) => {
  // Seed 13550662 (1,000 steps, CI 2026-12-06): the charge call of a manual payment timed out; the shopper authorized and
  // 642 of 2566 was captured in Stripe's Dashboard; payment_intent.succeeded (amount_received 642) settled the pending
  // payment as if all 2566 were taken. Fixed: a succeeded outcome carries the part taken when it is less than the amount.
  t.same((await simulate({ seed: 13550662, steps: 1000, db: 'sqlite', generation: 3 })).violations, [], 'seed 13550662')
})

t.test('regression seed of generation 3 (a pending manual payment captured in part at Stripe, then expired)', async (t) => {
  // Seed 14000030 (1,000 steps, 2026-12-06): the charge call of a manual payment timed out; 3376 of 4501 was captured in
  // Stripe's Dashboard and the webhook was lost; the recovery worker expired the payment, its cancel found the
  // PaymentIntent succeeded, and the payment was recorded as if all 4501 were taken. Fixed: a void that finds a charge
  // says what it took when that is less than the amount.
  t.same((await simulate({ seed: 14000030, steps: 1000, db: 'sqlite', generation: 3 })).violations, [], 'seed 14000030')
})

t.test('regression seed of generation 3 (an authorization being given back was captured in part in Adyen\'s Customer Area)', async (t) => {
  // Seed 4163241 (1,000 steps, CI 2026-12-07): a failed payment's extra Adyen authorization was being canceled when 1,620
  // of it was captured in the Customer Area; the cancel was refused and the refund of the whole amount asked instead was
  // refused on every retry, so the 1,620 stayed with the merchant. Fixed: the CAPTURE is found by the charge the payment
  // holds and recorded (`held`, `captured`, its amount), and the release refunds what it took.
  t.same((await simulate({ seed: 4163241, steps: 1000, db: 'sqlite', generation: 3 })).violations, [], 'seed 4163241')
})

t.test('generation 2 adds shoppers and the PSPs\' dashboards; generation 1 keeps the histories found before', async (t) => {
  const before = opsOf(1039, 300, 1)
  t.notOk(before.some((op) => op.kind === 'shopper' || (op.kind === 'create' && op.present !== undefined)), 'generation 1 has no shoppers')
  const now = opsOf(1039, 300)
  t.ok(now.some((op) => op.kind === 'shopper') && now.some((op) => op.kind === 'create' && op.present === true), 'generation 2 sends shoppers')
  // Generation 2 draws from its own stream: apart from the steps it turns into shoppers, the history is generation 1's.
  const withoutPresence = (op: Op | undefined): string => JSON.stringify({ ...op, present: undefined })
  t.ok(now.every((op, index) => op.kind === 'shopper' || withoutPresence(op) === withoutPresence(before[index])), 'the other steps are generation 1\'s')
  const result = await simulate({ seed: 104, steps: 300, db: 'sqlite' })
  t.same(result.violations, [], 'seed 104 holds every invariant')
  t.ok((result.checks.shopper_succeed ?? 0) > 0 && (result.checks.shopper_return ?? 0) > 0, `shoppers authenticated and came back: ${JSON.stringify(result.checks)}`)
  t.ok((result.faults.capture_at_psp ?? 0) + (result.faults.cancel_at_psp ?? 0) > 0, `authorizations moved in the PSPs' dashboards: ${JSON.stringify(result.faults)}`)
})

t.test('planted: the shopper\'s return trusted for the outcome (redirect_status) → invariant 2', async (t) => {
  const original = paymentServices.paymentService
  patch(t, paymentServices, 'paymentService', (deps) => {
    const service = original(deps)
    return {
      ...service,
      completeAction: async (token, params) => {
        const payment = await service.completeAction(token, params)
        if (payment.status !== 'requires_action' || params?.redirect_status !== 'succeeded') return payment
        const at = new Date(deps.clock()).toISOString()
        return await deps.db.payments.complete({ ...domainPayments.transition(payment, 'succeeded', at), nextAction: null }, undefined, undefined, 'requires_action')
      }
    }
  })
  const found = await hunt(2)
  t.match(found?.violations.find((violation) => violation.invariant === 2)?.message, /the PSPs hold 0, our records/, 'a payment recorded as paid that the PSP never charged')
})

t.test('planted: failover after an unknown outcome (the pin reverted to the last attempt) → invariant 1', async (t) => {
  patch(t, domainPayments, 'pinnedConnector', (payment) => {
    const last = payment.attempts.at(-1)
    return last === undefined || (last.outcome !== 'not_processed' && last.outcome !== 'skipped') ? payment.connector : undefined
  })
  const found = await hunt(1)
  t.ok(found, 'a seed charges a payment twice')
  t.match(found?.violations.find((violation) => violation.invariant === 1)?.message, /authorized 2 times|after an unknown outcome/)
})

t.test('planted: a crash between the PSP call and our commit left unrecovered (no recovery worker) → invariant 2', async (t) => {
  const original = paymentServices.paymentService
  patch(t, paymentServices, 'paymentService', (deps) => ({ ...original(deps), recoverPending: async () => ({ settled: 0, stillPending: 0 }) }))
  t.ok(await hunt(2), 'a payment is left pending, or our records differ from the PSPs\'')
})

t.test('planted: an acknowledged settlement not made durable → invariant 3', async (t) => {
  let dropped = 0
  const found = await hunt(3, {
    plant: (db) => tampered(db, 'payments', {
      complete: async (final, completion, event) => {
        // Answered as settled, never written (an acknowledgement before the commit): once in a while.
        if (final.status === 'succeeded' && ++dropped % 4 === 0) return final
        return await db.payments.complete(final, completion, event)
      }
    })
  })
  t.ok(found, 'a 2xx is no longer true after a crash')
})

t.test('planted: a replay answers other bytes than the first answer → invariant 4', async (t) => {
  const found = await hunt(4, {
    plant: (db) => tampered(db, 'idempotency', {
      claim: async (...args: Parameters<Database['idempotency']['claim']>) => {
        const result = await db.idempotency.claim(...args)
        return result.kind === 'replay' ? { ...result, record: { ...result.record, response: { ...result.record.response, body: `${result.record.response.body} ` } } } : result
      }
    })
  }, 4)
  t.ok(found, 'the same key and body got two different answers')
})

t.test('planted: a refund that moves the payment off the state diagram → invariant 5', async (t) => {
  const original = domainPayments.applySucceededRefund
  patch(t, domainPayments, 'applySucceededRefund', (payment, amountMinor, at) => {
    const refunded = original(payment, amountMinor, at)
    return refunded.status === 'partially_refunded' ? { ...refunded, status: 'requires_capture' } : refunded
  })
  t.ok(await hunt(5), 'a payment moved partially_refunded → requires_capture')
})

t.test('planted: every event written twice → invariant 6', async (t) => {
  const original = sqliteEvents.sqliteOutbox
  patch(t, sqliteEvents, 'sqliteOutbox', (db) => {
    const outbox = original(db)
    return { ...outbox, appendOf: (make, stored) => { outbox.appendOf(make, stored); outbox.appendOf(make, stored) } }
  })
  const found = await hunt(6, {}, 4)
  t.ok(found, 'a payment has two events for one state change')
})

t.test('planted: some deliveries recorded as delivered without being sent → invariant 6', async (t) => {
  let calls = 0
  const original = webhookSend.sendEvent
  patch(t, webhookSend, 'sendEvent', async (client, renderData, endpoint, event, now, clock, signal) => {
    if (++calls % 7 !== 0) return await original(client, renderData, endpoint, event, now, clock, signal)
    return { receiverStatus: 200, delivered: true, gone: false, retryAfterMs: undefined, error: null, durationMs: 0, responseBody: null }
  })
  const found = await hunt(6, {}, 4)
  t.match(found?.violations.find((violation) => violation.invariant === 6)?.message, /never reached the webhook endpoint/, 'an event never reached the endpoint')
})

t.test('planted: the refund bound removed → invariant 7', async (t) => {
  patch(t, domainPayments, 'reserveRefund', (payment, amountMinor, at) => ({ ...payment, refundPendingMinor: payment.refundPendingMinor + amountMinor, updatedAt: at }))
  const found = await hunt(7)
  t.ok(found, 'a refund reached a PSP for more than was captured')
})

t.test('a failing seed shrinks to a shorter history that still fails', async (t) => {
  patch(t, domainPayments, 'reserveRefund', (payment, amountMinor, at) => ({ ...payment, refundPendingMinor: payment.refundPendingMinor + amountMinor, updatedAt: at }))
  const found = await hunt(7)
  if (found === undefined) return t.fail('no failing seed to shrink')
  const shortest = await shrink(async (ops) => await simulate({ seed: found.seed, steps: STEPS, db: 'sqlite', ops }), found.ops, 12)
  t.ok(shortest.length < found.ops.length, `${shortest.length} of ${found.ops.length} steps`)
  t.ok((await simulate({ seed: found.seed, steps: STEPS, db: 'sqlite', ops: shortest })).violations.length > 0, 'the shortest history still fails')
})
