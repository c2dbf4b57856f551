import t from 'tap'
import { request } from 'node:http'
import { connect } from 'node:net'
import { buildTestApp, merchantWithKey } from '../../helpers/app'

const PAYMENT = '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f'
const MERCHANT = '019aa9e8-77d0-7b3f-a2c4-5e91d0f3b6c2'
const KEY = '5b0f1c2e-3d4a-4b5c-8d6e-7f8091a2b3c4'

/** Every known resource path, the methods it serves, and the shape of its errors. */
const resources: Array<{ url: string, allow: string, refused: string[], problem: boolean }> = [
  { url: '/products/sku-1', allow: 'GET, HEAD, PUT, OPTIONS', refused: ['POST', 'DELETE', 'PATCH'], problem: false },
  { url: '/api/payments', allow: 'GET, HEAD, POST, OPTIONS', refused: ['PUT', 'PATCH', 'DELETE'], problem: true },
  { url: `/api/payments/${PAYMENT}`, allow: 'GET, HEAD, OPTIONS', refused: ['POST', 'PUT', 'PATCH', 'DELETE'], problem: true },
  { url: `/api/payments/${PAYMENT}/cancel`, allow: 'POST, OPTIONS', refused: ['GET', 'PUT', 'DELETE'], problem: true },
  { url: `/api/payments/${PAYMENT}/refunds`, allow: 'GET, HEAD, POST, OPTIONS', refused: ['PUT', 'PATCH', 'DELETE'], problem: true },
  { url: `/api/payments/${PAYMENT}/refunds/${PAYMENT}`, allow: 'GET, HEAD, OPTIONS', refused: ['POST', 'PUT', 'DELETE'], problem: true },
  { url: '/merchants', allow: 'GET, HEAD, POST, OPTIONS', refused: ['PUT', 'PATCH', 'DELETE'], problem: true },
  { url: `/merchants/${MERCHANT}`, allow: 'GET, HEAD, PATCH, OPTIONS', refused: ['POST', 'PUT', 'DELETE'], problem: true },
  { url: `/merchants/${MERCHANT}/api-keys`, allow: 'GET, HEAD, POST, OPTIONS', refused: ['PUT', 'PATCH', 'DELETE'], problem: true },
  { url: `/merchants/${MERCHANT}/api-keys/${KEY}`, allow: 'DELETE, OPTIONS', refused: ['GET', 'POST', 'PUT', 'PATCH'], problem: true },
  { url: '/health/live', allow: 'GET, HEAD, OPTIONS', refused: ['POST', 'DELETE'], problem: false }
]

