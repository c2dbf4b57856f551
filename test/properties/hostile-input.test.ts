/**
 * Hostile input, one case at a time: prototype pollution, deep nesting, extreme numbers and
 * strings, Unicode edge cases, duplicate keys and bodies that are JSON but not objects, against
 * every endpoint that takes a body. Every response here is also checked against openapi.yaml
 * (buildTestApp), so a 500 or an undocumented answer fails the test even where it is not asserted.
 */
import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp } from '../helpers/app'
import { spyGateway, type SpyGateway } from '../helpers/gateway'
import type { App } from '../../app/app'
import { MAX_BODY_DEPTH } from '../../plugins/http/body-guard'
import { literalDecimalPlaces, maxLiteralDecimalPlaces } from '../../plugins/http/json-numbers'

const JSON_UTF8 = 'application/json; charset=utf-8'
const PROBLEM = 'application/problem+json; charset=utf-8'
const MERCHANT_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7'

interface Endpoint {
  name: string
  method: 'PUT' | 'POST' | 'PATCH'
  url: string
  type: string
  valid: Record<string, unknown>
  shape: 'envelope' | 'problem'
}

/** The four fixed endpoints (products, payments, merchants, merchant patch) first, then the others. */
type Endpoints = [Endpoint, Endpoint, Endpoint, Endpoint, ...Endpoint[]]
interface Fixture { app: App, gateway: SpyGateway, endpoints: Endpoints }

let emails = 0
const email = (): string => `m${emails++}@example.com`

/** An app with one merchant to patch, and the four endpoints that take a JSON body. */
async function fixture (t: Test): Promise<Fixture> {
  const gateway = spyGateway()
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '1000000' }, { gateway })
  const created = await app.inject({ method: 'POST', url: '/merchants', payload: { name: 'Patch me', email: email() } })
  t.equal(created.statusCode, 201, 'a merchant to patch')
  const endpoints: Endpoints = [
    { name: 'PUT /products/{id}', method: 'PUT', url: '/products/hostile', type: 'application/json', valid: { name: 'Cup', price: 1 }, shape: 'envelope' },
    { name: 'POST /api/payments', method: 'POST', url: '/api/payments', type: 'application/json', valid: { amount: 1, currency: 'USD' }, shape: 'problem' },
    { name: 'POST /merchants', method: 'POST', url: '/merchants', type: 'application/json', valid: { name: 'Acme', email: 'fixed@example.com' }, shape: 'problem' },
    { name: 'PATCH /merchants/{id}', method: 'PATCH', url: `/merchants/${created.json().id as string}`, type: 'application/merge-patch+json', valid: { name: 'Renamed' }, shape: 'problem' }
  ]
  return { app, gateway, endpoints }
}

async function sendText (app: App, endpoint: Endpoint, body: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return await app.inject({ method: endpoint.method, url: endpoint.url, headers: { 'content-type': endpoint.type, ...headers }, payload: body })
}

/** The valid body as JSON text with `member` (raw JSON text, e.g. `"a":1`) appended: it wins over a duplicate. */
function withMember (valid: Record<string, unknown>, member: string): string {
  return `${JSON.stringify(valid).slice(0, -1)},${member}}`
}

/** An error in the endpoint's area shape, with the given status; returns the message(s) for further checks. */
function isError (t: Test, res: LightMyRequestResponse, endpoint: Endpoint, status: number, label: string): string {
  t.equal(res.statusCode, status, `${label}: ${status}`)
  if (endpoint.shape === 'envelope') {
    t.equal(res.headers['content-type'], JSON_UTF8, `${label}: envelope content type`)
    const body = res.json()
    t.same(Object.keys(body).sort(), ['code', 'error'], `${label}: the envelope, nothing else`)
    return body.error as string
  }
  t.equal(res.headers['content-type'], PROBLEM, `${label}: problem content type`)
  const body = res.json()
  t.equal(body.status, status, `${label}: problem status`)
  return [body.detail, ...Object.values(body.errors ?? {}).flat()].filter(Boolean).join(' ')
}

