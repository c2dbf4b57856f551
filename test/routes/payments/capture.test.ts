import t from 'tap'
import { buildTestApp, merchantWithKey } from '../../helpers/app'
import { spyGateway } from '../../helpers/gateway'
import { GatewayError } from '../../../src/gateway/types'
import { createPayment, manualClock, postJson, PROBLEM, refundsOf } from '../../helpers/payments'

const captureUrl = (id: string) => `/api/payments/${id}/capture`
const cancelUrl = (id: string) => `/api/payments/${id}/cancel`
const manual = (amount: number, currency = 'USD') => ({ amount, currency, captureMethod: 'manual' })

async function eventTypes (app: Awaited<ReturnType<typeof buildTestApp>>, paymentId: string): Promise<string[]> {
  const events = (await app.inject({ method: 'GET', url: '/api/events?limit=100' })).json().data as Array<{ type: string, resource: { id: string } }>
  return events.filter((event) => event.resource.id === paymentId).map((event) => event.type).reverse()
}

t.test('a manual payment is authorized: 201 requires_capture with amountCapturable and captureBefore; payment.authorized', async (t) => {
  const clock = manualClock()
  const gateway = spyGateway((request) => ({ outcome: request.captureMethod === 'manual' ? 'authorized' : 'succeeded', chargeId: 'ch_1' }))
  const app = await buildTestApp(t, { AUTHORIZATION_TTL_SECONDS: '3600' }, { gateway, clock: clock.read })
  const res = await app.inject(postJson('/api/payments', manual(10.1)))
  t.equal(res.statusCode, 201)
  const body = res.json()
  t.match(body, { status: 'requires_capture', captureMethod: 'manual', amount: 10.1, amountCaptured: 0, amountCapturable: 10.1, captureBefore: '2026-01-01T01:00:00.000Z' })
  t.match(gateway.calls[0], { captureMethod: 'manual', amountMinor: 1010 })
  t.same(await eventTypes(app, body.id), ['payment.authorized'])
  const automatic = (await app.inject(postJson('/api/payments', { amount: 10.1, currency: 'USD' }))).json()
  t.match(automatic, { status: 'succeeded', captureMethod: 'automatic', amountCaptured: 10.1, amountCapturable: 0 })
  t.notOk('captureBefore' in automatic, 'no captureBefore for automatic capture')
  const listed = (await app.inject({ method: 'GET', url: '/api/payments?status=requires_capture' })).json().data as Array<{ id: string }>
  t.same(listed.map((payment) => payment.id), [body.id], 'the listing filter status=requires_capture')
})

t.test('captureMethod: any other value is 400 errors.captureMethod; it is part of the Idempotency-Key fingerprint', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const bad = await app.inject(postJson('/api/payments', { amount: 10, currency: 'USD', captureMethod: 'later' }))
  t.equal(bad.statusCode, 400)
  t.equal(bad.headers['content-type'], PROBLEM)
  t.ok(bad.json().errors.captureMethod, 'errors.captureMethod')
  t.equal(gateway.calls.length, 0)
  t.equal((await app.inject(postJson('/api/payments', { amount: 10, currency: 'USD' }, 'k1'))).statusCode, 201)
  const reused = await app.inject(postJson('/api/payments', manual(10), 'k1'))
  t.equal(reused.statusCode, 409)
  t.equal(reused.json().type, 'urn:problem-type:idempotency-key-reused')
})

t.test('capture (simulated gateway): full capture → succeeded; once only; refunds bounded by amountCaptured', async (t) => {
  const app = await buildTestApp(t)
  const payment = await createPayment(app, manual(10.1))
  t.equal(payment.status, 201)
  t.equal((await app.inject(postJson(refundsOf(payment.id), {}))).statusCode, 409, 'an authorization is not refundable')
  const res = await app.inject({ method: 'POST', url: captureUrl(payment.id) })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { id: payment.id, status: 'succeeded', amountCaptured: 10.1, amountCapturable: 0 })
  const again = await app.inject(postJson(captureUrl(payment.id), {}))
  t.equal(again.statusCode, 409)
  t.equal(again.headers['content-type'], PROBLEM)
  t.match(again.json(), { type: 'urn:problem-type:payment-not-capturable', paymentStatus: 'succeeded', paymentId: payment.id })
  t.same(await eventTypes(app, payment.id), ['payment.authorized', 'payment.succeeded'])
  const refund = await app.inject(postJson(refundsOf(payment.id), {}))
  t.match(refund.json(), { amount: 10.1, status: 'succeeded' })
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'refunded', amountRefunded: 10.1 })
})

