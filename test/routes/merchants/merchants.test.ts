import t from 'tap'
import type { Test } from 'tap'
import { buildTestApp } from '../../helpers/app'
import type { App } from '../../../app/app'
import { createSqliteDatabase } from '../../../src/store/sqlite'

const JSON_UTF8 = 'application/json; charset=utf-8'
const PROBLEM = 'application/problem+json; charset=utf-8'
const MERGE_PATCH = 'application/merge-patch+json'
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const T0 = Date.parse('2026-03-01T10:00:00.000Z')

/** An app whose clock the test moves by hand. */
async function appWithClock (t: Test): Promise<{ app: App, tick: (ms?: number) => void }> {
  let now = T0
  const app = await buildTestApp(t, {}, { clock: () => now })
  return { app, tick: (ms = 1000) => { now += ms } }
}

async function create (app: App, payload: Record<string, unknown>) {
  return await app.inject({ method: 'POST', url: '/merchants', payload })
}

async function createOk (t: Test, app: App, payload: Record<string, unknown> = {}) {
  const res = await create(app, { name: 'Acme', email: `acme-${Math.random().toString(36).slice(2)}@example.com`, ...payload })
  t.equal(res.statusCode, 201, 'created')
  return { body: res.json(), etag: res.headers.etag as string }
}

async function patch (app: App, id: string, payload: unknown, headers: Record<string, string> = {}) {
  return await app.inject({
    method: 'PATCH',
    url: `/merchants/${id}`,
    headers: { 'content-type': MERGE_PATCH, ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload)
  })
}

function isProblem (t: Test, res: { statusCode: number, headers: Record<string, unknown>, json: () => any }, status: number, url: string): void {
  t.equal(res.statusCode, status, `status ${status}`)
  t.equal(res.headers['content-type'], PROBLEM, 'problem+json')
  const body = res.json()
  t.equal(body.status, status)
  t.equal(body.instance, url)
  t.type(body.type, 'string')
  t.type(body.title, 'string')
  t.type(body.traceId, 'string')
}

t.test('POST creates a merchant: 201, Location, ETag, defaults, timestamps', async (t) => {
  const { app } = await appWithClock(t)
  const res = await create(app, { name: 'Blue Bottle', email: 'Ops@BlueBottle.example' })
  t.equal(res.statusCode, 201)
  t.equal(res.headers['content-type'], JSON_UTF8)
  const body = res.json()
  t.match(body.id, GUID)
  t.same(body, {
    id: body.id,
    name: 'Blue Bottle',
    email: 'Ops@BlueBottle.example',
    status: 'active',
    apiVersion: '2026-11-25',
    createdAt: '2026-03-01T10:00:00.000Z',
    updatedAt: '2026-03-01T10:00:00.000Z'
  }, 'status defaults to active; the current API version; unset optional fields are omitted; the email is stored as sent')
  t.equal(res.headers.location, `/merchants/${body.id}`)
  t.equal(res.headers.etag, '"1"')

  const full = await create(app, { name: 'Full', email: 'full@example.com', country: 'JP', defaultCurrency: 'JPY', status: 'suspended' })
  t.equal(full.statusCode, 201)
  t.match(full.json(), { country: 'JP', defaultCurrency: 'JPY', status: 'suspended' })
  t.not(full.json().id, body.id, 'every merchant gets a new id')

  const read = await app.inject({ method: 'GET', url: res.headers.location as string })
  t.equal(read.statusCode, 200)
  t.same(read.json(), body, 'Location resolves to the created merchant')
})

t.test('duplicate email, in any case, is a 409 problem', async (t) => {
  const { app } = await appWithClock(t)
  t.equal((await create(app, { name: 'One', email: 'owner@example.com' })).statusCode, 201)
  const dup = await create(app, { name: 'Two', email: 'OWNER@Example.COM' })
  isProblem(t, dup, 409, '/merchants')
  t.equal(dup.json().type, 'urn:problem-type:merchant-email-taken')
  t.match(dup.json().detail, /already uses this email/)
  t.notOk(dup.headers.location, 'no Location on failure')
})