t.test('405 with Allow on every known resource path for a method it does not serve; OPTIONS is 204 with Allow', async (t) => {
  const app = await buildTestApp(t)
  for (const resource of resources) {
    const options = await app.inject({ method: 'OPTIONS', url: resource.url })
    t.equal(options.statusCode, 204, `OPTIONS ${resource.url}`)
    t.equal(options.headers.allow, resource.allow, `OPTIONS ${resource.url}: Allow`)
    t.equal(options.body, '', `OPTIONS ${resource.url}: no body`)
    t.equal(options.headers['accept-patch'], resource.allow.includes('PATCH') ? 'application/merge-patch+json, application/json' : undefined,
      `OPTIONS ${resource.url}: Accept-Patch exactly where PATCH is served`)
    for (const method of [...resource.refused, 'PROPFIND'] as const) {
      const res = await app.inject({ method, url: resource.url })
      const label = `${method} ${resource.url}`
      t.equal(res.statusCode, 405, label)
      t.equal(res.headers.allow, resource.allow, `${label}: Allow`)
      if (resource.problem) {
        t.match(res.json(), { status: 405, type: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6', instance: resource.url }, `${label}: problem`)
      } else {
        t.same(res.json(), { error: 'method not allowed', code: 'METHOD_NOT_ALLOWED' }, `${label}: envelope`)
      }
    }
  }
  const unknown = await app.inject({ method: 'DELETE', url: '/api/nothing-here' })
  t.equal(unknown.statusCode, 404, 'a path no route serves stays 404')
  const unknownOptions = await app.inject({ method: 'OPTIONS', url: '/nothing-here' })
  t.equal(unknownOptions.statusCode, 404, 'OPTIONS on a path no route serves is 404 too')
})

t.test('products: strong ETag, If-None-Match → 304, If-Match → 412; PUT honours If-Match and If-None-Match: *', async (t) => {
  const app = await buildTestApp(t)
  const put = await app.inject({ method: 'PUT', url: '/products/cup', payload: { name: 'Cup', price: 3 } })
  t.equal(put.statusCode, 200)
  const etag = put.headers.etag as string
  t.match(etag, /^"[A-Za-z0-9_-]{22}"$/, 'a strong tag')

  const read = await app.inject({ method: 'GET', url: '/products/cup' })
  t.equal(read.headers.etag, etag, 'GET carries the tag PUT gave')
  t.equal(read.headers['cache-control'], 'public, max-age=0, must-revalidate')

  const notModified = await app.inject({ method: 'GET', url: '/products/cup', headers: { 'if-none-match': `"other", W/${etag}` } })
  t.equal(notModified.statusCode, 304, 'weak comparison, lists allowed')
  t.equal(notModified.body, '')
  t.equal(notModified.headers.etag, etag)
  t.equal((await app.inject({ method: 'HEAD', url: '/products/cup', headers: { 'if-none-match': '*' } })).statusCode, 304, 'HEAD and *')
  t.equal((await app.inject({ method: 'GET', url: '/products/cup', headers: { 'if-none-match': '"stale"' } })).statusCode, 200)
  const getIfMatch = await app.inject({ method: 'GET', url: '/products/cup', headers: { 'if-match': '"stale"' } })
  t.equal(getIfMatch.statusCode, 412, 'If-Match on GET is evaluated')
  t.same(getIfMatch.json().code, 'PRECONDITION_FAILED')

  const stale = await app.inject({ method: 'PUT', url: '/products/cup', headers: { 'if-match': '"stale"' }, payload: { name: 'Mug', price: 4 } })
  t.equal(stale.statusCode, 412, 'If-Match mismatch')
  t.match((await app.inject({ method: 'GET', url: '/products/cup' })).json(), { name: 'Cup' }, 'nothing was stored')
  const weak = await app.inject({ method: 'PUT', url: '/products/cup', headers: { 'if-match': `W/${etag}` }, payload: { name: 'Mug', price: 4 } })
  t.equal(weak.statusCode, 412, 'If-Match uses the strong comparison: a weak tag never matches')
  const current = await app.inject({ method: 'PUT', url: '/products/cup', headers: { 'if-match': etag }, payload: { name: 'Mug', price: 4 } })
  t.equal(current.statusCode, 200, 'If-Match with the current tag')
  t.not(current.headers.etag, etag, 'new content, new tag')

  const missing = await app.inject({ method: 'PUT', url: '/products/new', headers: { 'if-match': '*' }, payload: { name: 'New', price: 1 } })
  t.equal(missing.statusCode, 412, 'If-Match: * on a missing product')
  t.equal((await app.inject({ method: 'GET', url: '/products/new' })).statusCode, 404, 'and nothing was created')
  const createOnly = await app.inject({ method: 'PUT', url: '/products/new', headers: { 'if-none-match': '*' }, payload: { name: 'New', price: 1 } })
  t.equal(createOnly.statusCode, 200, 'If-None-Match: * creates')
  const again = await app.inject({ method: 'PUT', url: '/products/new', headers: { 'if-none-match': '*' }, payload: { name: 'Newer', price: 1 } })
  t.equal(again.statusCode, 412, 'If-None-Match: * when it exists')
  t.same(again.json(), { error: 'The product\'s current ETag does not satisfy If-Match / If-None-Match; nothing was stored.', code: 'PRECONDITION_FAILED' })
})

t.test('merchants: If-Match on GET and If-None-Match on PATCH are evaluated', async (t) => {
  const app = await buildTestApp(t)
  const created = await app.inject({ method: 'POST', url: '/merchants', payload: { name: 'Acme', email: 'cond@example.com' } })
  const { id } = created.json()
  const etag = created.headers.etag as string
  const url = `/merchants/${id}`
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-match': '"999"' } })).statusCode, 412)
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-match': etag } })).statusCode, 200)
  const patch = (headers: Record<string, string>) => app.inject({
    method: 'PATCH', url, headers: { 'content-type': 'application/merge-patch+json', ...headers }, payload: '{"name":"Acme 2"}'
  })
  t.equal((await patch({ 'if-none-match': etag })).statusCode, 412, 'If-None-Match naming the current tag')
  t.equal((await patch({ 'if-none-match': '*' })).statusCode, 412, 'If-None-Match: * on an existing merchant')
  t.equal((await app.inject({ method: 'GET', url })).json().name, 'Acme', 'nothing changed')
  t.equal((await patch({ 'if-none-match': '"999"' })).statusCode, 200, 'If-None-Match naming another tag')
})

t.test('Cache-Control: no-store everywhere except product reads; errors too', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  await app.inject({ method: 'PUT', url: '/products/c', payload: { name: 'C', price: 1 } })
  const cases: Array<[string, string, Record<string, string>?]> = [
    ['PUT', '/products/c'],
    ['GET', '/products/missing'],
    ['GET', '/api/payments', merchant.auth],
    ['GET', `/merchants/${merchant.merchantId}`],
    ['GET', `/merchants/${merchant.merchantId}/api-keys`],
    ['GET', '/merchants'],
    ['GET', '/health/live'],
    ['GET', '/nowhere']
  ]
  for (const [method, url, headers] of cases) {
    const res = await app.inject({ method: method as 'GET', url, ...(headers === undefined ? {} : { headers }), ...(method === 'PUT' ? { payload: { name: 'C', price: 1 } } : {}) })
    t.equal(res.headers['cache-control'], 'no-store', `${method} ${url} → ${res.statusCode}`)
  }
  t.equal((await app.inject({ method: 'GET', url: '/products/c' })).headers['cache-control'], 'public, max-age=0, must-revalidate')
})

t.test('IETF RateLimit and RateLimit-Policy fields alongside X-RateLimit-*; 429 keeps Retry-After', async (t) => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' })
  const first = await app.inject({ method: 'GET', url: '/products/x' })
  t.equal(first.headers['ratelimit-policy'], '"default";q=2;w=60')
  t.match(first.headers.ratelimit, /^"default";r=1;t=\d+$/)
  t.equal(first.headers['x-ratelimit-remaining'], '1', 'the older fields stay')
  await app.inject({ method: 'GET', url: '/products/x' })
  const limited = await app.inject({ method: 'GET', url: '/products/x' })
  t.equal(limited.statusCode, 429)
  t.match(limited.headers.ratelimit, /^"default";r=0;t=\d+$/)
  t.ok(Number(limited.headers['retry-after']) >= 1, 'Retry-After')
})

