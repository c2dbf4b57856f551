import t from 'tap'
import { buildTestApp } from '../../helpers/app'
import { refundUnavailable, spyGateway, unavailable } from '../../helpers/gateway'
import { createPayment, manualClock, postJson, PROBLEM, refundsOf } from '../../helpers/payments'
import { itemAt } from '../../helpers/items'

t.test('a full refund without a body: 201, Location, the payment is refunded', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, { amount: 10.1, currency: 'USD' })
  t.equal(payment.status, 201)
  const res = await app.inject({ method: 'POST', url: refundsOf(payment.id) })
  t.equal(res.statusCode, 201)
  const refund = res.json()
  t.match(refund, { paymentId: payment.id, amount: 10.1, currency: 'USD', status: 'succeeded' })
  t.notOk('reason' in refund || 'metadata' in refund, 'unset optional members are omitted')
  t.equal(res.headers.location, `/api/payments/${payment.id}/refunds/${refund.id}`)
  t.same((await app.inject(res.headers.location as string)).json(), refund, 'the Location reads the refund')
  t.same(gateway.refunds, [{ idempotencyKey: `refund-${refund.id}`, refundId: refund.id, paymentId: payment.id, chargeIdempotencyKey: `payment-${payment.id}`, chargeReference: `ch_payment-${payment.id}`, amountMinor: 1010, amount: '10.10', currency: 'USD' }])
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'refunded', amountRefunded: 10.1 })
})

t.test('partial refunds: partially_refunded, then refunded; listed newest first', async (t) => {
  const clock = manualClock()
  const app = await buildTestApp(t, {}, { gateway: spyGateway(), clock: clock.read })
  const payment = await createPayment(app, { amount: 10, currency: 'EUR' })
  const first = await app.inject(postJson(refundsOf(payment.id), { amount: 2.5, reason: 'damaged', metadata: { returnId: 'R-1' } }))
  t.equal(first.statusCode, 201)
  t.match(first.json(), { amount: 2.5, reason: 'damaged', metadata: { returnId: 'R-1' } })
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'partially_refunded', amountRefunded: 2.5 })
  clock.now += 1000
  const second = await app.inject(postJson(refundsOf(payment.id), {}))
  t.equal(second.statusCode, 201)
  t.equal(second.json().amount, 7.5, 'no amount: what remains')
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'refunded', amountRefunded: 10 })
  const list = await app.inject(refundsOf(payment.id))
  t.equal(list.statusCode, 200)
  t.same(list.json().data.map((r: { id: string }) => r.id), [second.json().id, first.json().id])
  t.equal(list.json().hasMore, false)
  const page = await app.inject(`${refundsOf(payment.id)}?limit=1`)
  t.same(page.json(), { data: [second.json()], hasMore: true })
  t.same((await app.inject(`${refundsOf(payment.id)}?limit=1&startingAfter=${second.json().id}`)).json(), { data: [first.json()], hasMore: false })
})

