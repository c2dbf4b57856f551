/**
 * Property-based tests: every route keeps its contract under random and mutated input (bodies,
 * content types, header values, path segments, methods). See assertContract for the invariants.
 *
 * Reproducible: the seed is fixed (printed below); FUZZ_SEED=<n> runs another one, FUZZ_SCALE=<x>
 * multiplies the number of cases. A failure prints the seed, the path and the shrunk request.
 */
import t, { type Test } from 'tap'
import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildTestApp } from '../helpers/app'
import { spyGateway } from '../helpers/gateway'
import {
  FUZZ_SCALE,
  FUZZ_SEED,
  anyMethod,
  contentType,
  entityTags,
  headers,
  headerValue,
  hostileJson,
  idempotencyKey,
  nastyValue,
  pathSegment,
  requestId,
  runs,
  send,
  toJson,
  type Sent
} from '../helpers/fuzz'
import type { App } from '../../app/app'

const ENV = { RATE_LIMIT_MAX: '1000000000' }
let total = 0
let property = 0

t.comment(`fuzz seed ${FUZZ_SEED} (override with FUZZ_SEED=<integer>, scale with FUZZ_SCALE=<factor>)`)
if (FUZZ_SCALE > 1) t.setTimeout(Math.ceil(180_000 * FUZZ_SCALE))

/** One app per property, without the per-response t.fail wrapper: a broken contract throws so fast-check can shrink it. */
async function fuzzApp (t: Test): Promise<{ app: App, inject: (opts: InjectOptions) => Promise<LightMyRequestResponse> }> {
  const app = await buildTestApp(t, ENV, { gateway: spyGateway() }, { validateResponses: false })
  return { app, inject: async (opts) => await app.inject(opts) }
}

async function check<T> (t: Test, name: string, arbitrary: fc.Arbitrary<T>, numRuns: number, predicate: (value: T) => Promise<void>): Promise<void> {
  const seed = FUZZ_SEED + property++
  let cases = 0
  const details = await fc.check(fc.asyncProperty(arbitrary, async (value) => { cases++; await predicate(value) }), { seed, numRuns, endOnFailure: false })
  total += cases
  if (details.failed) {
    const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
    t.fail(`${name}: ${error}\n${fc.defaultReportMessage(details) ?? 'failed'}\nreplay: FUZZ_SEED=${FUZZ_SEED} (property seed ${seed}, path ${String(details.counterexamplePath)})`)
  } else {
    t.pass(`${name}: ${details.numRuns} cases (seed ${seed})`)
  }
}

/** Same JSON value (member order may differ between the serializers of a write and a read). */
function sameJson (a: string, b: string): boolean {
  return isDeepStrictEqual(JSON.parse(a), JSON.parse(b))
}

const productId = fc.stringMatching(/^[A-Za-z0-9._~-]{1,64}$/)
const validProduct = { name: 'Espresso cup', price: 12.5 }
const validPayment = { amount: 10.1, currency: 'USD' }
const validMerchant = { name: 'Blue Bottle', email: 'ops@bluebottle.example', country: 'US', defaultCurrency: 'USD' }

t.test('products: GET and HEAD with any id and headers', async (t) => {
  const { app, inject } = await fuzzApp(t)
  await app.inject({ method: 'PUT', url: '/products/sku-1', payload: validProduct })
  const arbitrary = fc.record({
    method: fc.constantFrom('GET', 'HEAD'),
    id: pathSegment(productId, fc.constant('sku-1')),
    query: fc.option(fc.constantFrom('?x=1', '?__proto__[polluted]=1', '?constructor[prototype][polluted]=1', '?a=%zz', '?' + 'q'.repeat(3000)), { nil: '' }),
    requestId: requestId(),
    ifNoneMatch: entityTags()
  })
  await check(t, 'GET /products/{id}', arbitrary, runs(1200), async (r) => {
    const sent: Sent = { method: r.method, url: `/products/${r.id}${r.query}`, headers: headers({ 'x-request-id': r.requestId, 'if-none-match': r.ifNoneMatch }) }
    await send(inject, sent)
  })
})