t.test('GET: 200 with ETag; If-None-Match → 304 (current tag, *, lists, weak); stale tag → 200', async (t) => {
  const { app } = await appWithClock(t)
  const { body, etag } = await createOk(t, app)
  const url = `/merchants/${body.id}`
  const read = await app.inject({ method: 'GET', url })
  t.equal(read.statusCode, 200)
  t.equal(read.headers['content-type'], JSON_UTF8)
  t.equal(read.headers.etag, etag)
  t.same(read.json(), body)

  for (const header of [etag, '*', `"nope", ${etag}`, `W/${etag}`, ` ${etag} `]) {
    const res = await app.inject({ method: 'GET', url, headers: { 'if-none-match': header } })
    t.equal(res.statusCode, 304, `If-None-Match: ${header}`)
    t.equal(res.body, '', 'no body')
    t.equal(res.headers.etag, etag, 'the ETag is repeated')
  }
  for (const header of ['"2"', 'W/"99"', '1', 'garbage', '']) {
    const res = await app.inject({ method: 'GET', url, headers: { 'if-none-match': header } })
    t.equal(res.statusCode, 200, `If-None-Match: ${JSON.stringify(header)} does not match`)
    t.same(res.json(), body)
  }
  const upper = await app.inject({ method: 'GET', url: `/merchants/${(body.id as string).toUpperCase()}` })
  t.equal(upper.statusCode, 200, 'GUIDs are case-insensitive on input')
  t.equal(upper.json().id, body.id)
})

t.test('GET of an unknown GUID or a non-GUID id is a 404 problem', async (t) => {
  const { app } = await appWithClock(t)
  for (const id of ['6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b', 'not-a-guid', '123', 'x'.repeat(90)]) {
    const url = `/merchants/${id}`
    const res = await app.inject({ method: 'GET', url })
    isProblem(t, res, 404, url)
    t.equal(res.json().type, 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.5')
    t.match(res.json().detail, /No merchant has the id/)
    t.ok(res.json().detail.length < 120, 'a long id is not echoed in full')
  }
  const patched = await patch(app, 'not-a-guid', { name: 'x' })
  isProblem(t, patched, 404, '/merchants/not-a-guid')
  const unknown = await patch(app, '6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b', { name: 'x' })
  isProblem(t, unknown, 404, '/merchants/6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b')
  const other = await app.inject({ method: 'DELETE', url: '/merchants/6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b' })
  isProblem(t, other, 405, '/merchants/6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b')
  t.equal(other.headers.allow, 'GET, HEAD, PATCH, OPTIONS', 'a method the path does not serve is 405 with Allow, whatever the id')
  const deeper = await app.inject({ method: 'GET', url: '/merchants/a/b' })
  isProblem(t, deeper, 404, '/merchants/a/b')
})

t.test('PATCH: merge-patch semantics, null removes optional fields, new ETag and updatedAt', async (t) => {
  const { app, tick } = await appWithClock(t)
  const { body } = await createOk(t, app, { name: 'Old', country: 'US', defaultCurrency: 'USD' })
  const url = `/merchants/${body.id}`
  tick()
  const res = await patch(app, body.id, { name: 'New', country: null })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], JSON_UTF8)
  t.equal(res.headers.etag, '"2"')
  t.same(res.json(), {
    id: body.id,
    name: 'New',
    email: body.email,
    defaultCurrency: 'USD',
    status: 'active',
    apiVersion: '2026-11-25',
    createdAt: body.createdAt,
    updatedAt: '2026-03-01T10:00:01.000Z'
  }, 'name replaced, country removed, the rest unchanged')

  tick()
  const again = await patch(app, body.id, { defaultCurrency: null, status: 'suspended', country: 'DE' })
  t.equal(again.statusCode, 200)
  t.equal(again.headers.etag, '"3"')
  t.match(again.json(), { country: 'DE', status: 'suspended', updatedAt: '2026-03-01T10:00:02.000Z' })
  t.notOk('defaultCurrency' in again.json(), 'defaultCurrency removed')

  const read = await app.inject({ method: 'GET', url })
  t.same(read.json(), again.json(), 'the patch was stored')
  t.equal(read.headers.etag, '"3"')

  const removeAbsent = await patch(app, body.id, { defaultCurrency: null })
  t.equal(removeAbsent.statusCode, 200, 'removing what is not set is a no-op')
  t.equal(removeAbsent.headers.etag, '"3"')
})