t.test('rules: exceeds remaining 409, unrefundable payments 409, amount and precision 400', async (t) => {
  const gateway = spyGateway((request) => request.amountMinor >= 200_000 && request.amountMinor < 300_000
    ? { outcome: 'declined', chargeId: 'c', declineCode: 'card_declined' }
    : { outcome: 'succeeded', chargeId: 'c' })
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, { amount: 10, currency: 'USD' })

  const tooMuch = await app.inject(postJson(refundsOf(payment.id), { amount: 10.01 }))
  t.equal(tooMuch.statusCode, 409)
  t.equal(tooMuch.headers['content-type'], PROBLEM)
  t.match(tooMuch.json(), { type: 'urn:problem-type:refund-exceeds-remaining', status: 409, paymentId: payment.id, requestedAmount: 10.01, remainingAmount: 10 })

  for (const [body, field] of [
    [{ amount: 0 }, 'amount'], [{ amount: -1 }, 'amount'], [{ amount: 1.001 }, 'amount'], [{ amount: '1e0' }, 'amount'], [{ amount: '1.001' }, 'amount'],
    [{ reason: '' }, 'reason'], [{ other: 1 }, 'other']
  ] as const) {
    const res = await app.inject(postJson(refundsOf(payment.id), body))
    t.equal(res.statusCode, 400, JSON.stringify(body))
    t.ok(res.json().errors[field], `errors.${field} for ${JSON.stringify(body)}`)
  }
  const literal = await app.inject(postJson(refundsOf(payment.id), '{"amount": 1.000000000000000001}'))
  t.equal(literal.statusCode, 400, 'decimals judged as written, not as parsed')

  const yen = await createPayment(app, { amount: 500, currency: 'JPY' })
  t.match((await app.inject(postJson(refundsOf(yen.id), { amount: 1.5 }))).json(), { status: 400, errors: { amount: [/whole number for JPY/] } })
  t.equal((await app.inject(postJson(refundsOf(yen.id), { amount: 1 }))).statusCode, 201)

  const declined = await createPayment(app, { amount: 2500, currency: 'USD' })
  t.equal(declined.status, 402)
  const refusedDeclined = await app.inject(postJson(refundsOf(declined.id), {}))
  t.equal(refusedDeclined.statusCode, 409)
  t.match(refusedDeclined.json(), { type: 'urn:problem-type:payment-not-refundable', paymentStatus: 'declined' })

  t.equal(gateway.refunds.length, 1, 'only the valid JPY refund reached the gateway')
})

t.test('a pending payment cannot be refunded (409)', async (t) => {
  const app = await buildTestApp(t, {}, { gateway: spyGateway(unavailable) })
  const payment = await createPayment(app, { amount: 10, currency: 'USD' })
  t.equal(payment.status, 503)
  const res = await app.inject(postJson(refundsOf(payment.id), {}))
  t.equal(res.statusCode, 409)
  t.match(res.json(), { type: 'urn:problem-type:payment-not-refundable', paymentStatus: 'pending', paymentId: payment.id })
})

t.test('unknown, foreign and malformed ids are 404', async (t) => {
  const app = await buildTestApp(t, {}, { gateway: spyGateway() })
  const a = await createPayment(app)
  const b = await createPayment(app)
  const refund = (await app.inject(postJson(refundsOf(a.id), { amount: 1 }))).json()
  for (const url of [
    refundsOf('00000000-0000-4000-8000-000000000000'),
    refundsOf('not-a-guid'),
    `${refundsOf(b.id)}/${refund.id}`,
    `${refundsOf(a.id)}/00000000-0000-4000-8000-000000000000`,
    `${refundsOf(a.id)}/${'x'.repeat(100)}`
  ]) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 404, url)
    t.equal(res.headers['content-type'], PROBLEM)
  }
  t.equal((await app.inject(postJson(refundsOf('00000000-0000-4000-8000-000000000000'), {}))).statusCode, 404)
  t.equal((await app.inject(`${refundsOf(a.id)}/${refund.id.toUpperCase()}`)).statusCode, 200, 'GUIDs are case-insensitive')
})