t.test('CORS: no origin is allowed by default; CORS_ORIGINS allows exactly the listed ones', async (t) => {
  const closed = await buildTestApp(t)
  const none = await closed.inject({ method: 'GET', url: '/products/x', headers: { origin: 'https://evil.example' } })
  t.equal(none.headers['access-control-allow-origin'], undefined, 'default: no CORS at all')
  const preflightClosed = await closed.inject({
    method: 'OPTIONS', url: '/products/x', headers: { origin: 'https://evil.example', 'access-control-request-method': 'PUT' }
  })
  t.equal(preflightClosed.headers['access-control-allow-origin'], undefined)
  t.equal(preflightClosed.headers.allow, 'GET, HEAD, PUT, OPTIONS', 'a refused preflight is a plain OPTIONS')

  const open = await buildTestApp(t, { CORS_ORIGINS: 'https://dashboard.example.com, http://localhost:5173' })
  const allowed = await open.inject({ method: 'GET', url: '/products/x', headers: { origin: 'https://dashboard.example.com' } })
  t.equal(allowed.headers['access-control-allow-origin'], 'https://dashboard.example.com')
  t.match(allowed.headers['access-control-expose-headers'], /ETag/)
  t.match(String(allowed.headers.vary), /Origin/)
  const other = await open.inject({ method: 'GET', url: '/products/x', headers: { origin: 'https://evil.example' } })
  t.equal(other.headers['access-control-allow-origin'], undefined, 'an origin off the list')
  const preflight = await open.inject({
    method: 'OPTIONS',
    url: '/api/payments',
    headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, idempotency-key' }
  })
  t.equal(preflight.statusCode, 204, 'a preflight needs no key')
  t.equal(preflight.headers['access-control-allow-origin'], 'http://localhost:5173')
  t.match(preflight.headers['access-control-allow-headers'], /Idempotency-Key/)
  t.equal(preflight.headers['access-control-allow-credentials'], undefined, 'no credentials: keys travel in a header')
})

