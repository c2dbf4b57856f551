import t from 'tap'
import { buildTestApp } from '../../helpers/app'
import { spyGateway, unavailable } from '../../helpers/gateway'
import { canTransition, IllegalTransitionError, newPendingPayment, transition } from '../../../src/domain/payments'

const PROBLEM = 'application/problem+json; charset=utf-8'
const JSON_UTF8 = 'application/json; charset=utf-8'
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

t.test('a valid payment is charged once and answered 201 with Location', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const res = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 10.1, currency: 'USD' } })
  t.equal(res.statusCode, 201)
  t.equal(res.headers['content-type'], JSON_UTF8)
  const body = res.json()
  t.match(body.id, GUID)
  t.equal(body.status, 'succeeded')
  t.equal(body.amount, 10.1)
  t.equal(body.currency, 'USD')
  t.ok(Date.parse(body.createdAt))
  t.equal(res.headers.location, `/api/payments/${body.id}`)
  t.ok(String(res.headers.location).endsWith(body.id))
  t.equal(gateway.calls.length, 1)
  t.same(gateway.calls[0], { idempotencyKey: `payment-${body.id}`, paymentId: body.id, amountMinor: 1010, amount: '10.10', currency: 'USD', captureMethod: 'automatic' })
  const read = await app.inject({ method: 'GET', url: res.headers.location as string })
  t.equal(read.statusCode, 200)
  t.same(read.json(), body)
})

t.test('amount <= 0 is a validation problem with exactly one message for amount, and no gateway call', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  for (const amount of [0, -1, -0.01]) {
    const res = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'x-request-id': 'trace-1' }, payload: { amount, currency: 'USD' } })
    t.equal(res.statusCode, 400)
    t.equal(res.headers['content-type'], PROBLEM)
    t.same(res.json(), {
      type: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.1',
      title: 'One or more validation errors occurred.',
      status: 400,
      instance: '/api/payments',
      traceId: 'trace-1',
      errors: { amount: ['The amount field must be positive (greater than 0).'] }
    })
  }
  t.equal(gateway.calls.length, 0, 'the gateway was never called')
  t.equal(await app.db.payments.count(), 0, 'nothing was stored')
})

const invalidRequests: Array<[string, unknown, string, string]> = [
  ['missing amount', { currency: 'USD' }, 'amount', 'The amount field is required.'],
  ['missing currency', { amount: 1 }, 'currency', 'The currency field is required.'],
  ['boolean amount', { amount: true, currency: 'USD' }, 'amount', 'The amount field must be a number or a string.'],
  ['string amount that is not a decimal', { amount: '1e3', currency: 'USD' }, 'amount', 'The amount field must be a number, or a string holding a decimal number such as "10.10" (digits and an optional decimal point with digits after it; no sign, exponent, spaces or leading zeros).'],
  ['amount above the bound', { amount: 1_000_000_001, currency: 'USD' }, 'amount', 'The amount field must be at most 1000000000.'],
  ['lower-case currency', { amount: 1, currency: 'usd' }, 'currency', "The currency field must be an upper-case ISO 4217 code: use 'USD', not 'usd'."],
  ['unknown currency', { amount: 1, currency: 'XYZ' }, 'currency', "The currency field must be an active ISO 4217 currency code such as USD, EUR or JPY; 'XYZ' is not one."],
  ['historic currency', { amount: 1, currency: 'DEM' }, 'currency', "The currency field must be an active ISO 4217 currency code such as USD, EUR or JPY; 'DEM' is not one."],
  ['too many decimals for USD', { amount: 1.001, currency: 'USD' }, 'amount', 'The amount field must have at most 2 decimal places for USD.'],
  ['decimals for JPY', { amount: 100.5, currency: 'JPY' }, 'amount', 'The amount field must be a whole number for JPY, which has no minor unit.'],
  ['too many decimals for BHD', { amount: 1.0001, currency: 'BHD' }, 'amount', 'The amount field must have at most 3 decimal places for BHD.'],
  ['tiny amount in exponent form', { amount: 1e-7, currency: 'USD' }, 'amount', 'The amount field must have at most 2 decimal places for USD.'],
  ['unknown field', { amount: 1, currency: 'USD', note: 'x' }, 'note', 'The note field is not a recognised field.'],
  ['array body', [], '$', 'The request body must be a JSON object.']
]

