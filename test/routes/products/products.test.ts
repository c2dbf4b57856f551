import t from 'tap'
import { buildTestApp, failingDatabase } from '../../helpers/app'

const JSON_UTF8 = 'application/json; charset=utf-8'

t.test('GET of an unknown product is a 404 envelope', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/products/missing' })
  t.equal(res.statusCode, 404)
  t.equal(res.headers['content-type'], JSON_UTF8)
  t.same(res.json(), { error: 'product not found', code: 'NOT_FOUND' })
})

t.test('PUT creates, GET reads back, and the path id wins over the body id', async (t) => {
  const app = await buildTestApp(t)
  const put = await app.inject({ method: 'PUT', url: '/products/sku-1', payload: { id: 'other', name: 'Cup', price: 12.5 } })
  t.equal(put.statusCode, 200)
  t.equal(put.headers['content-type'], JSON_UTF8)
  t.same(put.json(), { id: 'sku-1', name: 'Cup', price: 12.5 })
  const get = await app.inject({ method: 'GET', url: '/products/sku-1' })
  t.equal(get.statusCode, 200)
  t.same(get.json(), { id: 'sku-1', name: 'Cup', price: 12.5 })
  const other = await app.inject({ method: 'GET', url: '/products/other' })
  t.equal(other.statusCode, 404)
})

t.test('PUT replaces the whole product instead of merging', async (t) => {
  const app = await buildTestApp(t)
  await app.inject({ method: 'PUT', url: '/products/p', payload: { name: 'Old', price: 1 } })
  const missingPrice = await app.inject({ method: 'PUT', url: '/products/p', payload: { name: 'New' } })
  t.equal(missingPrice.statusCode, 400, 'a partial body is not a replacement')
  t.same(missingPrice.json(), { error: 'The price field is required.', code: 'VALIDATION' })
  const replaced = await app.inject({ method: 'PUT', url: '/products/p', payload: { name: 'New', price: 0 } })
  t.same(replaced.json(), { id: 'p', name: 'New', price: 0 })
  const read = await app.inject({ method: 'GET', url: '/products/p' })
  t.same(read.json(), { id: 'p', name: 'New', price: 0 })
})

t.test('HEAD reads headers of a product', async (t) => {
  const app = await buildTestApp(t)
  await app.inject({ method: 'PUT', url: '/products/h', payload: { name: 'Hat', price: 3 } })
  const res = await app.inject({ method: 'HEAD', url: '/products/h' })
  t.equal(res.statusCode, 200)
  t.equal(res.body, '')
})

const invalidBodies: Array<[string, unknown, string]> = [
  ['blank name', { name: '   ', price: 1 }, 'The name field must not be blank.'],
  ['empty name', { name: '', price: 1 }, 'The name field must not be empty.'],
  ['long name', { name: 'x'.repeat(201), price: 1 }, 'The name field must be at most 200 characters long.'],
  ['missing name', { price: 1 }, 'The name field is required.'],
  ['negative price', { name: 'a', price: -0.01 }, 'The price field must be at least 0.'],
  ['price above the bound', { name: 'a', price: 1_000_000_001 }, 'The price field must be at most 1000000000.'],
  ['string price', { name: 'a', price: '12' }, 'The price field must be a number.'],
  ['numeric name', { name: 5, price: 1 }, 'The name field must be a string.'],
  ['unknown field', { name: 'a', price: 1, colour: 'red' }, 'The colour field is not a recognised field.'],
  ['array body', [1, 2], 'The request body must be a JSON object.'],
  ['string body', 'hello', 'The request body must be a JSON object.'],
  ['null body', null, 'The request body must be a JSON object.']
]

for (const [name, payload, message] of invalidBodies) {
  t.test(`PUT with ${name} is a 400 VALIDATION naming the field`, async (t) => {
    const app = await buildTestApp(t)
    const res = await app.inject({
      method: 'PUT',
      url: '/products/v',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(payload)
    })
    t.equal(res.statusCode, 400)
    t.equal(res.headers['content-type'], JSON_UTF8)
    t.same(res.json(), { error: message, code: 'VALIDATION' })
    t.equal((await app.inject({ method: 'GET', url: '/products/v' })).statusCode, 404, 'nothing was stored')
  })
}

