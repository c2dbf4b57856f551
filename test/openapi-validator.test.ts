/**
 * The response validator (test/helpers/openapi-validator.ts) fails what openapi.yaml does not
 * document, and buildTestApp wires it to every app.inject response.
 */
import t, { type Test } from 'tap'
import { buildTestApp, checkResponsesAgainstOpenApi } from './helpers/app'
import { openApiValidator, type ResponseLike } from './helpers/openapi-validator'
import { buildApp } from '../app/app'
import { testConfig } from './helpers/app'

const JSON_UTF8 = 'application/json; charset=utf-8'
const PROBLEM = 'application/problem+json; charset=utf-8'
const PAYMENT_ID = '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f'

/** The headers every answer carries (X-Request-Id, Cache-Control), plus `extra`. */
function response (statusCode: number, contentType: string | undefined, body: unknown, extra: Record<string, string> = {}): ResponseLike {
  return {
    statusCode,
    headers: { 'x-request-id': 'r1', 'cache-control': 'no-store', 'api-version': '2026-11-25', ...(contentType === undefined ? {} : { 'content-type': contentType }), ...extra },
    body: typeof body === 'string' ? body : JSON.stringify(body)
  }
}

const productRead = { etag: '"abc"', 'cache-control': 'public, max-age=0, must-revalidate' }

