/**
 * paymentMethod on POST /api/payments: a connector's token reaches the gateway and is shown on the
 * payment; anything that looks like a card number (13-19 digits passing Luhn, with spaces or dashes)
 * is a 400 that never reaches the gateway, is never stored and never appears in a log line.
 */
import t from 'tap'
import { buildTestApp } from '../../helpers/app'
import { spyGateway } from '../../helpers/gateway'
import { looksLikeCardNumber } from '../../../src/domain/payments'

t.test('card numbers are recognised by length and Luhn, with or without separators', async (t) => {
  for (const card of ['4242424242424242', '4242 4242 4242 4242', '4242-4242-4242-4242', '378282246310005', '6011111111111117', '4000056655665556']) {
    t.ok(looksLikeCardNumber(card), card)
  }
  for (const other of ['pm_card_visa', '4242424242424241', '424242424242', '42424242424242424242', '4242 4242 4242 424x', '12345678901234', '']) {
    t.notOk(looksLikeCardNumber(other), other)
  }
})

t.test('a payment method token reaches the gateway and is shown on the payment', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const res = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 10, currency: 'USD', paymentMethod: 'pm_card_visa' } })
  t.equal(res.statusCode, 201)
  t.match(res.json(), { paymentMethod: 'pm_card_visa', connector: { id: null, type: 'simulated' }, attempts: [{ outcome: 'succeeded', connectorId: null }] })
  t.equal(gateway.calls[0]?.paymentMethod, 'pm_card_visa')
})

t.test('a card number is 400 errors.paymentMethod: not charged, not stored, not logged', async (t) => {
  const gateway = spyGateway()
  const lines: string[] = []
  const app = await buildTestApp(t, {}, { gateway, logger: { level: 'trace', stream: { write: (line: string) => { lines.push(line) } } } })
  for (const card of ['4242424242424242', '4242 4242 4242 4242', '4000-0566-5566-5556']) {
    const res = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'idempotency-key': `card-${card}` }, payload: { amount: 10, currency: 'USD', paymentMethod: card } })
    t.equal(res.statusCode, 400)
    const body = res.json()
    t.match(body.errors, { paymentMethod: [/looks like a card number/] })
    t.notOk(res.body.includes(card), 'the answer does not repeat it')
  }
  const noCurrency = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 10, paymentMethod: '4242424242424242' } })
  t.equal(noCurrency.statusCode, 400)
  t.ok(noCurrency.json().errors.paymentMethod, 'reported with the other validation errors')
  t.equal(gateway.calls.length, 0)
  t.equal(await app.db.payments.count(), 0)
  t.ok(lines.length > 0, 'the requests were logged')
  t.notOk(lines.some((line) => /4242.?4242.?4242.?4242|4000.?0566/.test(line)), 'no log line holds the number')
})

t.test('paymentMethods: tokens per connector are shown on the payment; a card number among them is 400 and not logged', async (t) => {
  const gateway = spyGateway()
  const lines: string[] = []
  const app = await buildTestApp(t, {}, { gateway, logger: { level: 'trace', stream: { write: (line: string) => { lines.push(line) } } } })
  const ok = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 10, currency: 'USD', paymentMethods: { stripe: 'pm_card_visa', adyen: 'stored_visa' }, shopperReference: 'shopper-1' } })
  t.equal(ok.statusCode, 201)
  t.match(ok.json(), { paymentMethods: { stripe: 'pm_card_visa', adyen: 'stored_visa' }, shopperReference: 'shopper-1' })
  const card = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 10, currency: 'USD', paymentMethods: { adyen: '4000 0566 5566 5556' } } })
  t.equal(card.statusCode, 400)
  t.match(card.json().errors, { paymentMethods: [/paymentMethods\.adyen field looks like a card number/] })
  const badKey = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 10, currency: 'USD', paymentMethods: { 'Not A Key': 'x' } } })
  t.equal(badKey.statusCode, 400, 'keys are connector types or connector ids')
  t.notOk(lines.some((line) => /4000.?0566/.test(line)))
  t.equal(gateway.calls.length, 1)
})