t.test('PATCH with plain application/json is accepted as a merge patch', async (t) => {
  const { app } = await appWithClock(t)
  const { body } = await createOk(t, app, { country: 'US' })
  const res = await app.inject({ method: 'PATCH', url: `/merchants/${body.id}`, headers: { 'content-type': 'application/json; charset=utf-8' }, payload: { country: null } })
  t.equal(res.statusCode, 200)
  t.notOk('country' in res.json())
  const charset = await patch(app, body.id, { name: 'Charset' }, { 'content-type': `${MERGE_PATCH}; charset=utf-8` })
  t.equal(charset.statusCode, 200)
  t.equal(charset.json().name, 'Charset')
})

t.test('PATCH with an empty object (or only current values) is 200 and changes nothing', async (t) => {
  const { app, tick } = await appWithClock(t)
  const { body, etag } = await createOk(t, app, { country: 'US' })
  tick()
  for (const payload of [{}, { name: body.name, country: 'US' }, { id: body.id, createdAt: body.createdAt, updatedAt: body.updatedAt }, body]) {
    const res = await patch(app, body.id, payload)
    t.equal(res.statusCode, 200, JSON.stringify(payload))
    t.equal(res.headers.etag, etag, 'same ETag')
    t.same(res.json(), body, 'same record, updatedAt included')
  }
})

t.test('PATCH: null on a required field is 400 naming the field', async (t) => {
  const { app } = await appWithClock(t)
  const { body } = await createOk(t, app)
  for (const field of ['name', 'email', 'status']) {
    const url = `/merchants/${body.id}`
    const res = await patch(app, body.id, { [field]: null })
    isProblem(t, res, 400, url)
    t.same(Object.keys(res.json().errors), [field])
    t.same(res.json().errors[field], [`The ${field} field is required and cannot be removed; send a new value instead of null.`])
  }
  const read = await app.inject({ method: 'GET', url: `/merchants/${body.id}` })
  t.same(read.json(), body, 'nothing changed')
})

t.test('PATCH: changing id, createdAt or updatedAt is 400 naming the field', async (t) => {
  const { app } = await appWithClock(t)
  const { body } = await createOk(t, app)
  const attempts: Array<[string, unknown]> = [
    ['id', '11111111-1111-4111-8111-111111111111'],
    ['id', null],
    ['createdAt', '2020-01-01T00:00:00.000Z'],
    ['updatedAt', '2030-01-01T00:00:00.000Z'],
    ['updatedAt', 5]
  ]
  for (const [field, value] of attempts) {
    const res = await patch(app, body.id, { [field]: value })
    isProblem(t, res, 400, `/merchants/${body.id}`)
    t.same(Object.keys(res.json().errors), [field], `${field}: ${JSON.stringify(value)}`)
    t.match(res.json().errors[field][0], new RegExp(`^The ${field} field is read-only`))
  }
  const read = await app.inject({ method: 'GET', url: `/merchants/${body.id}` })
  t.same(read.json(), body, 'nothing changed')
})