t.test('products: PUT with mutated bodies, content types and ids; what is stored reads back the same', async (t) => {
  const { inject } = await fuzzApp(t)
  const arbitrary = fc.record({
    id: pathSegment(productId),
    type: contentType('application/json'),
    body: hostileJson(validProduct, ['id']),
    requestId: requestId()
  })
  await check(t, 'PUT /products/{id}', arbitrary, runs(1600), async (r) => {
    const sent: Sent = { method: 'PUT', url: `/products/${r.id}`, headers: headers({ 'content-type': r.type, 'x-request-id': r.requestId }), payload: r.body }
    const res = await send(inject, sent)
    if (res.statusCode === 200) {
      const read = await send(inject, { method: 'GET', url: `/products/${r.id}` })
      if (read.statusCode !== 200 || !sameJson(read.body, res.body)) {
        throw new Error(`stored product does not read back as answered:\n  PUT → ${res.body}\n  GET → ${read.statusCode} ${read.body}`)
      }
    }
  })
})

t.test('products: every other method answers 405 (or 404 off the product path)', async (t) => {
  const { inject } = await fuzzApp(t)
  const arbitrary = fc.record({
    method: anyMethod().filter((method) => !['GET', 'HEAD', 'PUT'].includes(method)),
    id: pathSegment(productId),
    type: contentType('application/json'),
    body: fc.option(hostileJson(validProduct), { nil: undefined })
  })
  await check(t, 'other methods on /products/{id}', arbitrary, runs(800), async (r) => {
    await send(inject, { method: r.method, url: `/products/${r.id}`, headers: headers({ 'content-type': r.body === undefined ? undefined : r.type }), payload: r.body })
  })
})

t.test('payments: POST with mutated bodies, content types, Idempotency-Keys and request ids', async (t) => {
  const { inject } = await fuzzApp(t)
  const arbitrary = fc.record({
    type: contentType('application/json'),
    body: hostileJson(validPayment),
    key: idempotencyKey(),
    requestId: requestId(),
    path: fc.constantFrom('/api/payments', '/api/payments', '/api/payments', '/api/payments?x=1', '/api/payments/', '/api/payments//', '/api//payments', '/API/payments')
  })
  await check(t, 'POST /api/payments', arbitrary, runs(1600), async (r) => {
    const res = await send(inject, {
      method: 'POST',
      url: r.path,
      headers: headers({ 'content-type': r.type, 'idempotency-key': r.key, 'x-request-id': r.requestId }),
      payload: r.body
    })
    if (res.statusCode === 201) {
      const location = String(res.headers.location)
      const read = await send(inject, { method: 'GET', url: location })
      if (read.statusCode !== 200 || read.json().id !== res.json().id || !location.endsWith(res.json().id)) {
        throw new Error(`Location ${location} does not lead to the payment: ${read.statusCode} ${read.body}`)
      }
    }
  })
})

t.test('payments: GET with any id', async (t) => {
  const { app, inject } = await fuzzApp(t)
  const created = await app.inject({ method: 'POST', url: '/api/payments', payload: validPayment })
  const id = created.json().id as string
  const arbitrary = fc.record({
    method: fc.constantFrom('GET', 'HEAD'),
    id: pathSegment(fc.uuid(), fc.constant(id), fc.constant(id.toUpperCase())),
    requestId: requestId()
  })
  await check(t, 'GET /api/payments/{id}', arbitrary, runs(1000), async (r) => {
    await send(inject, { method: r.method, url: `/api/payments/${r.id}`, headers: headers({ 'x-request-id': r.requestId }) })
  })
})

t.test('merchants: POST with mutated bodies, content types and Idempotency-Keys; what is stored reads back the same', async (t) => {
  const { inject } = await fuzzApp(t)
  let n = 0
  const arbitrary = fc.record({
    type: contentType('application/json'),
    body: hostileJson(validMerchant, ['status', 'id', 'createdAt', 'updatedAt']),
    key: idempotencyKey(),
    requestId: requestId(),
    fresh: fc.boolean()
  })
  await check(t, 'POST /merchants', arbitrary, runs(1600), async (r) => {
    // Half of the cases get an unused email so that creation succeeds often, not only the first time.
    const body = r.fresh ? r.body.replace('ops@bluebottle.example', `ops${n++}@bluebottle.example`) : r.body
    const res = await send(inject, { method: 'POST', url: '/merchants', headers: headers({ 'content-type': r.type, 'idempotency-key': r.key, 'x-request-id': r.requestId }), payload: body })
    if (res.statusCode === 201) {
      const read = await send(inject, { method: 'GET', url: String(res.headers.location) })
      if (read.statusCode !== 200 || !sameJson(read.body, res.body) || read.headers.etag !== res.headers.etag) {
        throw new Error(`stored merchant does not read back as answered:\n  POST → ${res.body} ${String(res.headers.etag)}\n  GET → ${read.statusCode} ${read.body} ${String(read.headers.etag)}`)
      }
    }
  })
})