t.test('path ids: format and length are validated as 400 VALIDATION', async (t) => {
  const app = await buildTestApp(t)
  const tooLong = await app.inject({ method: 'GET', url: `/products/${'a'.repeat(65)}` })
  t.equal(tooLong.statusCode, 400)
  t.same(tooLong.json(), { error: 'The id field must be at most 64 characters long.', code: 'VALIDATION' })
  const longest = await app.inject({ method: 'PUT', url: `/products/${'a'.repeat(64)}`, payload: { name: 'ok', price: 1 } })
  t.equal(longest.statusCode, 200)
  for (const bad of ['caf%C3%A9', 'a%20b', 'a%2Fb', '%00']) {
    const res = await app.inject({ method: 'GET', url: `/products/${bad}` })
    t.equal(res.statusCode, 400, bad)
    t.equal(res.json().code, 'VALIDATION', bad)
    t.match(res.json().error, /The id field must be 1-64 characters/, bad)
  }
})

t.test('malformed, empty and non-JSON bodies', async (t) => {
  const app = await buildTestApp(t)
  const invalid = await app.inject({ method: 'PUT', url: '/products/j', headers: { 'content-type': 'application/json' }, payload: '{"name": "a",' })
  t.equal(invalid.statusCode, 400)
  t.same(invalid.json(), { error: 'invalid JSON', code: 'INVALID_JSON' })
  const empty = await app.inject({ method: 'PUT', url: '/products/j', headers: { 'content-type': 'application/json' }, payload: '' })
  t.equal(empty.statusCode, 400)
  t.same(empty.json(), { error: 'request body is empty; send a JSON object', code: 'EMPTY_BODY' })
  const none = await app.inject({ method: 'PUT', url: '/products/j' })
  t.equal(none.statusCode, 400)
  t.equal(none.json().code, 'VALIDATION')
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
    const res = await app.inject({ method: 'PUT', url: '/products/j', headers: { 'content-type': type }, payload: 'name=a' })
    t.equal(res.statusCode, 415, type)
    t.equal(res.headers['content-type'], JSON_UTF8)
    t.same(res.json(), { error: 'unsupported media type; send application/json', code: 'UNSUPPORTED_MEDIA_TYPE' })
  }
})

t.test('other methods are 405 with Allow, before the body is read; OPTIONS is 204 with Allow', async (t) => {
  const app = await buildTestApp(t)
  const options = await app.inject({ method: 'OPTIONS', url: '/products/x' })
  t.equal(options.statusCode, 204)
  t.equal(options.headers.allow, 'GET, HEAD, PUT, OPTIONS')
  t.equal(options.body, '')
  for (const method of ['POST', 'DELETE', 'PATCH', 'TRACE', 'PROPFIND'] as const) {
    const res = await app.inject({ method, url: '/products/x', headers: { 'content-type': 'application/json' }, ...(method === 'TRACE' ? {} : { payload: '{broken' }) })
    t.equal(res.statusCode, 405, method)
    t.equal(res.headers.allow, 'GET, HEAD, PUT, OPTIONS', method)
    t.equal(res.headers['content-type'], JSON_UTF8, method)
    t.same(res.json(), { error: 'method not allowed', code: 'METHOD_NOT_ALLOWED' }, method)
  }
})

t.test('bodies over BODY_LIMIT are a 413 envelope', async (t) => {
  const app = await buildTestApp(t, { BODY_LIMIT: '1024' })
  const res = await app.inject({ method: 'PUT', url: '/products/big', payload: { name: 'x'.repeat(2000), price: 1 } })
  t.equal(res.statusCode, 413)
  t.equal(res.headers['content-type'], JSON_UTF8)
  t.same(res.json(), { error: 'request body is too large', code: 'PAYLOAD_TOO_LARGE' })
})

t.test('unexpected failures are a bare 500 envelope, logged with the request id', async (t) => {
  const logs: string[] = []
  const stream = { write: (line: string) => { logs.push(line) } }
  const app = await buildTestApp(t, {}, {
    logger: { level: 'error', stream },
    database: failingDatabase(() => new Error('disk on fire at /var/secret'))
  })
  const res = await app.inject({ method: 'GET', url: '/products/a', headers: { 'x-request-id': 'req-500' } })
  t.equal(res.statusCode, 500)
  t.equal(res.headers['content-type'], JSON_UTF8)
  t.same(res.json(), { error: 'internal server error', code: 'INTERNAL' })
  t.notMatch(res.body, /disk|secret|stack/)
  const logged = logs.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'unhandled error')
  t.ok(logged, 'the failure is logged')
  t.equal(logged.requestId, 'req-500')
  t.match(logged.err.message, /disk on fire/)
  const ready = await app.inject({ method: 'GET', url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  t.same(ready.json(), { status: 'unavailable', checks: { database: 'unreachable' } })
})