t.test('validation reports every field at once: schema and domain errors in one errors map', async (t) => {
  const app = await buildTestApp(t)
  const payment = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: -1, currency: 'usd' } })
  t.equal(payment.statusCode, 400)
  t.same(Object.keys(payment.json().errors).sort(), ['amount', 'currency'], 'a schema error (amount) and a domain error (currency)')
  t.match(payment.json().errors.amount[0], /must be positive/)
  t.match(payment.json().errors.currency[0], /upper-case ISO 4217 code: use 'USD'/)

  const several = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 'ten', currency: 5, extra: true } })
  t.same(Object.keys(several.json().errors).sort(), ['amount', 'currency', 'extra'], 'every schema error, one message each')
  t.ok(Object.values(several.json().errors).every((messages) => (messages as string[]).length === 1))

  const decimals = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 1.234, currency: 'USD', metadata: { k: 'x'.repeat(501) } } })
  t.same(Object.keys(decimals.json().errors).sort(), ['amount', 'metadata'], 'two domain errors (decimals, metadata)')

  const merchant = await app.inject({ method: 'POST', url: '/merchants', payload: { name: '', email: 'nope', country: 'de' } })
  t.equal(merchant.statusCode, 400)
  t.same(Object.keys(merchant.json().errors).sort(), ['country', 'email', 'name'], 'bad email and name (schema) with a bad country (domain)')

  const patch = await app.inject({
    method: 'PATCH',
    url: `/merchants/${(await app.inject({ method: 'POST', url: '/merchants', payload: { name: 'P', email: 'p@example.com' } })).json().id as string}`,
    headers: { 'content-type': 'application/merge-patch+json' },
    payload: JSON.stringify({ email: 'bad', defaultCurrency: 'XAU', metadata: { '': 'x' } })
  })
  t.same(Object.keys(patch.json().errors).sort(), ['defaultCurrency', 'email', 'metadata'])
})

t.test('request bodies: a charset other than UTF-8 is 415, a Content-Encoding is 415 with Accept-Encoding: identity, invalid UTF-8 is 400', async (t) => {
  const app = await buildTestApp(t)
  const latin1 = await app.inject({ method: 'PUT', url: '/products/c', headers: { 'content-type': 'application/json; charset=ISO-8859-1' }, payload: '{"name":"caf\xe9","price":1}' })
  t.equal(latin1.statusCode, 415)
  t.match(latin1.json(), { code: 'UNSUPPORTED_MEDIA_TYPE', error: /charset 'iso-8859-1'/ })
  for (const charset of ['utf-8', 'UTF-8', '"utf-8"', 'utf8']) {
    const ok = await app.inject({ method: 'PUT', url: '/products/c', headers: { 'content-type': `application/json; charset=${charset}` }, payload: '{"name":"C","price":1}' })
    t.equal(ok.statusCode, 200, `charset=${charset}`)
  }
  const gzip = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' }, payload: '{"amount":1,"currency":"USD"}' })
  t.equal(gzip.statusCode, 415)
  t.equal(gzip.headers['accept-encoding'], 'identity')
  t.match(gzip.json(), { status: 415, detail: /Content-Encoding 'gzip'/ })
  t.equal((await app.inject({ method: 'PUT', url: '/products/c', headers: { 'content-encoding': 'identity' }, payload: { name: 'C', price: 1 } })).statusCode, 200, 'identity is no encoding')

  const invalid = Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xe9]), Buffer.from('","price":1}')])
  const product = await app.inject({ method: 'PUT', url: '/products/latin', headers: { 'content-type': 'application/json' }, payload: invalid })
  t.equal(product.statusCode, 400)
  t.same(product.json(), { error: 'The request body is not valid UTF-8; JSON must be sent in UTF-8.', code: 'VALIDATION' })
  t.equal((await app.inject({ method: 'GET', url: '/products/latin' })).statusCode, 404, 'nothing stored')
  const merchant = await app.inject({ method: 'POST', url: '/merchants', headers: { 'content-type': 'application/json' }, payload: Buffer.concat([Buffer.from('{"name":"Caf'), Buffer.from([0xc3, 0x28]), Buffer.from('","email":"u@example.com"}')]) })
  t.equal(merchant.statusCode, 400)
  t.same(merchant.json().errors, { $: ['The request body is not valid UTF-8; JSON must be sent in UTF-8.'] })
  const payment = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'content-type': 'application/json' }, payload: Buffer.from([0x7b, 0xff, 0x7d]) })
  t.equal(payment.statusCode, 400, 'payments parse with their own parser, same rule')
  const fine = await app.inject({ method: 'PUT', url: '/products/utf8', headers: { 'content-type': 'application/json' }, payload: Buffer.from('{"name":"café ☕","price":1}') })
  t.equal(fine.json().name, 'café ☕', 'valid UTF-8 is stored as sent')
})

