/**
 * Property-based tests of the payment-lifecycle routes (refunds, listing, cancel, metadata): every
 * answer keeps the contract of test/helpers/fuzz.ts (no 5xx, documented status, body valid against
 * openapi.yaml, the area's content type), and money is never refunded beyond the payment's amount.
 * Reproducible with FUZZ_SEED=<n>; FUZZ_SCALE=<x> multiplies the cases.
 */
import t, { type Test } from 'tap'
import fc from 'fast-check'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildTestApp } from '../helpers/app'
import { spyGateway } from '../helpers/gateway'
import { FUZZ_SEED, contentType, headers, hostileJson, idempotencyKey, nastyString, nastyValue, pathSegment, runs, send } from '../helpers/fuzz'
import type { App } from '../../app/app'

let property = 0

async function fuzzApp (t: Test): Promise<{ app: App, inject: (opts: InjectOptions) => Promise<LightMyRequestResponse> }> {
  const gateway = spyGateway(undefined, (request) => request.amountMinor % 7 === 0
    ? { outcome: 'failed', gatewayRefundId: 'r', failureCode: 'refund_declined' }
    : { outcome: 'succeeded', gatewayRefundId: request.idempotencyKey })
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '1000000000' }, { gateway }, { validateResponses: false })
  return { app, inject: async (opts) => await app.inject(opts) }
}

async function check<T> (t: Test, name: string, arbitrary: fc.Arbitrary<T>, numRuns: number, predicate: (value: T) => Promise<void>): Promise<void> {
  const seed = FUZZ_SEED + 1000 + property++
  const details = await fc.check(fc.asyncProperty(arbitrary, predicate), { seed, numRuns, endOnFailure: false })
  if (details.failed) {
    const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
    t.fail(`${name}: ${error}\n${fc.defaultReportMessage(details) ?? 'failed'}\nreplay: FUZZ_SEED=${FUZZ_SEED} (property seed ${seed})`)
  } else {
    t.pass(`${name}: ${details.numRuns} cases (seed ${seed})`)
  }
}

async function newPayment (app: App, amount = 1000): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'content-type': 'application/json' }, payload: { amount, currency: 'USD', metadata: { fuzz: 'yes' } } })
  return res.json().id as string
}

const metadataValue = (): fc.Arbitrary<unknown> => fc.oneof(
  fc.dictionary(fc.string({ maxLength: 45 }), fc.string({ maxLength: 510 }), { maxKeys: 55 }),
  fc.dictionary(nastyString(), nastyValue(), { maxKeys: 4 }),
  nastyValue()
)

t.test('refunds: POST with mutated bodies, metadata, keys and ids; never more refunded than charged', async (t) => {
  const { app, inject } = await fuzzApp(t)
  const payments = [await newPayment(app, 1000), await newPayment(app, 3), await newPayment(app, 0.07)]
  const arbitrary = fc.record({
    payment: fc.constantFrom(...payments),
    idVariant: fc.constantFrom('same', 'upper', 'other'),
    other: pathSegment(fc.uuid()),
    type: contentType('application/json'),
    body: fc.oneof(hostileJson({ amount: 0.5, reason: 'requested_by_customer' }, ['metadata']), fc.record({ amount: fc.oneof(fc.double({ min: -1, max: 20, noNaN: true }), fc.integer({ min: 1, max: 5 })), metadata: metadataValue() }).map((b) => JSON.stringify(b)), fc.constant(undefined)),
    key: idempotencyKey()
  })
  await check(t, 'POST /api/payments/{id}/refunds', arbitrary, runs(600), async (r) => {
    const id = r.idVariant === 'same' ? r.payment : r.idVariant === 'upper' ? r.payment.toUpperCase() : r.other
    const res = await send(inject, {
      method: 'POST',
      url: `/api/payments/${id}/refunds`,
      headers: headers({ 'content-type': r.body === undefined ? undefined : r.type, 'idempotency-key': r.key }),
      payload: r.body
    })
    if (res.statusCode === 201) {
      const read = await send(inject, { method: 'GET', url: String(res.headers.location) })
      if (read.statusCode !== 200 || read.json().id !== res.json().id) throw new Error(`Location does not lead to the refund: ${read.statusCode} ${read.body}`)
    }
    const payment = await app.db.payments.get(r.payment)
    if (payment === undefined || payment.amountRefundedMinor + payment.refundPendingMinor > payment.amountMinor) {
      throw new Error(`refunded beyond the amount: ${JSON.stringify(payment)}`)
    }
    const expected = payment.amountRefundedMinor === 0 ? 'succeeded' : payment.amountRefundedMinor === payment.amountMinor ? 'refunded' : 'partially_refunded'
    if (payment.status !== expected) throw new Error(`status ${payment.status} does not match amountRefunded ${payment.amountRefundedMinor}`)
  })
})

