import t from 'tap'
import fc from 'fast-check'
import { buildTestApp } from '../../helpers/app'
import { spyGateway } from '../../helpers/gateway'
import { createPayment, postJson, PROBLEM, refundsOf } from '../../helpers/payments'
import { formatMinorUnits, parseDecimalString, toMinorUnits } from '../../../src/domain/money'
import { MAX_PAYMENT_AMOUNT } from '../../../src/domain/payments'

const captureUrl = (id: string) => `/api/payments/${id}/capture`
const PATTERN_MESSAGE = 'The amount field must be a number, or a string holding a decimal number such as "10.10" (digits and an optional decimal point with digits after it; no sign, exponent, spaces or leading zeros).'

/** Strings that are not decimals: refused by the pattern, whatever the currency. */
const notDecimals = ['1e3', ' 10', '10 ', '10.', '.5', '-1', '+1', '0x10', '010', '1,5', '10.1.1', '', 'NaN', 'Infinity', '１０', '10\n']

t.test('a payment amount sent as a decimal string is charged as the number it denotes; the answer carries a number', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  for (const [amount, currency, minor, number] of [['10.10', 'USD', 1010, 10.1], ['10.1', 'USD', 1010, 10.1], ['7', 'USD', 700, 7], ['0.01', 'USD', 1, 0.01],
    ['1000', 'JPY', 1000, 1000], ['1.250', 'BHD', 1250, 1.25], ['10.100', 'USD', 1010, 10.1], ['1.00000000000000000000000000000000', 'JPY', 1, 1], ['1000000000', 'USD', 100000000000, 1e9]] as const) {
    const res = await app.inject(postJson('/api/payments', { amount, currency }))
    t.equal(res.statusCode, 201, `${amount} ${currency}`)
    t.equal(res.json().amount, number, `${amount} ${currency}: the response amount is a number`)
    t.equal(gateway.calls.at(-1)?.amountMinor, minor, `${amount} ${currency}: charged exactly`)
  }
})

t.test('payment amount strings: not a decimal, zero, too many decimals or too large are 400 errors.amount, never charged', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const cases: Array<[string, string, string | RegExp]> = [
    ...notDecimals.map((amount): [string, string, string] => [amount, 'USD', PATTERN_MESSAGE]),
    ['0', 'USD', 'The amount field must be positive (greater than 0).'],
    ['0.00', 'USD', 'The amount field must be positive (greater than 0).'],
    ['10.001', 'USD', 'The amount field must have at most 2 decimal places for USD.'],
    ['10.100000000000000001', 'USD', 'The amount field must have at most 2 decimal places for USD.'],
    ['10.10000000000000000000000000000001', 'USD', 'The amount field must have at most 2 decimal places for USD.'],
    ['10.5', 'JPY', 'The amount field must be a whole number for JPY, which has no minor unit.'],
    ['1000000000.01', 'USD', 'The amount field must be at most 1000000000.'],
    ['99999999999999999999999', 'USD', 'The amount field must be at most 1000000000.'],
    ['1'.repeat(33), 'USD', 'The amount field must be at most 1000000000.']
  ]
  for (const [amount, currency, message] of cases) {
    const res = await app.inject(postJson('/api/payments', { amount, currency }))
    t.equal(res.statusCode, 400, JSON.stringify(amount))
    t.equal(res.headers['content-type'], PROBLEM)
    t.same(res.json().errors, { amount: [message] }, JSON.stringify(amount))
  }
  const both = await app.inject(postJson('/api/payments', { amount: '1e3', currency: 'usd' }))
  t.same(Object.keys(both.json().errors).sort(), ['amount', 'currency'], 'a bad amount string and a bad currency are reported together')
  t.equal(gateway.calls.length, 0, 'nothing reached the gateway')
  t.equal(await app.db.payments.count(), 0, 'nothing was stored')
})