t.test('Idempotency-Key: sent twice is 400; the quoted structured-field form is the same key as the bare one', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const twice = await app.inject({
    method: 'POST',
    url: '/api/payments',
    headers: { ...merchant.auth, 'content-type': 'application/json', 'idempotency-key': ['k-1', 'k-2'] as unknown as string },
    payload: '{"amount":1,"currency":"USD"}'
  })
  t.equal(twice.statusCode, 400)
  t.same(twice.json().errors, { 'Idempotency-Key': ['The Idempotency-Key header was sent more than once; send exactly one key.'] })
  const bare = await app.inject({ method: 'POST', url: '/api/payments', headers: { ...merchant.auth, 'idempotency-key': 'order-77' }, payload: { amount: 1, currency: 'USD' } })
  t.equal(bare.statusCode, 201)
  const quoted = await app.inject({ method: 'POST', url: '/api/payments', headers: { ...merchant.auth, 'idempotency-key': '"order-77"' }, payload: { amount: 1, currency: 'USD' } })
  t.equal(quoted.statusCode, 201)
  t.equal(quoted.headers['idempotent-replayed'], 'true', 'the quoted key is the bare key: a replay')
  t.equal(quoted.json().id, bare.json().id)
})

t.test('the decimal-places check judges only the duplicate member that wins', async (t) => {
  const app = await buildTestApp(t)
  const post = (payload: string) => app.inject({ method: 'POST', url: '/api/payments', headers: { 'content-type': 'application/json' }, payload })
  const wins = await post('{"amount":1.234,"amount":1,"currency":"USD"}')
  t.equal(wins.statusCode, 201, 'amount 1 wins; 1.234 is gone')
  t.equal(wins.json().amount, 1)
  const loses = await post('{"amount":1,"amount":1.234,"currency":"USD"}')
  t.equal(loses.statusCode, 400)
  t.match(loses.json().errors.amount[0], /at most 2 decimal places/)
  const nested = await post('{"metadata":{"amount":"1.234"},"amount":2,"currency":"JPY"}')
  t.equal(nested.statusCode, 201, 'only the top-level member is judged')
})

t.test('echoed input is bounded: a 12 KB path is not repeated in instance and detail', async (t) => {
  const app = await buildTestApp(t)
  const long = `/api/${'x'.repeat(12 * 1024)}`
  const res = await app.inject({ method: 'GET', url: long })
  t.equal(res.statusCode, 404)
  t.ok(res.json().instance.length <= 256, `instance is ${res.json().instance.length as number} characters`)
  t.ok(res.json().detail.length <= 120, `detail is ${res.json().detail.length as number} characters`)
  t.ok(res.body.length < 1024, `the whole answer is ${res.body.length} bytes`)
})

t.test('product ids . and .. are refused (400); two Host headers or none are 400', async (t) => {
  const app = await buildTestApp(t)
  // inject normalises dot segments away (even percent-encoded ones); over a real socket they reach the router.
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  for (const id of ['.', '..', '%2E', '%2e%2E']) {
    const answer = await new Promise<{ status: number, body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'GET', path: `/products/${id}` }, (res) => {
        let body = ''
        res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
      })
      req.on('error', reject)
      req.end()
    })
    t.equal(answer.status, 400, `GET /products/${id}`)
    t.match(answer.body, /not '\.' or '\.\.'/, `GET /products/${id} says why`)
  }
  // HTTP/1.1 without Host: a 400 in the area's shape with the security headers (not Node's bare 400).
  const noHost = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let data = ''
    socket.setEncoding('utf8').on('data', (chunk: string) => { data += chunk }).on('end', () => { resolve(data) }).on('error', reject)
    socket.write('GET /api/payments HTTP/1.1\r\nConnection: close\r\n\r\n')
  })
  t.match(noHost, /^HTTP\/1\.1 400 /)
  t.match(noHost, /\r\ncontent-security-policy: /i)
  t.match(noHost, /"errors":\{"Host":\["The request has no Host header; HTTP\/1\.1 requires one\."\]\}/)
  t.equal((await app.inject({ method: 'PUT', url: '/products/...', payload: { name: 'x', price: 1 } })).statusCode, 200, '... is an ordinary id')
  const twoHosts = await app.inject({ method: 'GET', url: '/products/x', headers: { host: ['a.example', 'b.example'] as unknown as string } })
  t.equal(twoHosts.statusCode, 400)
  t.same(twoHosts.json(), { error: 'The request has more than one Host header; send exactly one.', code: 'VALIDATION' })
  t.ok(twoHosts.headers['x-content-type-options'], 'with the security headers')
})

t.test('GET / points to the documentation', async (t) => {
  const app = await buildTestApp(t, {}, {}, { credentials: 'none' })
  const res = await app.inject({ method: 'GET', url: '/' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { name: 'product-payment-service', docs: '/docs', openapi: '/docs/json' })
  t.equal(res.headers.link, '</docs>; rel="service-doc", </docs/json>; rel="service-desc"')
})