t.test('listing: GET /api/payments, /refunds and /merchants with any query', async (t) => {
  const { app, inject } = await fuzzApp(t)
  const ids = [await newPayment(app), await newPayment(app), await newPayment(app)]
  await app.inject({ method: 'POST', url: `/api/payments/${ids[0]}/refunds`, headers: { 'content-type': 'application/json' }, payload: { amount: 1 } })
  const value = fc.oneof(fc.constantFrom(...ids, '0', '1', '10', '100', '101', '-1', '1.5', '1e2', '', 'succeeded', 'pending', 'refunded', '2026-01-01T00:00:00Z', '2026-99-01', 'null', '%zz'), nastyString())
  const member = fc.constantFrom('limit', 'startingAfter', 'endingBefore', 'status', 'createdGte', 'createdLt', 'other', '__proto__', 'limit[]')
  const arbitrary = fc.record({
    path: fc.constantFrom('/api/payments', `/api/payments/${ids[0]}/refunds`, '/merchants', `/api/payments/${ids[1]}/refunds`),
    query: fc.array(fc.tuple(member, value), { maxLength: 4 })
  })
  await check(t, 'GET lists', arbitrary, runs(600), async (r) => {
    // Lone surrogates cannot be percent-encoded: they go as the replacement character's bytes would.
    const encode = (text: string): string => { try { return encodeURIComponent(text) } catch { return '%EF%BF%BD' } }
    const query = r.query.map(([k, v]) => `${encode(k)}=${v === '%zz' ? v : encode(v)}`).join('&')
    const res = await send(inject, { method: 'GET', url: `${r.path}${query === '' ? '' : `?${query}`}` })
    if (res.statusCode === 200) {
      const page = res.json() as { data: Array<{ createdAt: string, id: string }>, hasMore: boolean }
      for (const [i, b] of page.data.entries()) {
        const a = page.data[i - 1]
        if (a === undefined) continue
        if (a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)) throw new Error('a page is not newest first')
      }
    }
  })
})

t.test('refund reads and cancel with any ids', async (t) => {
  const { app, inject } = await fuzzApp(t)
  const id = await newPayment(app)
  const refund = (await app.inject({ method: 'POST', url: `/api/payments/${id}/refunds`, headers: { 'content-type': 'application/json' }, payload: { amount: 2 } })).json().id as string
  const arbitrary = fc.record({
    kind: fc.constantFrom('refund', 'cancel', 'refunds'),
    payment: pathSegment(fc.uuid(), fc.constant(id)),
    refund: pathSegment(fc.uuid(), fc.constant(refund), fc.constant(refund.toUpperCase()))
  })
  await check(t, 'GET refund / POST cancel', arbitrary, runs(500), async (r) => {
    if (r.kind === 'cancel') await send(inject, { method: 'POST', url: `/api/payments/${r.payment}/cancel` })
    else if (r.kind === 'refunds') await send(inject, { method: 'GET', url: `/api/payments/${r.payment}/refunds` })
    else await send(inject, { method: 'GET', url: `/api/payments/${r.payment}/refunds/${r.refund}` })
  })
})

t.test('merchants: metadata merge patches; what is stored reads back the same', async (t) => {
  const { app, inject } = await fuzzApp(t)
  const created = await app.inject({ method: 'POST', url: '/merchants', headers: { 'content-type': 'application/json' }, payload: { name: 'F', email: 'fuzz@example.com', metadata: { a: '1' } } })
  const id = created.json().id as string
  const arbitrary = fc.record({
    metadata: fc.oneof(metadataValue(), fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.option(fc.string({ maxLength: 5 }), { nil: null }), { maxKeys: 6 })),
    type: contentType('application/merge-patch+json')
  })
  await check(t, 'PATCH /merchants/{id} metadata', arbitrary, runs(500), async (r) => {
    const res = await send(inject, { method: 'PATCH', url: `/merchants/${id}`, headers: headers({ 'content-type': r.type }), payload: JSON.stringify({ metadata: r.metadata }) })
    if (res.statusCode === 200) {
      const read = await send(inject, { method: 'GET', url: `/merchants/${id}` })
      if (JSON.stringify(read.json().metadata) !== JSON.stringify(res.json().metadata)) throw new Error(`metadata does not read back: ${read.body} vs ${res.body}`)
    }
  })
})