t.test('PATCH: the body must be a JSON object', async (t) => {
  const { app } = await appWithClock(t)
  const { body } = await createOk(t, app)
  for (const payload of ['[]', '"name"', '42', 'null', 'true']) {
    const res = await patch(app, body.id, payload)
    isProblem(t, res, 400, `/merchants/${body.id}`)
    t.same(Object.keys(res.json().errors), ['$'], payload)
    t.match(res.json().errors.$[0], /must be a JSON object/)
  }
  const empty = await patch(app, body.id, '')
  isProblem(t, empty, 400, `/merchants/${body.id}`)
  t.equal(empty.json().title, 'The request body is empty.')
  const none = await app.inject({ method: 'PATCH', url: `/merchants/${body.id}` })
  isProblem(t, none, 400, `/merchants/${body.id}`)
  t.same(Object.keys(none.json().errors), ['$'], 'no body at all')
})

t.test('PATCH: If-Match (strong comparison) guards the update', async (t) => {
  const { app } = await appWithClock(t)
  const { body, etag } = await createOk(t, app)
  const url = `/merchants/${body.id}`

  const stale = await patch(app, body.id, { name: 'Stale' }, { 'if-match': '"99"' })
  isProblem(t, stale, 412, url)
  t.match(stale.json().detail, /If-Match does not match/)
  const weak = await patch(app, body.id, { name: 'Weak' }, { 'if-match': `W/${etag}` })
  t.equal(weak.statusCode, 412, 'a weak tag never matches strongly')
  const unquoted = await patch(app, body.id, { name: 'Unquoted' }, { 'if-match': '1' })
  t.equal(unquoted.statusCode, 412, 'a malformed tag matches nothing')
  const emptyPatch = await patch(app, body.id, {}, { 'if-match': '"99"' })
  t.equal(emptyPatch.statusCode, 412, 'the precondition is checked even when nothing would change')
  t.same((await app.inject({ method: 'GET', url })).json(), body, 'nothing changed')

  const ok = await patch(app, body.id, { name: 'Matched' }, { 'if-match': etag })
  t.equal(ok.statusCode, 200)
  t.equal(ok.headers.etag, '"2"')
  const list = await patch(app, body.id, { name: 'Listed' }, { 'if-match': '"7", "2"' })
  t.equal(list.statusCode, 200, 'any tag of a list may match')
  const star = await patch(app, body.id, { name: 'Star' }, { 'if-match': '*' })
  t.equal(star.statusCode, 200, '* matches an existing merchant')
  t.equal(star.headers.etag, '"4"')
  const old = await patch(app, body.id, { name: 'Lost update' }, { 'if-match': etag })
  t.equal(old.statusCode, 412, 'the tag read before the other changes no longer matches')
  t.equal((await app.inject({ method: 'GET', url })).json().name, 'Star')

  const missing = await patch(app, '6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b', { name: 'x' }, { 'if-match': '*' })
  t.equal(missing.statusCode, 404, 'If-Match: * on a missing merchant is 404')
})

t.test('PATCH: another merchant\'s email (any case) is 409; one\'s own in another case is fine', async (t) => {
  const { app } = await appWithClock(t)
  const a = await createOk(t, app, { email: 'a@example.com' })
  const b = await createOk(t, app, { email: 'b@example.com' })
  const clash = await patch(app, b.body.id, { email: 'A@EXAMPLE.COM' })
  isProblem(t, clash, 409, `/merchants/${b.body.id}`)
  t.equal(clash.json().type, 'urn:problem-type:merchant-email-taken')
  t.equal((await app.inject({ method: 'GET', url: `/merchants/${b.body.id}` })).json().email, 'b@example.com')
  const own = await patch(app, a.body.id, { email: 'A@Example.com' })
  t.equal(own.statusCode, 200)
  t.equal(own.json().email, 'A@Example.com')
})

