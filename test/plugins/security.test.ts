import t, { type Test } from 'tap'
import { request, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { ADMIN_AUTH, buildTestApp, failingDatabase } from '../helpers/app'

const JSON_UTF8 = 'application/json; charset=utf-8'

/** The CSP as a map from directive to its sources. */
function cspDirectives (header: unknown): Map<string, string[]> {
  const directives = new Map<string, string[]>()
  for (const part of String(header).split(';')) {
    const [name = '', ...sources] = part.trim().split(/\s+/)
    if (name !== '') directives.set(name, sources)
  }
  return directives
}

function assertSecurityHeaders (t: Test, res: { headers: IncomingHttpHeaders | LightMyRequestResponse['headers'] }, label: string): void {
  const csp = cspDirectives(res.headers['content-security-policy'])
  t.ok(res.headers['content-security-policy'], `${label}: CSP present`)
  t.same(csp.get('script-src'), ["'self'"], `${label}: scripts only from the same origin, no unsafe-inline/eval`)
  t.same(csp.get('default-src'), ["'self'"], `${label}: default-src 'self'`)
  t.same(csp.get('object-src'), ["'none'"], `${label}: no plugins`)
  t.same(csp.get('frame-ancestors'), ["'none'"], `${label}: not frameable`)
  t.same(csp.get('script-src-attr'), ["'none'"], `${label}: no inline event handlers`)
  t.notOk(csp.has('upgrade-insecure-requests'), `${label}: plain-HTTP deployments keep working`)
  t.equal(res.headers['x-content-type-options'], 'nosniff', `${label}: nosniff`)
  t.equal(res.headers['x-frame-options'], 'SAMEORIGIN', `${label}: x-frame-options`)
  t.match(res.headers['strict-transport-security'], /max-age=\d+/, `${label}: HSTS`)
  t.equal(res.headers['referrer-policy'], 'no-referrer', `${label}: referrer-policy`)
  t.equal(res.headers['cross-origin-opener-policy'], 'same-origin', `${label}: COOP`)
  t.equal(res.headers['cross-origin-resource-policy'], 'same-origin', `${label}: CORP`)
  t.equal(res.headers['x-permitted-cross-domain-policies'], 'none', `${label}: no Flash/PDF cross-domain policies`)
  t.equal(res.headers['x-xss-protection'], '0', `${label}: legacy XSS auditor off`)
  t.notOk('x-powered-by' in res.headers, `${label}: no x-powered-by`)
  t.notOk('server' in res.headers, `${label}: no server banner`)
}

t.test('security headers are on every response: success, errors, health and docs', async (t) => {
  const app = await buildTestApp(t)
  await app.inject({ method: 'PUT', url: '/products/ok', payload: { name: 'Cup', price: 1 } })
  const requests: Array<[number, InjectOptions]> = [
    [200, { method: 'GET', url: '/products/ok' }],
    [200, { method: 'PUT', url: '/products/ok', payload: { name: 'Cup', price: 2 } }],
    [404, { method: 'GET', url: '/products/missing' }],
    [400, { method: 'PUT', url: '/products/bad', headers: { 'content-type': 'application/json' }, payload: '{' }],
    [400, { method: 'GET', url: `/products/${'x'.repeat(65)}` }],
    [405, { method: 'DELETE', url: '/products/ok' }],
    [415, { method: 'PUT', url: '/products/ok', headers: { 'content-type': 'text/plain' }, payload: 'x' }],
    [404, { method: 'GET', url: '/no/such/route' }],
    [200, { method: 'GET', url: '/health/live' }],
    [200, { method: 'GET', url: '/health/ready' }],
    [200, { method: 'GET', url: '/docs' }],
    [200, { method: 'GET', url: '/docs/json' }],
    [200, { method: 'GET', url: '/docs/yaml' }],
    [200, { method: 'GET', url: '/docs/static/swagger-ui.css' }],
    [200, { method: 'GET', url: '/docs/static/swagger-initializer.js' }]
  ]
  for (const [status, request] of requests) {
    const res = await app.inject(request)
    const label = `${request.method} ${request.url} → ${status}`
    t.equal(res.statusCode, status, label)
    assertSecurityHeaders(t, res, label)
  }
})

interface RawAnswer { status: number, headers: IncomingHttpHeaders, rawHeaders: string[], body: string }

async function send (port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawAnswer> {
  return await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { text += chunk }).on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body: text })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** Each header name the answer carries more than once. */