t.test('partial capture: the amount reaches the gateway; the rest is released; refunds stop at the captured amount', async (t) => {
  const gateway = spyGateway(() => ({ outcome: 'authorized', chargeId: 'ch_1' }))
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, manual(10.1))
  const res = await app.inject(postJson(captureUrl(payment.id), { amount: 7.5 }))
  t.equal(res.statusCode, 200)
  t.match(res.json(), { status: 'succeeded', amount: 10.1, amountCaptured: 7.5, amountCapturable: 0 })
  t.same(gateway.captures, [{
    idempotencyKey: `payment-${payment.id}-capture-1`,
    chargeIdempotencyKey: `payment-${payment.id}`,
    chargeReference: 'ch_1',
    amountMinor: 750,
    amount: '7.50',
    currency: 'USD'
  }], 'the requested amount, not the authorized one, under a key derived from the payment')
  const tooMuch = await app.inject(postJson(refundsOf(payment.id), { amount: 8 }))
  t.equal(tooMuch.statusCode, 409)
  t.match(tooMuch.json(), { type: 'urn:problem-type:refund-exceeds-remaining', remainingAmount: 7.5 })
  t.match((await app.inject(postJson(refundsOf(payment.id), { amount: 2.5 }))).json(), { status: 'succeeded' })
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'partially_refunded', amountRefunded: 2.5 })
  t.match((await app.inject(postJson(refundsOf(payment.id), {}))).json(), { amount: 5 })
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'refunded', amountRefunded: 7.5, amountCaptured: 7.5 })
})

t.test('capture amounts: ≤ 0, too many decimals or more than capturable are 400 errors.amount and never reach the gateway', async (t) => {
  const gateway = spyGateway(() => ({ outcome: 'authorized', chargeId: 'ch_1' }))
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, manual(10.1))
  for (const body of ['{"amount":0}', '{"amount":-100}', '{"amount":10.123}', '{"amount":10.11}', '{"amount":10.100000000000000001}', '{"amount":"5."}', '{"amount":"10.123"}']) {
    const res = await app.inject(postJson(captureUrl(payment.id), body))
    t.equal(res.statusCode, 400, body)
    t.ok(res.json().errors.amount, `${body}: errors.amount`)
  }
  // The service's own guard, below the schema: a negative or zero amount never reaches the gateway.
  const owner = (await app.payments.get(payment.id)).merchantId as string
  await t.rejects(app.captures.capture({ paymentId: payment.id, amount: -100 }, undefined, owner), { code: 'VALIDATION', errors: { amount: [/greater than 0/] } })
  await t.rejects(app.captures.capture({ paymentId: payment.id, amount: 0 }, undefined, owner), { code: 'VALIDATION' })
  t.equal(gateway.captures.length, 0, 'the gateway was never asked')
  t.match(await app.payments.get(payment.id), { status: 'requires_capture', capturePendingMinor: null, captureAttempts: 0 })
  t.equal((await app.inject(postJson(captureUrl(payment.id), { amount: 10.1 }))).statusCode, 200, 'the whole amount is capturable')
})

t.test('not capturable: automatic, pending, declined, canceled → 409 with paymentStatus; unknown and another merchant\'s → 404', async (t) => {
  const app = await buildTestApp(t, { GATEWAY_TIMEOUT_MS: '50' })
  const automatic = await createPayment(app, { amount: 10, currency: 'USD' })
  const pending = await createPayment(app, manual(5001))
  const declined = await createPayment(app, manual(2500))
  t.same([automatic.status, pending.status, declined.status], [201, 503, 402])
  const notCapturable: Array<[string, string]> = [[automatic.id, 'succeeded'], [pending.id, 'pending'], [declined.id, 'declined']]
  for (const [id, status] of notCapturable) {
    const res = await app.inject(postJson(captureUrl(id), {}, `capture-${status}`))
    t.equal(res.statusCode, 409, status)
    t.match(res.json(), { type: 'urn:problem-type:payment-not-capturable', paymentStatus: status })
  }
  t.equal((await app.inject(postJson(captureUrl('00000000-0000-4000-8000-000000000000'), {}))).statusCode, 404)
  t.equal((await app.inject(postJson(captureUrl('nope'), {}))).statusCode, 404)
  const authorized = await createPayment(app, manual(10))
  const other = await merchantWithKey(app, { name: 'Other' })
  const foreign = await app.inject({ ...postJson(captureUrl(authorized.id), {}), headers: { 'content-type': 'application/json', ...other.auth } })
  t.equal(foreign.statusCode, 404, 'another merchant\'s payment is not found')
  t.equal((await app.inject({ method: 'POST', url: cancelUrl(authorized.id), headers: other.auth })).statusCode, 404, 'nor cancelable by it')
  t.match(await app.payments.get(authorized.id), { status: 'requires_capture' })
})