t.test('PATCH: other media types are 415 with Accept-Patch', async (t) => {
  const { app } = await appWithClock(t)
  const { body } = await createOk(t, app)
  const url = `/merchants/${body.id}`
  for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'application/json-patch+json']) {
    const res = await app.inject({ method: 'PATCH', url, headers: { 'content-type': type }, payload: '{"name":"x"}' })
    isProblem(t, res, 415, url)
    t.equal(res.headers['accept-patch'], 'application/merge-patch+json, application/json', type)
    t.match(res.json().detail, /takes application\/merge-patch\+json/)
  }
  const noType = await app.inject({ method: 'PATCH', url, payload: Buffer.from('{"name":"x"}') })
  t.equal(noType.statusCode, 415, 'a body without Content-Type')
  t.equal(noType.headers['accept-patch'], 'application/merge-patch+json, application/json')
  t.same((await app.inject({ method: 'GET', url })).json(), body, 'nothing changed')
})

t.test('POST accepts only application/json; merge-patch is for PATCH', async (t) => {
  const { app } = await appWithClock(t)
  for (const type of [MERGE_PATCH, 'text/plain']) {
    const res = await app.inject({ method: 'POST', url: '/merchants', headers: { 'content-type': type }, payload: '{"name":"a","email":"a@example.com"}' })
    isProblem(t, res, 415, '/merchants')
    t.notOk(res.headers['accept-patch'])
  }
})

t.test('invalid JSON is a 400 problem, for POST and for both PATCH media types', async (t) => {
  const { app } = await appWithClock(t)
  const { body } = await createOk(t, app)
  const post = await app.inject({ method: 'POST', url: '/merchants', headers: { 'content-type': 'application/json' }, payload: '{"name": "a",' })
  isProblem(t, post, 400, '/merchants')
  t.equal(post.json().title, 'The request body is not valid JSON.')
  for (const type of [MERGE_PATCH, 'application/json']) {
    const res = await patch(app, body.id, '{"name": ', { 'content-type': type })
    isProblem(t, res, 400, `/merchants/${body.id}`)
    t.equal(res.json().title, 'The request body is not valid JSON.', type)
  }
  const poisoned = await patch(app, body.id, '{"__proto__": {"x": 1}}')
  t.equal(poisoned.statusCode, 400, 'prototype poisoning is refused like in JSON')
})

t.test('bodies over BODY_LIMIT are 413 problems, merge patches included', async (t) => {
  const app = await buildTestApp(t, { BODY_LIMIT: '1024' })
  const big = { name: 'x'.repeat(2000), email: 'big@example.com' }
  const post = await app.inject({ method: 'POST', url: '/merchants', payload: big })
  isProblem(t, post, 413, '/merchants')
  const created = await app.inject({ method: 'POST', url: '/merchants', payload: { name: 'small', email: 'small@example.com' } })
  const id = created.json().id
  const res = await patch(app, id, { name: 'x'.repeat(2000) })
  isProblem(t, res, 413, `/merchants/${id}`)
})