/** A string as ASCII for test messages (a raw U+2028 in a TAP line breaks the reporter's parser). */
function show (text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function notPolluted (t: Test, label: string): void {
  const probe: Record<string, unknown> = {}
  t.equal(probe.polluted, undefined, `${label}: ({}).polluted is undefined`)
  t.notOk(Object.hasOwn(Object.prototype, 'polluted'), `${label}: Object.prototype has no polluted member`)
  t.equal(typeof probe.toString, 'function', `${label}: Object.prototype.toString intact`)
}

t.test('__proto__, constructor and prototype keys are rejected, never merged; nothing pollutes Object.prototype', async (t) => {
  const { app, gateway, endpoints } = await fixture(t)
  const members = [
    '"__proto__":{"polluted":"yes"}',
    '"constructor":{"prototype":{"polluted":"yes"}}',
    '"nested":{"__proto__":{"polluted":"yes"}}',
    '"nested":[{"constructor":{"prototype":{"polluted":"yes"}}}]'
  ]
  for (const endpoint of endpoints) {
    for (const member of members) {
      const res = await sendText(app, endpoint, withMember(endpoint.valid, member))
      const message = isError(t, res, endpoint, 400, `${endpoint.name} with ${member}`)
      t.match(message, /invalid JSON/i, 'refused by the parser (secure-json-parse) as a poisoning attempt')
      notPolluted(t, `${endpoint.name} with ${member}`)
    }
    // Bare JSON keys named like Object.prototype members are unknown fields: 400 naming them (they were a 500).
    for (const key of ['prototype', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf']) {
      const res = await sendText(app, endpoint, withMember(endpoint.valid, `"${key}":"yes"`))
      const message = isError(t, res, endpoint, 400, `${endpoint.name} with an unknown ${key} member`)
      t.match(message, new RegExp(`The ${key} field is not a recognised field`), `names ${key}`)
      notPolluted(t, `${endpoint.name} with ${key}`)
    }
  }
  for (const url of ['/products/hostile', '/api/payments/x', `/merchants/${MERCHANT_ID}`]) {
    const res = await app.inject({ method: 'GET', url: `${url}?__proto__[polluted]=yes&constructor[prototype][polluted]=yes&__proto__.polluted=yes` })
    t.ok(res.statusCode === 404, `GET ${url} with a poisoned query string is answered normally (${res.statusCode})`)
    notPolluted(t, `query string on ${url}`)
  }
  t.equal(gateway.calls.length, 0, 'the gateway was never called')
  t.equal(await app.db.payments.count(), 0, 'no payment was stored')
  t.equal((await app.inject({ method: 'GET', url: '/products/hostile' })).statusCode, 404, 'no product was stored')
  t.equal((await app.inject({ method: 'POST', url: '/merchants', payload: { name: 'Acme', email: 'fixed@example.com' } })).statusCode, 201,
    'no merchant was stored (its email is still free)')
})

t.test('JSON nested 10,000 levels deep (within the body limit) is a 400, never a stack overflow', async (t) => {
  const { app, endpoints } = await fixture(t)
  const deepArray = '['.repeat(10_000) + ']'.repeat(10_000)
  const deepObject = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000)
  t.ok(Buffer.byteLength(deepObject) < 65_536, `the deepest body (${Buffer.byteLength(deepObject)} bytes) is within BODY_LIMIT`)
  for (const endpoint of endpoints) {
    for (const [what, deep] of [['array', deepArray], ['object', deepObject]] as const) {
      const whole = await sendText(app, endpoint, deep)
      isError(t, whole, endpoint, 400, `${endpoint.name}: the body is a ${what} nested 10,000 deep`)
      const inField = await sendText(app, endpoint, withMember(endpoint.valid, `"name":${deep}`))
      t.match(isError(t, inField, endpoint, 400, `${endpoint.name}: a member is a ${what} nested 10,000 deep`),
        new RegExp(`nested more than ${MAX_BODY_DEPTH} levels deep`))
    }
  }
  // The read-only members of a merchant accept any JSON in the schema; with an Idempotency-Key the body is
  // fingerprinted (recursively) before the service rejects them: this was a RangeError, a 500.
  const merchants = endpoints[2]
  for (const field of ['id', 'createdAt', 'updatedAt']) {
    for (const deep of [deepArray, deepObject]) {
      const res = await sendText(app, merchants, withMember({ name: 'Deep', email: 'deep@example.com' }, `"${field}":${deep}`), { 'idempotency-key': `deep-${field}` })
      t.match(isError(t, res, merchants, 400, `POST /merchants with Idempotency-Key and ${field} nested 10,000 deep`), /nested more than 32 levels deep/)
    }
    const retry = await app.inject({ method: 'POST', url: '/merchants', headers: { 'idempotency-key': `deep-${field}` }, payload: { name: 'Deep', email: `deep-${field}@example.com` } })
    t.equal(retry.statusCode, 201, 'the rejected request did not consume its Idempotency-Key')
  }
  const patch = endpoints[3]
  const res = await sendText(app, patch, `{"createdAt":${deepObject}}`)
  isError(t, res, patch, 400, 'PATCH with createdAt nested 10,000 deep')
  const shallow = await sendText(app, endpoints[0], withMember(endpoints[0].valid, `"extra":${'['.repeat(MAX_BODY_DEPTH - 1)}${']'.repeat(MAX_BODY_DEPTH - 1)}`))
  t.match(isError(t, shallow, endpoints[0], 400, 'nesting within the limit'), /The extra field is not a recognised field/, 'nesting within the limit reaches the schema')
  t.equal((await app.inject({ method: 'GET', url: '/health/live' })).statusCode, 200, 'the server is still serving')
})

t.test('extreme numbers: 1e308, -0, 1e-400, 1e400, integers beyond 2^53, more digits than a double holds', async (t) => {
  const { app, gateway, endpoints } = await fixture(t)
  const [products, payments] = endpoints

  // Products: price is a floating-point number from 0 to 1e9 (JSON.parse decides what a literal means).
  const prices: Array<[string, number | undefined]> = [
    ['1e308', undefined], ['-1e308', undefined], ['1e400', undefined], ['9007199254740993', undefined], ['-0.0000001', undefined],
    ['-0', 0], ['1e-400', 0], ['0.1', 0.1], ['1000000000', 1_000_000_000], ['12.50', 12.5], ['1.25e1', 12.5], ['0.30000000000000004', 0.30000000000000004]
  ]
  for (const [literal, stored] of prices) {
    const res = await sendText(app, products, `{"name":"Cup","price":${literal}}`)
    if (stored === undefined) {
      isError(t, res, products, 400, `price ${literal}`)
    } else {
      t.equal(res.statusCode, 200, `price ${literal} is accepted`)
      t.equal(res.json().price, stored, `price ${literal} is stored as ${stored}`)
      t.notOk(res.body.includes('-0'), 'negative zero is answered as 0')
      t.same((await app.inject({ method: 'GET', url: products.url })).json().price, stored, 'and reads back the same')
    }
  }

  // Payments: exact money, judged on the digits the client wrote, not on the double JSON.parse made of them.
  const amounts: Array<[string, string | number]> = [
    ['1e308', 'must be at most 1000000000'],
    ['1e400', 'must be a number'],
    ['9007199254740993', 'must be at most 1000000000'],
    ['-0', 'must be positive'],
    ['1e-400', 'must be positive'],
    ['0.001', 'at most 2 decimal places for USD'],
    ['10.100000000000000001', 'at most 2 decimal places for USD'],
    ['0.010000000000000001', 'at most 2 decimal places for USD'],
    ['999999999.9999999999', 'at most 2 decimal places for USD'],
    ['0.30000000000000004', 'at most 2 decimal places for USD'],
    ['10.10', 10.1],
    ['10.1000000000000000000', 10.1],
    ['1.5e1', 15],
    ['1500e-2', 15],
    ['1000000000', 1_000_000_000]
  ]
  for (const [literal, expected] of amounts) {
    const before = gateway.calls.length
    const res = await sendText(app, payments, `{"amount":${literal},"currency":"USD"}`)
    if (typeof expected === 'string') {
      t.match(isError(t, res, payments, 400, `amount ${literal}`), expected)
      t.equal(gateway.calls.length, before, `amount ${literal}: the gateway was not called`)
    } else {
      t.equal(res.statusCode, 201, `amount ${literal} is accepted`)
      t.equal(res.json().amount, expected, `amount ${literal} is ${expected}`)
    }
  }
  t.equal(literalDecimalPlaces('10.100000000000000001'), 18)
  t.equal(literalDecimalPlaces('1500e-2'), 0)
  t.equal(literalDecimalPlaces('-0.0e5'), 0)
  t.equal(literalDecimalPlaces('1.5e-3'), 4)
  t.equal(maxLiteralDecimalPlaces('{"a":"1.2345","b":[1.5,-2.25e0],"c\\"":0.1}'), 2, 'numbers inside strings are not numbers')
})

t.test('huge strings and bodies: maxLength, the body limit, long header values', async (t) => {
  const { app, endpoints } = await fixture(t)
  const [products, payments, merchants, patch] = endpoints
  const long = 'x'.repeat(60_000)
  t.match(isError(t, await sendText(app, products, JSON.stringify({ name: long, price: 1 })), products, 400, 'a 60,000-character product name'), /at most 200 characters/)
  t.match(isError(t, await sendText(app, payments, JSON.stringify({ amount: 1, currency: long })), payments, 400, 'a 60,000-character currency'), /at most 16 characters/)
  t.match(isError(t, await sendText(app, merchants, JSON.stringify({ name: long, email: 'a@example.com' })), merchants, 400, 'a 60,000-character merchant name'), /at most 200 characters/)
  t.match(isError(t, await sendText(app, patch, JSON.stringify({ email: `${long}@example.com` })), patch, 400, 'a 60,000-character email'), /email/)

  for (const endpoint of endpoints) {
    const res = await sendText(app, endpoint, JSON.stringify({ ...endpoint.valid, padding: 'p'.repeat(70_000) }))
    isError(t, res, endpoint, 413, `${endpoint.name} over BODY_LIMIT`)
  }
  for (const endpoint of [payments, merchants]) {
    const key = await sendText(app, endpoint, JSON.stringify(endpoint.valid), { 'idempotency-key': 'k'.repeat(10_000) })
    t.match(isError(t, key, endpoint, 400, `${endpoint.name} with a 10,000-character Idempotency-Key`), /Idempotency-Key header must be 1-255 printable ASCII/)
  }
  const id = await app.inject({ method: 'GET', url: '/products/x', headers: { 'x-request-id': 'r'.repeat(10_000) } })
  t.equal(id.statusCode, 404)
  t.match(id.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'an overlong X-Request-Id is replaced, not echoed')
  const ids = await app.inject({ method: 'GET', url: `/products/${'a'.repeat(5000)}` })
  t.match(isError(t, ids, products, 400, 'a 5,000-character product id'), /at most 64 characters/)
  const payment = await app.inject({ method: 'GET', url: `/api/payments/${'a'.repeat(5000)}` })
  t.equal(payment.statusCode, 404, 'a 5,000-character payment id names no payment: 404 like merchants (was 400, then Fastify\'s 414)')
  t.equal(payment.headers['content-type'], PROBLEM)
  const merchant = await app.inject({ method: 'GET', url: `/merchants/${'a'.repeat(5000)}` })
  t.equal(merchant.statusCode, 404, 'a 5,000-character merchant id names no merchant')
  t.ok(merchant.json().detail.length < 200, 'and is not echoed in full')
})

t.test('Unicode: stored and read back exactly, no normalisation; unstorable text (lone surrogates, NUL) is a 400', async (t) => {
  const { app, endpoints } = await fixture(t)
  const [products, payments, merchants, patch] = endpoints
  const names: Array<[string, string]> = [
    ['rtl', 'abc\u202edcba.exe'],
    ['zwsp', 'Cup\u200b'],
    ['zwj-emoji', '\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67 family'],
    ['emoji', '\u2615 \ud83d\ude00'],
    ['nfc', 'Caf\u00e9'],
    ['nfd', 'Cafe\u0301'],
    ['bom', '\ufeffCup'],
    ['line-sep', 'a\u2028b\u2029c'],
    ['controls', 'tab\there\u0007bell'],
    ['cjk', '\u6f22\u5b57\u30ab\u30ca']
  ]
  for (const [id, name] of names) {
    const put = await app.inject({ method: 'PUT', url: `/products/${id}`, payload: { name, price: 1 } })
    t.equal(put.statusCode, 200, `product name ${show(name)} is accepted`)
    const read = await app.inject({ method: 'GET', url: `/products/${id}` })
    t.equal(read.json().name, name, `${id}: read back exactly, code unit for code unit`)
  }
  t.not((await app.inject({ method: 'GET', url: '/products/nfc' })).json().name,
    (await app.inject({ method: 'GET', url: '/products/nfd' })).json().name, 'NFC and NFD spellings stay distinct (no normalisation)')

  const created = await app.inject({ method: 'POST', url: '/merchants', payload: { name: 'Caf\u00e9 \u202eevil', email: email() } })
  t.equal(created.statusCode, 201)
  t.equal((await app.inject({ method: 'GET', url: String(created.headers.location) })).json().name, 'Caf\u00e9 \u202eevil', 'merchant names too')

  const unstorable: Array<[string, string]> = [
    ['a lone high surrogate', '"a\\ud800b"'], ['a lone low surrogate', '"\\udfff"'], ['reversed surrogates', '"\\udc00\\ud800"'],
    ['NUL', '"a\\u0000b"'], ['only NUL', '"\\u0000"']
  ]
  for (const endpoint of [products, merchants, patch]) {
    for (const [what, literal] of unstorable) {
      const res = await sendText(app, endpoint, JSON.stringify({ ...endpoint.valid, name: '' }).replace('""', literal))
      t.match(isError(t, res, endpoint, 400, `${endpoint.name}: a name with ${what}`), /The name field contains a NUL character or an unpaired UTF-16 surrogate/)
    }
    const key = await sendText(app, endpoint, withMember(endpoint.valid, '"\\ud800":1'))
    t.match(isError(t, key, endpoint, 400, `${endpoint.name}: a member name with a lone surrogate`), /member name with a NUL character or an unpaired UTF-16 surrogate/)
  }
  for (const currency of ['\uff35\uff33\uff24', 'USD\u200b', 'U\u0000SD', 'usd\u0131', '']) {
    const res = await sendText(app, payments, JSON.stringify({ amount: 1, currency }))
    isError(t, res, payments, 400, `currency ${show(currency)}`)
  }
  for (const address of ['a\u200b@example.com', '\u00e9@example.com', 'a@ex\u0430mple.com']) {
    isError(t, await sendText(app, merchants, JSON.stringify({ name: 'Spoof', email: address })), merchants, 400, `email ${show(address)}`)
  }
  for (const id of ['%E2%80%AE', '%F0%9F%98%80', 'caf%C3%A9', '%ED%A0%80', '%00', 'e%CC%81']) {
    const res = await app.inject({ method: 'GET', url: `/products/${id}` })
    t.match(isError(t, res, products, 400, `product id ${id}`), /The id field must be 1-64 characters/)
    t.equal(res.headers['x-content-type-options'], 'nosniff', 'security headers on an answer the router gave')
    t.match(res.headers['content-security-policy'], /default-src 'self'/)
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/)
    const merchant = await app.inject({ method: 'GET', url: `/merchants/${id}` })
    t.equal(merchant.statusCode, 404, `merchant id ${id} names no merchant`)
    t.equal(merchant.headers['content-type'], PROBLEM)
    const payment = await app.inject({ method: 'GET', url: `/api/payments/${id}` })
    t.equal(payment.statusCode, 404, `payment id ${id} names no payment`)
    t.equal(payment.headers['content-type'], PROBLEM)
  }
})