function repeatedNames (rawHeaders: string[]): string[] {
  const names = rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase())
  return names.filter((name, i) => names.indexOf(name) !== i)
}

t.test('over a real socket the response class writes the security headers once with every answer: JSON, 304, HEAD, streams, errors', async (t) => {
  const app = await buildTestApp(t, { ADMIN_API_KEY: 'admin-key-0123456789abcdefghijklmnopqrstuvwxyz' }, {}, { credentials: 'none', validateResponses: false })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const admin = { authorization: 'Bearer admin-key-0123456789abcdefghijklmnopqrstuvwxyz', 'content-type': 'application/json' }
  t.equal((await send(port, 'PUT', '/products/ok', admin, '{"name":"Cup","price":1}')).status, 200)
  const product = await send(port, 'GET', '/products/ok')
  const answers: Array<[number, string, RawAnswer]> = [
    [200, 'GET /products/ok', product],
    [304, 'GET /products/ok (If-None-Match)', await send(port, 'GET', '/products/ok', { 'if-none-match': String(product.headers.etag) })],
    [200, 'HEAD /products/ok', await send(port, 'HEAD', '/products/ok')],
    [404, 'GET /products/missing', await send(port, 'GET', '/products/missing')],
    [400, 'PUT /products/bad (bad JSON)', await send(port, 'PUT', '/products/bad', admin, '{')],
    [404, 'GET /no/such/route', await send(port, 'GET', '/no/such/route')],
    [400, 'GET /products/%E0 (undecodable)', await send(port, 'GET', '/products/%E0')],
    [200, 'GET /docs/static/swagger-ui.css (a stream)', await send(port, 'GET', '/docs/static/swagger-ui.css')]
  ]
  for (const [status, label, answer] of answers) {
    t.equal(answer.status, status, label)
    assertSecurityHeaders(t, answer, label)
    t.same(repeatedNames(answer.rawHeaders), [], `${label}: each header once`)
  }
  t.equal(product.headers['cache-control'], 'public, max-age=0, must-revalidate', 'a route\'s own Cache-Control stays')
  t.equal(answers[3]?.[2].headers['cache-control'], 'no-store')
})

t.test('security headers are on a 500 too', async (t) => {
  const app = await buildTestApp(t, {}, {
    database: failingDatabase()
  })
  const res = await app.inject({ method: 'GET', url: '/products/a' })
  t.equal(res.statusCode, 500)
  assertSecurityHeaders(t, res, '500')
})