t.test('the gateway refuses the capture (3003.00): 402 capture-failed, still requires_capture; another capture may follow', async (t) => {
  const app = await buildTestApp(t)
  const payment = await createPayment(app, manual(3500))
  const refused = await app.inject(postJson(captureUrl(payment.id), { amount: 3003 }, 'refused'))
  t.equal(refused.statusCode, 402)
  t.equal(refused.headers['content-type'], PROBLEM)
  t.match(refused.json(), { type: 'urn:problem-type:capture-failed', paymentId: payment.id, failureCode: 'capture_declined' })
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'requires_capture', amountCapturable: 3500, amountCaptured: 0 })
  const replay = await app.inject(postJson(captureUrl(payment.id), { amount: 3003 }, 'refused'))
  t.equal(replay.statusCode, 402, 'the refusal is replayed under its key')
  t.equal(replay.headers['idempotent-replayed'], 'true')
  const next = await app.inject(postJson(captureUrl(payment.id), { amount: 3400 }, 'second'))
  t.equal(next.statusCode, 200)
  t.match(next.json(), { status: 'succeeded', amountCaptured: 3400 })
})

t.test('gateway unavailable: 503 + Retry-After, the capture stays in flight; the retry with the same key resumes it under the same downstream key', async (t) => {
  const gateway = spyGateway(() => ({ outcome: 'authorized', chargeId: 'ch_1' }), undefined, undefined, {
    capture: (request, n) => {
      if (n === 1) throw new GatewayError('unavailable', 'down')
      return { outcome: 'captured', captureId: 'cap_1', amountMinor: request.amountMinor }
    }
  })
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, manual(10))
  const outage = await app.inject(postJson(captureUrl(payment.id), { amount: 6 }, 'k'))
  t.equal(outage.statusCode, 503)
  t.equal(outage.headers['retry-after'], '5')
  t.match(outage.json(), { type: 'urn:problem-type:gateway-unavailable', paymentId: payment.id })
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'requires_capture', amountCaptured: 0 })
  const other = await app.inject(postJson(captureUrl(payment.id), { amount: 6 }, 'another-key'))
  t.equal(other.statusCode, 409, 'a capture with another key is refused while one is in flight')
  const retry = await app.inject(postJson(captureUrl(payment.id), { amount: 6 }, 'k'))
  t.equal(retry.statusCode, 200)
  t.match(retry.json(), { status: 'succeeded', amountCaptured: 6 })
  t.same(gateway.captures.map((c) => [c.idempotencyKey, c.amountMinor]), [[`payment-${payment.id}-capture-1`, 600], [`payment-${payment.id}-capture-1`, 600]])
  const replay = await app.inject(postJson(captureUrl(payment.id), { amount: 6 }, 'k'))
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.equal(gateway.captures.length, 2, 'a replay asks nothing')
})

t.test('20 concurrent captures with different keys (SQLite): exactly one 200 and 19 × 409; the gateway is asked once', async (t) => {
  const gateway = spyGateway(() => ({ outcome: 'authorized', chargeId: 'ch_1' }), undefined, undefined, {
    capture: async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 20))
      return { outcome: 'captured', captureId: 'cap', amountMinor: request.amountMinor }
    }
  })
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, manual(10))
  const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
    await app.inject(postJson(captureUrl(payment.id), { amount: 10 - i * 0.25 }, `capture-${i}`))))
  t.equal(answers.filter((res) => res.statusCode === 200).length, 1, 'one capture')
  const refused = answers.filter((res) => res.statusCode === 409)
  t.equal(refused.length, 19, 'the rest are 409')
  t.ok(refused.every((res) => res.json().type === 'urn:problem-type:payment-not-capturable'))
  t.equal(gateway.captures.length, 1, 'the gateway was asked once')
})