const invalidCreates: Array<[string, Record<string, unknown>, string, string]> = [
  ['unknown field', { name: 'a', email: 'a@example.com', colour: 'red' }, 'colour', 'The colour field is not a recognised field.'],
  ['missing name', { email: 'a@example.com' }, 'name', 'The name field is required.'],
  ['missing email', { name: 'a' }, 'email', 'The email field is required.'],
  ['bad email', { name: 'a', email: 'not-an-email' }, 'email', 'The email field must be an email address such as name@example.com.'],
  ['email without a domain dot', { name: 'a', email: 'a@localhost' }, 'email', 'The email field must be an email address such as name@example.com.'],
  ['too long email', { name: 'a', email: `${'a'.repeat(250)}@example.com` }, 'email', 'The email field must be at most 254 characters long.'],
  ['blank name', { name: '   ', email: 'a@example.com' }, 'name', 'The name field must not be blank.'],
  ['empty name', { name: '', email: 'a@example.com' }, 'name', 'The name field must not be empty.'],
  ['too long name', { name: 'x'.repeat(201), email: 'a@example.com' }, 'name', 'The name field must be at most 200 characters long.'],
  ['numeric name', { name: 5, email: 'a@example.com' }, 'name', 'The name field must be a string.'],
  ['lower-case country', { name: 'a', email: 'a@example.com', country: 'us' }, 'country', "The country field must be an upper-case ISO 3166-1 alpha-2 code: use 'US', not 'us'."],
  ['unassigned country', { name: 'a', email: 'a@example.com', country: 'XX' }, 'country', "The country field must be an officially assigned ISO 3166-1 alpha-2 country code such as US, DE or JP; 'XX' is not one."],
  ['reserved country UK', { name: 'a', email: 'a@example.com', country: 'UK' }, 'country', "The country field must be an officially assigned ISO 3166-1 alpha-2 country code such as US, DE or JP; 'UK' is not one."],
  ['three-letter country', { name: 'a', email: 'a@example.com', country: 'USA' }, 'country', "The country field must be a two-letter ISO 3166-1 alpha-2 country code such as US, DE or JP (got 'USA')."],
  ['null country on create', { name: 'a', email: 'a@example.com', country: null }, 'country', 'The country field must be a string.'],
  ['lower-case currency', { name: 'a', email: 'a@example.com', defaultCurrency: 'eur' }, 'defaultCurrency', "The defaultCurrency field must be an upper-case ISO 4217 code: use 'EUR', not 'eur'."],
  ['historic currency', { name: 'a', email: 'a@example.com', defaultCurrency: 'DEM' }, 'defaultCurrency', "The defaultCurrency field must be an active ISO 4217 currency code such as USD, EUR or JPY; 'DEM' is not one."],
  ['junk currency', { name: 'a', email: 'a@example.com', defaultCurrency: 'dollars' }, 'defaultCurrency', "The defaultCurrency field must be a three-letter ISO 4217 currency code such as USD, EUR or JPY (got 'dollars')."],
  ['very long junk currency', { name: 'a', email: 'a@example.com', defaultCurrency: 'x'.repeat(40) }, 'defaultCurrency', 'The defaultCurrency field must be a three-letter ISO 4217 currency code such as USD, EUR or JPY.'],
  ['bad status', { name: 'a', email: 'a@example.com', status: 'closed' }, 'status', 'The status field must be one of: active, suspended.'],
  ['client id', { name: 'a', email: 'a@example.com', id: '11111111-1111-4111-8111-111111111111' }, 'id', 'The id field is assigned by the service; do not send it.'],
  ['client createdAt', { name: 'a', email: 'a@example.com', createdAt: '2020-01-01T00:00:00Z' }, 'createdAt', 'The createdAt field is set by the service when the merchant is created; do not send it.'],
  ['client updatedAt', { name: 'a', email: 'a@example.com', updatedAt: null }, 'updatedAt', 'The updatedAt field is set by the service on every change; do not send it.']
]