t.test('duplicate keys: the last one wins, the same for validation, storage, the charge and the idempotency fingerprint', async (t) => {
  const { app, gateway, endpoints } = await fixture(t)
  const [products, payments, merchants, patch] = endpoints
  const put = await sendText(app, products, '{"name":"first","price":1,"name":"second","price":2}')
  t.same(put.json(), { id: 'hostile', name: 'second', price: 2 })
  t.same((await app.inject({ method: 'GET', url: products.url })).json(), { id: 'hostile', name: 'second', price: 2 })

  isError(t, await sendText(app, payments, '{"amount":5,"currency":"USD","amount":-1}'), payments, 400, 'a valid amount then an invalid one')
  t.equal(gateway.calls.length, 0, 'not charged')
  const paid = await sendText(app, payments, '{"amount":-1,"currency":"USD","amount":5}', { 'idempotency-key': 'dup-1' })
  t.equal(paid.statusCode, 201, 'an invalid amount then a valid one')
  t.equal(paid.json().amount, 5)
  t.same(gateway.calls.map((call) => call.amount), ['5.00'], 'charged what was validated and stored')
  const replay = await sendText(app, payments, '{"currency":"USD","amount":5}', { 'idempotency-key': 'dup-1' })
  t.equal(replay.statusCode, 201)
  t.equal(replay.headers['idempotent-replayed'], 'true', 'the fingerprint is of the parsed body: the same request')
  t.equal(replay.json().id, paid.json().id)
  const other = await sendText(app, payments, '{"currency":"USD","amount":5,"amount":6}', { 'idempotency-key': 'dup-1' })
  t.equal(other.statusCode, 409, 'a body whose last amount differs is a different request')
  t.equal(gateway.calls.length, 1, 'one charge in all')

  const merchant = await sendText(app, merchants, '{"name":"A","email":"dup-a@example.com","name":"B"}')
  t.equal(merchant.json().name, 'B')
  const patched = await sendText(app, patch, '{"country":null,"country":"DE"}')
  t.equal(patched.statusCode, 200)
  t.equal(patched.json().country, 'DE')
})

t.test('a body that is valid JSON but not an object is a 400 in the area\'s shape', async (t) => {
  const { app, gateway, endpoints } = await fixture(t)
  for (const endpoint of endpoints) {
    for (const body of ['42', '-0', '"a string"', '[]', '[{"name":"x"}]', 'null', 'true', 'false', '""']) {
      const message = isError(t, await sendText(app, endpoint, body), endpoint, 400, `${endpoint.name} with ${body}`)
      t.match(message, /must be a JSON object/, 'says what the body must be')
    }
  }
  t.equal(gateway.calls.length, 0)
})