for (const [name, payload, field, message] of invalidRequests) {
  t.test(`${name} → 400 problem naming ${field}; gateway not called`, async (t) => {
    const gateway = spyGateway()
    const app = await buildTestApp(t, {}, { gateway })
    const res = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) })
    t.equal(res.statusCode, 400)
    t.equal(res.headers['content-type'], PROBLEM)
    const problem = res.json()
    t.equal(problem.title, 'One or more validation errors occurred.')
    t.same(problem.errors, { [field]: [message] })
    t.equal(gateway.calls.length, 0)
  })
}

t.test('precision per currency: the minor unit is accepted exactly', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const cases: Array<[number, string, number, string]> = [
    [100, 'JPY', 100, '100'],
    [1.234, 'BHD', 1234, '1.234'],
    [0.01, 'USD', 1, '0.01'],
    [999999999.99, 'EUR', 99999999999, '999999999.99'],
    [0.0001, 'CLF', 1, '0.0001']
  ]
  for (const [amount, currency, minor, decimal] of cases) {
    const res = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount, currency } })
    t.equal(res.statusCode, 201, `${amount} ${currency}`)
    t.equal(res.json().amount, amount, 'read back exactly as sent')
    const call = gateway.calls.at(-1)
    t.equal(call?.amountMinor, minor)
    t.equal(call?.amount, decimal)
  }
})

t.test('money round-trips exactly: 10.1 stays 10.1, 0.1 + 0.2 style values do not drift', async (t) => {
  const app = await buildTestApp(t)
  for (const amount of [10.1, 0.3, 1.1, 19.99, 1234567.89, 0.07]) {
    const created = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount, currency: 'USD' } })
    t.equal(created.statusCode, 201)
    t.match(created.body, `"amount":${amount},`)
    const read = await app.inject({ method: 'GET', url: created.headers.location as string })
    t.match(read.body, `"amount":${amount},`, `${amount} read back exactly`)
  }
})

t.test('simulated gateway: each documented outcome', async (t) => {
  const app = await buildTestApp(t, { GATEWAY_TIMEOUT_MS: '100' })

  const ok = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 42, currency: 'EUR' } })
  t.equal(ok.statusCode, 201)
  t.equal(ok.json().status, 'succeeded')

  for (const amount of [2000, 2500.5, 2999.99]) {
    const declined = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'x-request-id': 'decl' }, payload: { amount, currency: 'USD' } })
    t.equal(declined.statusCode, 402, `${amount} is declined`)
    t.equal(declined.headers['content-type'], PROBLEM)
    const problem = declined.json()
    t.match(problem, {
      type: 'urn:problem-type:payment-declined',
      title: 'The payment was declined.',
      status: 402,
      detail: String,
      instance: '/api/payments',
      traceId: 'decl',
      declineCode: 'card_declined'
    })
    t.match(problem.paymentId, GUID)
    const stored = await app.inject({ method: 'GET', url: `/api/payments/${problem.paymentId as string}` })
    t.equal(stored.statusCode, 200)
    t.equal(stored.json().status, 'declined')
    t.equal(stored.json().declineCode, 'card_declined')
  }
  const edge = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 1999.99, currency: 'USD' } })
  t.equal(edge.statusCode, 201, '1999.99 succeeds')
  const above = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 3000, currency: 'USD' } })
  t.equal(above.statusCode, 201, '3000.00 succeeds')

  for (const [amount, word] of [[5001, 'unavailable'], [5002, 'did not answer in time']] as const) {
    const res = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount, currency: 'USD' } })
    t.equal(res.statusCode, 503, `${amount} → 503`)
    t.equal(res.headers['content-type'], PROBLEM)
    t.equal(res.headers['retry-after'], '5')
    const problem = res.json()
    t.equal(problem.type, 'urn:problem-type:gateway-unavailable')
    t.match(problem.detail, word)
    const stored = await app.inject({ method: 'GET', url: `/api/payments/${problem.paymentId as string}` })
    t.equal(stored.json().status, 'pending', 'the outcome is unknown, so the payment stays pending')
  }
})

t.test('the simulated ledger never charges the same downstream key twice', async (t) => {
  const app = await buildTestApp(t)
  const charge = { idempotencyKey: 'k-1', paymentId: 'p', amountMinor: 100, amount: '1.00', currency: 'USD' }
  const first = await app.gateway.charge(charge)
  const second = await app.gateway.charge({ ...charge, amountMinor: 999, amount: '9.99' })
  t.same(second, first)
  t.equal(await app.db.ledger.count(), 1)
})