const payment = { id: PAYMENT_ID, status: 'succeeded', amount: 10.1, currency: 'USD', amountRefunded: 0, captureMethod: 'automatic', amountCaptured: 10.1, amountCapturable: 0, connector: { id: null, type: 'simulated' }, attempts: [], createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' }
const problem = { type: 'about:blank', title: 'Not Found', status: 404, instance: '/api/payments/x', traceId: 'r1' }

t.test('documented responses pass: $refs to components, inline schemas, media types with parameters, HEAD, 304', async (t) => {
  const v = openApiValidator()
  t.same(v.check('GET', '/products/a', response(200, JSON_UTF8, { id: 'a', name: 'Cup', price: 1 }, productRead)).errors, [])
  t.same(v.check('GET', '/products/a?x=1', response(404, JSON_UTF8, { error: 'product not found', code: 'NOT_FOUND' })).errors, [])
  t.same(v.check('POST', '/api/payments', response(201, JSON_UTF8, payment, { location: `/api/payments/${PAYMENT_ID}` })).errors, [])
  t.same(v.check('GET', `/api/payments/${PAYMENT_ID}`, response(404, PROBLEM, problem)).errors, [])
  t.same(v.check('GET', '/health/ready', response(503, JSON_UTF8, { status: 'unavailable', checks: { database: 'unreachable' } })).errors, [])
  t.same(v.check('HEAD', '/products/a', response(200, JSON_UTF8, '', productRead)).errors, [], 'HEAD without a body')
  t.same(v.check('GET', `/merchants/${PAYMENT_ID}`, response(304, undefined, '', { etag: '"3"' })).errors, [], '304 has no body')
  t.equal(v.findOperation('HEAD', '/products/a')?.name, 'HEAD /products/{id}', 'HEAD is documented where served')
  t.same(v.documentedStatuses('PUT', '/products/a'), [200, 400, 401, 403, 405, 412, 413, 415, 429, 500, 503])
  t.equal(v.documentedStatuses('TRACE', '/products/a'), undefined, 'a method the path does not document')
})

t.test('an undocumented status, member, content type or shape fails', async (t) => {
  const v = openApiValidator()
  const cases: Array<[string, string, string, ResponseLike, RegExp]> = [
    ['undocumented status', 'GET', '/products/a', response(418, JSON_UTF8, { error: 'x', code: 'X' }), /status 418 is not documented/],
    ['undocumented 5xx', 'GET', '/products/a', response(502, JSON_UTF8, { error: 'x', code: 'X' }), /status 502 is not documented/],
    ['an extra member', 'GET', '/products/a', response(200, JSON_UTF8, { id: 'a', name: 'Cup', price: 1, secret: 's' }), /must NOT have additional properties/],
    ['a missing member', 'GET', '/products/a', response(200, JSON_UTF8, { id: 'a', name: 'Cup' }), /must have required property 'price'/],
    ['a wrong type', 'POST', '/api/payments', response(201, JSON_UTF8, { ...payment, amount: '10.1' }), /body\/amount must be number/],
    ['a bad format', 'POST', '/api/payments', response(201, JSON_UTF8, { ...payment, id: 'nope' }), /must match format "uuid"/],
    ['an unknown enum value', 'POST', '/api/payments', response(201, JSON_UTF8, { ...payment, status: 'chargeback' }), /must be equal to one of the allowed values/],
    ['a problem where an envelope is documented', 'GET', '/products/a', response(404, PROBLEM, problem), /content-type application\/problem\+json is not documented/],
    ['an envelope where a problem is documented', 'GET', `/api/payments/${PAYMENT_ID}`, response(404, JSON_UTF8, { error: 'x', code: 'X' }), /content-type application\/json is not documented/],
    ['no content type', 'GET', '/products/a', response(200, undefined, { id: 'a', name: 'Cup', price: 1 }), /no content-type/],
    ['not JSON', 'GET', '/products/a', response(200, JSON_UTF8, '<html>'), /body is not JSON/],
    ['a body on 304', 'GET', `/merchants/${PAYMENT_ID}`, response(304, undefined, '{}'), /no body is documented/],
    ['a body on HEAD', 'HEAD', '/products/a', response(200, JSON_UTF8, '{}'), /a HEAD response has a body/],
    ['an unknown path answered 200', 'GET', '/nope', response(200, JSON_UTF8, { ok: true }), /only errors are expected here/],
    ['an unknown path in the wrong shape', 'GET', '/api/nope', response(404, JSON_UTF8, { error: 'x', code: 'X' }), /expected application\/problem\+json/]
  ]
  cases.push(
    ['no X-Request-Id', 'GET', '/products/a', { ...response(404, JSON_UTF8, { error: 'x', code: 'NOT_FOUND' }), headers: { 'content-type': JSON_UTF8, 'cache-control': 'no-store', 'api-version': '2026-11-25' } }, /required header X-Request-Id is missing/],
    ['a product read without its ETag', 'GET', '/products/a', response(200, JSON_UTF8, { id: 'a', name: 'Cup', price: 1 }), /required header ETag is missing/],
    ['a 201 without Location', 'POST', '/api/payments', response(201, JSON_UTF8, payment), /required header Location is missing/],
    ['a malformed RateLimit', 'GET', '/products/a', response(404, JSON_UTF8, { error: 'x', code: 'NOT_FOUND' }, { ratelimit: 'r=1' }), /header RateLimit: "r=1" must match pattern/],
    ['a Retry-After that is not seconds', 'GET', '/products/a', response(429, JSON_UTF8, { error: 'x', code: 'RATE_LIMITED' }, { 'retry-after': 'soon' }), /header Retry-After: "soon" must be integer/],
    ['an undocumented Cache-Control', 'GET', '/products/a', response(404, JSON_UTF8, { error: 'x', code: 'NOT_FOUND' }, { 'cache-control': 'max-age=3600' }), /header Cache-Control: "max-age=3600" must be equal to one of the allowed values/],
    ['OPTIONS without Allow', 'OPTIONS', '/products/a', { statusCode: 204, headers: {}, body: '' }, /204 without a valid Allow header/]
  )
  for (const [name, method, url, res, expected] of cases) {
    const { errors } = v.check(method, url, res)
    t.match(errors.join('\n'), expected, name)
  }
  t.same(v.check('OPTIONS', '/products/a', { statusCode: 204, headers: { allow: 'GET, HEAD, PUT, OPTIONS' }, body: '' }).errors, [], 'OPTIONS: 204 with Allow')
  t.same(v.check('GET', '/nope', response(404, JSON_UTF8, { error: 'route not found', code: 'NOT_FOUND' })).errors, [], 'an unknown path in its area shape passes')
  t.same(v.check('GET', '/docs/json', response(200, JSON_UTF8, {})), { area: 'none', errors: [] }, '/docs is not described by the document')
})

t.test('buildTestApp checks every inject response and fails the current test on a mismatch', async (t) => {
  // A store that fails with a 4xx nobody documented: the service answers 418, which GET /products/{id} does not list.
  const database = {
    kind: 'sqlite',
    products: { get: async () => { throw Object.assign(new Error('teapot'), { statusCode: 418 }) }, put: async () => { throw new Error('no') } },
    ping: async () => {},
    close: async () => {}
  } as never
  const failures: string[] = []
  const recorder = { fail: (message: string) => { failures.push(message) } } as unknown as Test
  const app = await buildApp(testConfig(), { logger: false, database })
  t.teardown(async () => { await app.close() })
  checkResponsesAgainstOpenApi(recorder, app)

  const res = await app.inject({ method: 'GET', url: '/products/a' })
  t.equal(res.statusCode, 418)
  t.equal(failures.length, 1, 'the undocumented status failed the test')
  t.match(failures[0], /GET \/products\/a → 418 \(GET \/products\/\{id\}\): status 418 is not documented/)

  await app.inject({ method: 'GET', url: '/health/live' })
  t.equal(failures.length, 1, 'a documented response does not')

  const opted = await buildTestApp(t, {}, {}, { validateResponses: false })
  t.equal((await opted.inject({ method: 'GET', url: '/products/a' })).statusCode, 404, 'the check can be switched off per app')
})