t.test('cancel of an authorization voids it: canceled, cancellationReason requested, payment.canceled; then not capturable', async (t) => {
  const app = await buildTestApp(t)
  const payment = await createPayment(app, manual(10))
  const res = await app.inject({ method: 'POST', url: cancelUrl(payment.id) })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { status: 'canceled', cancellationReason: 'requested', amountCapturable: 0, amountCaptured: 0 })
  t.equal((await app.inject({ method: 'POST', url: cancelUrl(payment.id) })).statusCode, 200, 'idempotent')
  const capture = await app.inject(postJson(captureUrl(payment.id), {}))
  t.equal(capture.statusCode, 409)
  t.match(capture.json(), { paymentStatus: 'canceled' })
  t.same(await eventTypes(app, payment.id), ['payment.authorized', 'payment.canceled'])
  t.match(await app.gateway.retrieve({ chargeIdempotencyKey: `payment-${payment.id}` }), { state: 'voided' }, 'released at the gateway')
  const captured = await createPayment(app, manual(10))
  await app.inject(postJson(captureUrl(captured.id), {}))
  const late = await app.inject({ method: 'POST', url: cancelUrl(captured.id) })
  t.equal(late.statusCode, 409, 'a captured payment is not cancelable')
  t.match(late.json(), { type: 'urn:problem-type:payment-not-cancelable', paymentStatus: 'succeeded' })
})

t.test('expiry: past captureBefore a capture is 409; the recovery worker voids it: canceled, authorization_expired', async (t) => {
  const clock = manualClock()
  const app = await buildTestApp(t, { AUTHORIZATION_TTL_SECONDS: '60', RECOVERY_INTERVAL_MS: '0' }, { clock: clock.read })
  const payment = await createPayment(app, manual(10))
  const kept = await createPayment(app, manual(20))
  clock.now += 30_000
  t.same(await app.backgroundJobs.recoverAuthorizations(), { captured: 0, expired: 0, stillPending: 0 }, 'nothing due before captureBefore')
  t.equal((await app.inject(postJson(captureUrl(kept.id), {}))).statusCode, 200, 'captured in time')
  clock.now += 31_000
  const late = await app.inject(postJson(captureUrl(payment.id), {}))
  t.equal(late.statusCode, 409)
  t.match(late.json(), { type: 'urn:problem-type:payment-not-capturable', paymentStatus: 'requires_capture', detail: /captureBefore/ })
  t.same(await app.backgroundJobs.recoverAuthorizations(), { captured: 0, expired: 1, stillPending: 0 })
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'canceled', cancellationReason: 'authorization_expired' })
  t.match((await app.inject(`/api/payments/${kept.id}`)).json(), { status: 'succeeded' }, 'a captured payment is not touched')
  t.same(await eventTypes(app, payment.id), ['payment.authorized', 'payment.canceled'])
  t.match(await app.gateway.retrieve({ chargeIdempotencyKey: `payment-${payment.id}` }), { state: 'voided' })
})

t.test('recovery finishes a capture left in flight: reads the gateway first, captures only while uncaptured, stores the key\'s answer', async (t) => {
  const clock = manualClock()
  let captured: number | undefined
  const gateway = spyGateway(() => ({ outcome: 'authorized', chargeId: 'ch_1' }), undefined, undefined, {
    capture: async (request, n) => {
      captured = request.amountMinor // the gateway captures, then the answer is lost (the first time)
      if (n === 1) throw new GatewayError('timeout', 'lost')
      return { outcome: 'captured', captureId: 'cap_1', amountMinor: request.amountMinor }
    },
    retrieve: (request) => captured === undefined
      ? { state: 'authorized', chargeId: request.chargeIdempotencyKey, amountMinor: 1000 }
      : { state: 'captured', chargeId: request.chargeIdempotencyKey, amountCapturedMinor: captured }
  })
  const app = await buildTestApp(t, { RECOVERY_AGE_SECONDS: '60', RECOVERY_INTERVAL_MS: '0' }, { gateway, clock: clock.read })
  const payment = await createPayment(app, manual(10))
  t.equal((await app.inject(postJson(captureUrl(payment.id), { amount: 4 }, 'lost'))).statusCode, 503)
  t.same(await app.backgroundJobs.recoverAuthorizations(), { captured: 0, expired: 0, stillPending: 0 }, 'not before RECOVERY_AGE_SECONDS')
  clock.now += 61_000
  t.same(await app.backgroundJobs.recoverAuthorizations(), { captured: 1, expired: 0, stillPending: 0 })
  t.equal(gateway.captures.length, 1, 'not captured again: the gateway said it was')
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'succeeded', amountCaptured: 4 })
  const replay = await app.inject(postJson(captureUrl(payment.id), { amount: 4 }, 'lost'))
  t.equal(replay.statusCode, 200)
  t.equal(replay.headers['idempotent-replayed'], 'true', 'the key got the recovered answer')
  t.same(await eventTypes(app, payment.id), ['payment.authorized', 'payment.succeeded'])
})