for (const [name, payload, field, message] of invalidCreates) {
  t.test(`POST with ${name} is a 400 problem naming ${field}`, async (t) => {
    const { app } = await appWithClock(t)
    const res = await create(app, payload)
    isProblem(t, res, 400, '/merchants')
    t.equal(res.json().title, 'One or more validation errors occurred.')
    t.equal(res.json().type, 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.1')
    t.same(res.json().errors, { [field]: [message] })
    t.notOk('detail' in res.json(), 'the messages are in errors')
  })
}

t.test('POST with several domain errors reports them all', async (t) => {
  const { app } = await appWithClock(t)
  const res = await create(app, { name: 'a', email: 'a@example.com', country: 'de', defaultCurrency: 'XAU', id: 'x' })
  t.same(Object.keys(res.json().errors).sort(), ['country', 'defaultCurrency', 'id'])
})

t.test('POST with a non-object body is a 400 problem', async (t) => {
  const { app } = await appWithClock(t)
  for (const payload of ['[1]', '"x"', 'null']) {
    const res = await app.inject({ method: 'POST', url: '/merchants', headers: { 'content-type': 'application/json' }, payload })
    isProblem(t, res, 400, '/merchants')
    t.same(res.json().errors, { $: ['The request body must be a JSON object.'] }, payload)
  }
})

const invalidPatches: Array<[string, Record<string, unknown>, string, string]> = [
  ['unknown field', { colour: 'red' }, 'colour', 'The colour field is not a recognised field.'],
  ['bad email', { email: 'nope' }, 'email', 'The email field must be an email address such as name@example.com.'],
  ['blank name', { name: ' \t ' }, 'name', 'The name field must not be blank.'],
  ['too long name', { name: 'n'.repeat(201) }, 'name', 'The name field must be at most 200 characters long.'],
  ['lower-case country', { country: 'fr' }, 'country', "The country field must be an upper-case ISO 3166-1 alpha-2 code: use 'FR', not 'fr'."],
  ['numeric country', { country: 49 }, 'country', 'The country field must be a string or null.'],
  ['historic currency', { defaultCurrency: 'FRF' }, 'defaultCurrency', "The defaultCurrency field must be an active ISO 4217 currency code such as USD, EUR or JPY; 'FRF' is not one."],
  ['bad status', { status: 'deleted' }, 'status', 'The status field must be one of: active, suspended.']
]

for (const [name, payload, field, message] of invalidPatches) {
  t.test(`PATCH with ${name} is a 400 problem naming ${field}`, async (t) => {
    const { app } = await appWithClock(t)
    const { body } = await createOk(t, app)
    const res = await patch(app, body.id, payload)
    isProblem(t, res, 400, `/merchants/${body.id}`)
    t.same(res.json().errors, { [field]: [message] })
    t.same((await app.inject({ method: 'GET', url: `/merchants/${body.id}` })).json(), body, 'nothing changed')
  })
}

t.test('unexpected store failures are a bare 500 problem', async (t) => {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  const failing = { ...db, merchants: { ...db.merchants, get: async () => { throw new Error('disk on fire at /var/secret') } } }
  const app = await buildTestApp(t, {}, { database: failing })
  const url = '/merchants/6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b'
  const res = await app.inject({ method: 'GET', url })
  isProblem(t, res, 500, url)
  t.notMatch(res.body, /disk|secret|stack/)
  t.notOk('detail' in res.json())
})

t.test('HEAD mirrors GET, including 304', async (t) => {
  const { app } = await appWithClock(t)
  const { body, etag } = await createOk(t, app)
  const head = await app.inject({ method: 'HEAD', url: `/merchants/${body.id}` })
  t.equal(head.statusCode, 200)
  t.equal(head.headers.etag, etag)
  t.equal(head.body, '')
  const cached = await app.inject({ method: 'HEAD', url: `/merchants/${body.id}`, headers: { 'if-none-match': etag } })
  t.equal(cached.statusCode, 304)
})

t.test('concurrent PATCHes through HTTP: none is lost', async (t) => {
  const { app } = await appWithClock(t)
  const { body } = await createOk(t, app)
  const results = await Promise.all([
    patch(app, body.id, { name: 'Renamed' }),
    patch(app, body.id, { country: 'FR' }),
    patch(app, body.id, { defaultCurrency: 'EUR' }),
    patch(app, body.id, { status: 'suspended' })
  ])
  for (const res of results) t.equal(res.statusCode, 200)
  const read = await app.inject({ method: 'GET', url: `/merchants/${body.id}` })
  t.match(read.json(), { name: 'Renamed', country: 'FR', defaultCurrency: 'EUR', status: 'suspended' })
  t.equal(read.headers.etag, '"5"')
})

// The service against a store that loses compare-and-set races on demand.