t.test('gateway outage through an injected fake: 503, payment pending', async (t) => {
  const gateway = spyGateway(unavailable)
  const app = await buildTestApp(t, {}, { gateway })
  const res = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 5, currency: 'USD' } })
  t.equal(res.statusCode, 503)
  const payment = await app.db.payments.get(res.json().paymentId)
  t.equal(payment?.status, 'pending')
})

t.test('GET: unknown and non-GUID ids are 404 problems', async (t) => {
  const app = await buildTestApp(t)
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-guid', '1']) {
    const res = await app.inject({ method: 'GET', url: `/api/payments/${id}` })
    t.equal(res.statusCode, 404, id)
    t.equal(res.headers['content-type'], PROBLEM)
    t.match(res.json(), { type: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.5', title: 'Not Found', status: 404, instance: `/api/payments/${id}` })
  }
})

t.test('framework failures in the payments area are problem documents', async (t) => {
  const app = await buildTestApp(t, { BODY_LIMIT: '1024' })
  const invalidJson = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'content-type': 'application/json' }, payload: '{"amount":' })
  t.equal(invalidJson.statusCode, 400)
  t.equal(invalidJson.headers['content-type'], PROBLEM)
  t.match(invalidJson.json(), { title: 'The request body is not valid JSON.', status: 400, detail: 'invalid JSON' })

  const tooLarge = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ amount: 1, currency: 'USD', pad: 'x'.repeat(2000) }) })
  t.equal(tooLarge.statusCode, 413)
  t.equal(tooLarge.headers['content-type'], PROBLEM)
  t.match(tooLarge.json(), { status: 413, title: 'Payload Too Large' })

  const wrongType = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'content-type': 'text/plain' }, payload: 'amount=1' })
  t.equal(wrongType.statusCode, 415)
  t.equal(wrongType.headers['content-type'], PROBLEM)

  const unknown = await app.inject({ method: 'GET', url: '/api/nothing-here' })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.headers['content-type'], PROBLEM)
})

t.test('429 in the payments area is a problem document with Retry-After', async (t) => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '1' })
  await app.inject({ method: 'GET', url: '/api/payments/x' })
  const limited = await app.inject({ method: 'GET', url: '/api/payments/x' })
  t.equal(limited.statusCode, 429)
  t.equal(limited.headers['content-type'], PROBLEM)
  t.ok(Number(limited.headers['retry-after']) >= 1)
  t.match(limited.json(), { status: 429, type: 'https://www.rfc-editor.org/rfc/rfc6585#section-4' })
})

t.test('a 500 carries a generic title only, and is logged with the request id', async (t) => {
  const logs: Array<Record<string, any>> = []
  const gateway = spyGateway(() => { throw new Error('secret connection string postgres://admin:pw@db') })
  const app = await buildTestApp(t, {}, { gateway, logger: { level: 'error', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } })
  const res = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'x-request-id': 'boom-1' }, payload: { amount: 1, currency: 'USD' } })
  t.equal(res.statusCode, 500)
  t.equal(res.headers['content-type'], PROBLEM)
  t.same(res.json(), {
    type: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.6.1',
    title: 'An unexpected error occurred.',
    status: 500,
    instance: '/api/payments',
    traceId: 'boom-1'
  })
  t.notMatch(res.body, /secret|postgres|stack/)
  const entry = logs.find((line) => line.msg === 'unhandled error')
  t.equal(entry?.requestId, 'boom-1')
})

t.test('state transitions: only pending → succeeded | declined', async (t) => {
  const pending = newPendingPayment({ id: 'p', amountMinor: 1, currency: 'USD', at: 'a' })
  t.equal(transition(pending, 'succeeded', 'b').status, 'succeeded')
  t.same(transition(pending, 'declined', 'b', 'card_declined'), { ...pending, status: 'declined', declineCode: 'card_declined', updatedAt: 'b' })
  t.notOk(canTransition('succeeded', 'declined'))
  t.notOk(canTransition('declined', 'succeeded'))
  t.notOk(canTransition('pending', 'pending'))
  t.throws(() => transition({ ...pending, status: 'succeeded' }, 'declined', 'c'), IllegalTransitionError)
  t.throws(() => transition({ ...pending, status: 'declined' }, 'pending', 'c'), IllegalTransitionError)
})