t.test('merchants: GET with any id and If-None-Match', async (t) => {
  const { app, inject } = await fuzzApp(t)
  const id = (await app.inject({ method: 'POST', url: '/merchants', payload: validMerchant })).json().id as string
  const arbitrary = fc.record({
    method: fc.constantFrom('GET', 'HEAD'),
    id: pathSegment(fc.uuid(), fc.constant(id), fc.constant(id.toUpperCase())),
    ifNoneMatch: entityTags(),
    requestId: requestId()
  })
  await check(t, 'GET /merchants/{id}', arbitrary, runs(1000), async (r) => {
    await send(inject, { method: r.method, url: `/merchants/${r.id}`, headers: headers({ 'if-none-match': r.ifNoneMatch, 'x-request-id': r.requestId }) })
  })
})

t.test('merchants: PATCH with mutated patches, content types and If-Match', async (t) => {
  const { app, inject } = await fuzzApp(t)
  const id = (await app.inject({ method: 'POST', url: '/merchants', payload: validMerchant })).json().id as string
  await app.inject({ method: 'POST', url: '/merchants', payload: { name: 'Other', email: 'taken@example.com' } })
  const validPatch = { name: 'Renamed', email: 'new@example.com', country: null, defaultCurrency: 'EUR', status: 'suspended' }
  const arbitrary = fc.record({
    id: pathSegment(fc.constant(id), fc.uuid()),
    type: contentType('application/merge-patch+json'),
    body: fc.oneof(hostileJson(validPatch, ['id', 'createdAt', 'updatedAt', 'email']), fc.constant('{"email":"taken@example.com"}'), fc.constant('{}')),
    ifMatch: entityTags(),
    requestId: requestId()
  })
  await check(t, 'PATCH /merchants/{id}', arbitrary, runs(1600), async (r) => {
    const res = await send(inject, { method: 'PATCH', url: `/merchants/${r.id}`, headers: headers({ 'content-type': r.type, 'if-match': r.ifMatch, 'x-request-id': r.requestId }), payload: r.body })
    if (res.statusCode === 200) {
      const read = await send(inject, { method: 'GET', url: `/merchants/${r.id}` })
      if (read.statusCode !== 200 || !sameJson(read.body, res.body) || read.headers.etag !== res.headers.etag) {
        throw new Error(`patched merchant does not read back as answered:\n  PATCH → ${res.body}\n  GET → ${read.statusCode} ${read.body}`)
      }
    }
  })
})

t.test('any method on any path: health, unknown paths, area roots', async (t) => {
  const { inject } = await fuzzApp(t)
  const segment = pathSegment(fc.constantFrom('health', 'live', 'ready', 'products', 'api', 'payments', 'merchants', 'docs', ''))
  const arbitrary = fc.record({
    method: anyMethod(),
    path: fc.oneof(
      fc.constantFrom('/health/live', '/health/ready', '/', '/api', '/api/', '/products', '/products/', '/merchants/', '/nope', '//', '/products/a/b', '/api/payments/a/b', '/merchants/a/b', '/health', '/health/', '/%zz'),
      fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => `/${segments.join('/')}`)
    ).filter((path) => !path.startsWith('/docs')),
    type: contentType('application/json'),
    body: fc.option(nastyValue().map(toJson), { nil: undefined }),
    requestId: requestId(),
    header: fc.option(headerValue(2000), { nil: undefined })
  })
  await check(t, 'any method, any path', arbitrary, runs(1000), async (r) => {
    await send(inject, {
      method: r.method,
      url: r.path,
      headers: headers({ 'content-type': r.body === undefined ? undefined : r.type, 'x-request-id': r.requestId, 'x-anything': r.header }),
      payload: r.body
    })
  })
})

t.test('the fuzz runs at least 10,000 generated cases', async (t) => {
  t.comment(`fuzz: ${total} generated cases with seed ${FUZZ_SEED}`)
  t.ok(total >= 10_000 || FUZZ_SCALE < 1, `${total} cases`)
})