t.test('past RATE_LIMIT_MAX a client gets a 429 envelope with Retry-After', async (t) => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' })
  t.equal((await app.inject({ method: 'GET', url: '/products/a' })).statusCode, 404)
  const second = await app.inject({ method: 'PUT', url: '/products/a', payload: { name: 'A', price: 1 } })
  t.equal(second.statusCode, 200)
  t.equal(second.headers['x-ratelimit-limit'], '2')
  t.equal(second.headers['x-ratelimit-remaining'], '0')

  const limited = await app.inject({ method: 'GET', url: '/products/a', headers: { 'x-request-id': 'limited-1' } })
  t.equal(limited.statusCode, 429)
  t.equal(limited.headers['content-type'], JSON_UTF8)
  t.match(limited.json(), { error: /^too many requests; retry after \d+ seconds$/, code: 'RATE_LIMITED' })
  t.same(Object.keys(limited.json()).sort(), ['code', 'error'], 'the products envelope, nothing else')
  const retryAfter = Number(limited.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After is whole seconds within the window (${retryAfter})`)
  t.equal(limited.headers['x-request-id'], 'limited-1', 'the request id is still echoed')
  assertSecurityHeaders(t, limited, '429')

  for (const request of [
    { method: 'PUT', url: '/products/a', payload: { name: 'B', price: 1 } },
    { method: 'GET', url: '/docs/json' }
  ] as InjectOptions[]) {
    const res = await app.inject(request)
    t.equal(res.statusCode, 429, `${request.method} ${request.url} is limited too`)
    t.equal(res.json().code, 'RATE_LIMITED')
  }
  const stored = await app.db.products.get('a')
  t.match(stored, { name: 'A' }, 'a limited PUT did not write')
})

t.test('health probes are exempt from the rate limit and do not use it up', async (t) => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '1' })
  for (let i = 0; i < 5; i++) {
    const live = await app.inject({ method: 'GET', url: '/health/live' })
    t.equal(live.statusCode, 200)
    t.notOk('x-ratelimit-limit' in live.headers, 'no rate limit headers on probes')
  }
  t.equal((await app.inject({ method: 'GET', url: '/products/a' })).statusCode, 404, 'probes used up nothing')
  t.equal((await app.inject({ method: 'GET', url: '/products/a' })).statusCode, 429)
  t.equal((await app.inject({ method: 'GET', url: '/health/live' })).statusCode, 200, 'live while limited')
  const ready = await app.inject({ method: 'GET', url: '/health/ready' })
  t.equal(ready.statusCode, 200, 'ready while limited')
  t.same(ready.json(), { status: 'ok', checks: { database: 'ok' } })
})

t.test('the limit resets after RATE_LIMIT_WINDOW_MS', async (t) => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '1000' })
  t.equal((await app.inject({ method: 'GET', url: '/products/a' })).statusCode, 404)
  const limited = await app.inject({ method: 'GET', url: '/products/a' })
  t.equal(limited.statusCode, 429)
  t.equal(limited.headers['retry-after'], '1')
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal((await app.inject({ method: 'GET', url: '/products/a' })).statusCode, 404, 'allowed again')
})

t.test('anonymous clients are limited separately, by address', async (t) => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '1' }, {}, { credentials: 'none' })
  t.equal((await app.inject({ method: 'GET', url: '/products/a', remoteAddress: '192.0.2.1' })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: '/products/a', remoteAddress: '192.0.2.1' })).statusCode, 429)
  t.equal((await app.inject({ method: 'GET', url: '/products/a', remoteAddress: '192.0.2.2' })).statusCode, 404)
})

t.test('unknown routes count against the rate limit, in each area\'s shape', async (t) => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '2' }, {}, { credentials: 'none' })
  for (const url of ['/nope', '/nope']) t.equal((await app.inject({ method: 'GET', url })).statusCode, 404)
  const root = await app.inject({ method: 'GET', url: '/still-guessing' })
  t.equal(root.statusCode, 429)
  t.same(root.json().code, 'RATE_LIMITED')
  const api = await app.inject({ method: 'GET', url: '/api/guess' })
  t.equal(api.statusCode, 429)
  t.equal(api.headers['content-type'], 'application/problem+json; charset=utf-8')
  const product = await app.inject({ method: 'TRACE', url: '/products/x' })
  t.equal(product.statusCode, 429)
  t.equal(product.json().code, 'RATE_LIMITED')
})

t.test('@fastify/sensible is registered off the hot path: its reply helper marks the secret-carrying answer, and it adds no hook', async (t) => {
  const app = await buildTestApp(t)
  t.ok(app.hasReplyDecorator('cacheControl'), 'its reply helpers are there')
  const merchant = await app.inject({ method: 'POST', url: '/merchants', headers: ADMIN_AUTH, payload: { name: 'Sensible', email: 'sensible@example.com' } })
  t.equal(merchant.statusCode, 201)
  const created = await app.inject({ method: 'POST', url: `/merchants/${merchant.json().id}/api-keys`, headers: ADMIN_AUTH, payload: {} })
  t.equal(created.statusCode, 201)
  t.equal(created.headers['cache-control'], 'no-store', 'the answer that carries a secret: exactly no-store')

  // What it registers is decorators only: a bare instance records every hook the plugin adds.
  const Fastify = (await import('fastify')).default
  const sensible = (await import('@fastify/sensible')).default
  const bare = Fastify()
  const hooks: string[] = []
  const addHook = bare.addHook.bind(bare)
  bare.addHook = ((name: string, ...rest: unknown[]) => { hooks.push(name); return (addHook as (...a: unknown[]) => unknown)(name, ...rest) }) as typeof bare.addHook
  await bare.register(sensible)
  await bare.ready()
  t.ok(bare.hasReplyDecorator('cacheControl'), 'registered on the bare instance')
  t.same(hooks, [], 'no hook: nothing runs per request')
  await bare.close()
})