t.test('metadata: limits are 400 with errors.metadata, and nothing is refunded', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app)
  const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']))
  for (const metadata of [many, { ['k'.repeat(41)]: 'v' }, { k: 'v'.repeat(501) }, { k: 1 }, { k: null }, ['a'], 'text', { '': 'v' }]) {
    const res = await app.inject(postJson(refundsOf(payment.id), { amount: 1, metadata }))
    t.equal(res.statusCode, 400, JSON.stringify(metadata).slice(0, 60))
    t.ok(Array.isArray(res.json().errors?.metadata), 'errors.metadata')
  }
  const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${'k'.repeat(38)}${String(i).padStart(2, '0')}`, 'v'.repeat(500)]))
  const atLimit = await app.inject(postJson(refundsOf(payment.id), { amount: 1, metadata: fifty }))
  t.equal(atLimit.statusCode, 201, '50 keys of 40 characters with 500-character values are fine')
  t.same(atLimit.json().metadata, fifty)
  t.equal(gateway.refunds.length, 1)
})

t.test('gateway outage: 503 with Retry-After, refund pending and held; the retry resumes the same refund', async (t) => {
  const gateway = spyGateway(undefined, async (request, n) => n === 1 ? await refundUnavailable(request, n) : { outcome: 'succeeded', gatewayRefundId: 'r' })
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, { amount: 10, currency: 'USD' })
  const outage = await app.inject(postJson(refundsOf(payment.id), { amount: 4 }, 'refund-key'))
  t.equal(outage.statusCode, 503)
  t.equal(outage.headers['retry-after'], '5')
  t.match(outage.json(), { type: 'urn:problem-type:gateway-unavailable', paymentId: payment.id })
  const refundId = outage.json().refundId
  t.match((await app.inject(`${refundsOf(payment.id)}/${refundId}`)).json(), { status: 'pending', amount: 4 })
  const held = await app.inject(postJson(refundsOf(payment.id), { amount: 6.01 }))
  t.equal(held.statusCode, 409, 'the pending refund holds its amount')
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'succeeded', amountRefunded: 0 })

  const retry = await app.inject(postJson(refundsOf(payment.id), { amount: 4 }, 'refund-key'))
  t.equal(retry.statusCode, 201)
  t.equal(retry.json().id, refundId, 'the same refund')
  t.equal(gateway.refunds.length, 2)
  t.equal(itemAt(gateway.refunds, 1).idempotencyKey, itemAt(gateway.refunds, 0).idempotencyKey, 'the same downstream key')
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'partially_refunded', amountRefunded: 4 })
  const replay = await app.inject(postJson(refundsOf(payment.id), { amount: 4 }, 'refund-key'))
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.same(replay.json(), retry.json())
})

t.test('the recovery worker finishes a refund left pending', async (t) => {
  const clock = manualClock()
  const gateway = spyGateway(undefined, async (request, n) => n === 1 ? await refundUnavailable(request, n) : { outcome: 'succeeded', gatewayRefundId: 'r' })
  const app = await buildTestApp(t, { RECOVERY_AGE_SECONDS: '60' }, { gateway, clock: clock.read })
  const payment = await createPayment(app, { amount: 10, currency: 'USD' })
  const outage = await app.inject(postJson(refundsOf(payment.id), {}, 'k'))
  t.equal(outage.statusCode, 503)
  t.same(await app.backgroundJobs.recoverPendingRefunds(), { settled: 0, stillPending: 0 }, 'too young')
  clock.now += 61_000
  t.same(await app.backgroundJobs.recoverPendingRefunds(), { settled: 1, stillPending: 0 })
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'refunded', amountRefunded: 10 })
  const replay = await app.inject(postJson(refundsOf(payment.id), {}, 'k'))
  t.equal(replay.statusCode, 201, 'the key got the final response')
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.equal(replay.json().id, outage.json().refundId)
})

t.test('the gateway refuses: 402 refund-failed, the refund is failed and the amount refundable again', async (t) => {
  const gateway = spyGateway(undefined, (_request, n) => n === 1
    ? { outcome: 'failed', gatewayRefundId: 'r', failureCode: 'refund_declined' }
    : { outcome: 'succeeded', gatewayRefundId: 'r2' })
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, { amount: 10, currency: 'USD' })
  const refused = await app.inject(postJson(refundsOf(payment.id), {}, 'k1'))
  t.equal(refused.statusCode, 402)
  t.match(refused.json(), { type: 'urn:problem-type:refund-failed', failureCode: 'refund_declined', paymentId: payment.id })
  t.match((await app.inject(`${refundsOf(payment.id)}/${refused.json().refundId}`)).json(), { status: 'failed', failureCode: 'refund_declined' })
  t.same((await app.inject(postJson(refundsOf(payment.id), {}, 'k1'))).json(), refused.json(), 'replayed as stored')
  t.equal((await app.inject(postJson(refundsOf(payment.id), {}))).statusCode, 201, 'refundable again')
})

t.test('Idempotency-Key on refunds: replay, other body 409, metadata in the fingerprint, the key reused on another payment 409', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const a = await createPayment(app)
  const b = await createPayment(app)
  const first = await app.inject(postJson(refundsOf(a.id), { amount: 1, metadata: { n: '1' } }, 'same'))
  t.equal(first.statusCode, 201)
  const replay = await app.inject(postJson(refundsOf(a.id), { metadata: { n: '1' }, amount: 1 }, 'same'))
  t.equal(replay.statusCode, 201)
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.equal(replay.headers.location, first.headers.location)
  const otherMetadata = await app.inject(postJson(refundsOf(a.id), { amount: 1, metadata: { n: '2' } }, 'same'))
  t.equal(otherMetadata.statusCode, 409)
  t.equal(otherMetadata.json().type, 'urn:problem-type:idempotency-key-reused')
  const otherPayment = await app.inject(postJson(refundsOf(b.id), { amount: 1, metadata: { n: '1' } }, 'same'))
  // Keys are scoped by merchant and route pattern, and the fingerprint covers the payment id:
  // the same key on another payment's refunds is a reused key, never a replay of the first refund.
  t.equal(otherPayment.statusCode, 409, 'one key, another payment: reused, not replayed')
  t.equal(otherPayment.json().type, 'urn:problem-type:idempotency-key-reused')
  t.equal(gateway.refunds.length, 1, 'the other payment was not refunded')
  const invalid = await app.inject(postJson(refundsOf(a.id), { amount: 100 }, 'fresh'))
  t.equal(invalid.statusCode, 409)
  t.equal((await app.inject(postJson(refundsOf(a.id), { amount: 1 }, 'fresh'))).statusCode, 201, 'a refused request left the key unused')
})

t.test('20 concurrent 1.00 refunds of a 10.00 payment: exactly 10 × 201, the rest 409 (SQLite)', async (t) => {
  const gateway = spyGateway(undefined, async (request) => {
    await new Promise((resolve) => setTimeout(resolve, 5))
    return { outcome: 'succeeded', gatewayRefundId: request.idempotencyKey }
  })
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, { amount: 10, currency: 'USD' })
  const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
    await app.inject(postJson(refundsOf(payment.id), { amount: 1 }, `concurrent-${i}`))))
  const statuses = answers.map((res) => res.statusCode)
  t.equal(statuses.filter((s) => s === 201).length, 10)
  t.equal(statuses.filter((s) => s === 409).length, 10)
  t.ok(answers.filter((res) => res.statusCode === 409).every((res) => res.json().type === 'urn:problem-type:refund-exceeds-remaining' || res.json().type === 'urn:problem-type:payment-not-refundable'))
  t.equal(gateway.refunds.length, 10, 'the gateway refunded ten times, never more')
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'refunded', amountRefunded: 10 })
})

t.test('simulated gateway: deterministic refund outcomes by amount', async (t) => {
  const app = await buildTestApp(t)
  const payment = await createPayment(app, { amount: 9000, currency: 'USD' })
  t.equal(payment.status, 201)
  const unavailable = await app.inject(postJson(refundsOf(payment.id), { amount: 4001 }))
  t.equal(unavailable.statusCode, 503)
  const refused = await app.inject(postJson(refundsOf(payment.id), { amount: 4003 }))
  t.equal(refused.statusCode, 402)
  t.equal(refused.json().failureCode, 'refund_declined')
  const ok = await app.inject(postJson(refundsOf(payment.id), { amount: 10 }))
  t.equal(ok.statusCode, 201)
  t.match((await app.inject(`/api/payments/${payment.id}`)).json(), { status: 'partially_refunded', amountRefunded: 10 })
})