t.test('"10.10" then 10.1 under one Idempotency-Key is the same request: the second is a replay, one charge', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const first = await app.inject(postJson('/api/payments', { amount: '10.10', currency: 'USD' }, 'same-amount'))
  t.equal(first.statusCode, 201)
  for (const body of ['{"amount":10.1,"currency":"USD"}', '{"currency":"USD","amount":10.10}', '{"amount":"10.1","currency":"USD"}']) {
    const replay = await app.inject(postJson('/api/payments', body, 'same-amount'))
    t.equal(replay.statusCode, 201, body)
    t.equal(replay.headers['idempotent-replayed'], 'true', `${body}: replayed`)
    t.equal(replay.body, first.body, `${body}: the stored answer, byte for byte`)
  }
  const other = await app.inject(postJson('/api/payments', { amount: '10.11', currency: 'USD' }, 'same-amount'))
  t.equal(other.statusCode, 409, 'another amount is another request')
  t.match(other.json(), { type: 'urn:problem-type:idempotency-key-reused' })
  t.equal(gateway.calls.length, 1, 'charged once')
})

t.test('refund amounts as decimal strings: partial refund exact, replays across forms, invalid strings 400', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, { amount: '10.10', currency: 'USD' })
  const refund = await app.inject(postJson(refundsOf(payment.id), { amount: '2.50' }, 'refund-1'))
  t.equal(refund.statusCode, 201)
  t.equal(refund.json().amount, 2.5)
  t.equal(gateway.refunds.at(-1)?.amountMinor, 250)
  const replay = await app.inject(postJson(refundsOf(payment.id), { amount: 2.5 }, 'refund-1'))
  t.equal(replay.headers['idempotent-replayed'], 'true', 'the number form replays the string form')
  t.equal(replay.body, refund.body)
  for (const amount of ['2.5e0', '-1', '1.001', '0']) {
    const res = await app.inject(postJson(refundsOf(payment.id), { amount }))
    t.equal(res.statusCode, 400, amount)
    t.ok(res.json().errors.amount, `${amount}: errors.amount`)
  }
  const tooMuch = await app.inject(postJson(refundsOf(payment.id), { amount: '7.61' }))
  t.match(tooMuch.json(), { status: 409, type: 'urn:problem-type:refund-exceeds-remaining', requestedAmount: 7.61, remainingAmount: 7.6 })
  t.equal(gateway.refunds.length, 1, 'one refund reached the gateway')
})

t.test('capture amounts as decimal strings: captured exactly; invalid strings 400 and never reach the gateway', async (t) => {
  const gateway = spyGateway(() => ({ outcome: 'authorized', chargeId: 'ch_1' }))
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, { amount: '10.10', currency: 'USD', captureMethod: 'manual' })
  for (const amount of ['7.', '7.505', '10.11', ' 7']) {
    const res = await app.inject(postJson(captureUrl(payment.id), { amount }))
    t.equal(res.statusCode, 400, amount)
    t.ok(res.json().errors.amount, `${amount}: errors.amount`)
  }
  t.equal(gateway.captures.length, 0)
  const captured = await app.inject(postJson(captureUrl(payment.id), { amount: '7.50' }))
  t.equal(captured.statusCode, 200)
  t.match(captured.json(), { status: 'succeeded', amountCaptured: 7.5 })
  t.equal(gateway.captures.at(-1)?.amountMinor, 750)
})

t.test('every decimal string of an accepted amount parses to exactly its minor units', async (t) => {
  const wrong: string[] = []
  fc.assert(fc.property(fc.constantFrom(0, 2, 3), fc.integer({ min: 1, max: MAX_PAYMENT_AMOUNT }), fc.integer({ min: 0, max: 999 }), (exponent, major, fraction) => {
    const minor = major * 10 ** exponent + (fraction % 10 ** exponent)
    if (minor > MAX_PAYMENT_AMOUNT * 10 ** exponent) return
    const text = formatMinorUnits(minor, exponent)
    const parsed = parseDecimalString(text)
    if (parsed === undefined || parsed.decimalPlaces > exponent || toMinorUnits(parsed.amount, exponent) !== minor) wrong.push(text)
  }), { numRuns: 5000 })
  t.same(wrong, [], '5,000 amounts of 0, 2 and 3 decimals up to 1000000000: each parsed exactly')
  for (const text of notDecimals) t.equal(parseDecimalString(text), undefined, JSON.stringify(text))
})
