/**
 * Issue 44: a payment's customer (as the merchant sends it) and its payment method details (from the
 * connector's answer), and the list's customerEmail, amount and last4 filters.
 */
import t from 'tap'
import { buildTestApp, merchantWithKey } from '../../helpers/app'
import { FakeStripe } from '../../helpers/fake-stripe'
import { FAKE_ADYEN_API_KEY, FAKE_ADYEN_MERCHANT, FakeAdyen } from '../../helpers/fake-adyen'
import { HMAC_KEY } from '../../helpers/adyen-notifications'

const ids = (res: { json: () => { data: Array<{ id: string }> } }): string[] => res.json().data.map((p) => p.id)

t.test('POST /api/payments takes a customer and answers the simulated card; GET filters by customerEmail, amount and last4', async (t) => {
  const app = await buildTestApp(t)
  const create = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await app.inject({ method: 'POST', url: '/api/payments', headers, payload: body })
    t.equal(res.statusCode, 201, JSON.stringify(res.json()))
    return res.json()
  }
  const jane = await create({ amount: 35, currency: 'USD', customer: { email: 'Jane.Doe@example.com', name: 'Jane Doe', reference: 'cus-1' } })
  t.same(jane.customer, { email: 'Jane.Doe@example.com', name: 'Jane Doe', reference: 'cus-1' }, 'as sent')
  t.same(jane.paymentMethodDetails, { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2034, country: 'US' } }, 'the simulated Visa')
  const master = await create({ amount: 35, currency: 'JPY', paymentMethod: 'pm_card_mastercard', customer: { email: 'jane.doe@example.com' } })
  t.match(master.paymentMethodDetails, { type: 'card', card: { brand: 'mastercard', last4: '4444' } })
  const plain = await create({ amount: 12.5, currency: 'EUR' })
  t.equal(plain.customer, undefined, 'no customer: no member')
  const read = await app.inject(`/api/payments/${jane.id as string}`)
  t.same(read.json().customer, jane.customer, 'stored')
  t.same(read.json().paymentMethodDetails, jane.paymentMethodDetails)
  const bob = await merchantWithKey(app)
  await create({ amount: 35, currency: 'USD', customer: { email: 'jane.doe@example.com' } }, bob.auth)

  t.same(ids(await app.inject('/api/payments?customerEmail=JANE.DOE%40EXAMPLE.COM')), [master.id, jane.id], 'case-insensitive; not Bob\'s')
  t.same(ids(await app.inject('/api/payments?amount=35')), [master.id, jane.id], 'USD 35.00 and JPY 35')
  t.same(ids(await app.inject('/api/payments?amount=35.00')), [master.id, jane.id], '35.00 is 35')
  t.same(ids(await app.inject('/api/payments?amount=12.5')), [plain.id])
  t.same(ids(await app.inject('/api/payments?last4=4444')), [master.id])
  t.same(ids(await app.inject('/api/payments?last4=4242&customerEmail=jane.doe%40example.com&amount=35&status=succeeded')), [jane.id], 'filters combine')

  const refused: Array<[string, string]> = [['amount=0', 'amount'], ['amount=abc', 'amount'], ['amount=-5', 'amount'], ['last4=12', 'last4'], ['last4=abcd', 'last4'], ['customerEmail=', 'customerEmail']]
  for (const [query, field] of refused) {
    const res = await app.inject(`/api/payments?${query}`)
    t.equal(res.statusCode, 400, query)
    t.match(res.json(), { status: 400, errors: { [field]: Array } }, query)
  }
  for (const customer of [{ name: 'No Email' }, { email: 'not-an-email' }, { email: 'a@example.com', phone: '+1' }, 'a@example.com']) {
    const res = await app.inject({ method: 'POST', url: '/api/payments', payload: { amount: 5, currency: 'USD', customer } })
    t.equal(res.statusCode, 400, JSON.stringify(customer))
    t.match(Object.keys(res.json().errors ?? {}).join(' '), /customer/, JSON.stringify(customer))
  }
})

t.test('Stripe and Adyen payments carry the card their answers name (local stand-ins)', async (t) => {
  const stripe = await FakeStripe.start()
  stripe.keys.add('sk_test_customers')
  const adyen = await FakeAdyen.start()
  t.teardown(async () => { await stripe.close(); await adyen.close() })
  const app = await buildTestApp(t, { STRIPE_API_URL: stripe.url, ADYEN_CHECKOUT_URL: adyen.url, GATEWAY: 'none' })
  const merchant = await merchantWithKey(app)
  const connector = async (body: Record<string, unknown>): Promise<string> => {
    const res = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: merchant.auth, payload: body })
    t.equal(res.statusCode, 201)
    return res.json().id
  }
  const stripeId = await connector({ type: 'stripe', credentials: { secretKey: 'sk_test_customers' }, priority: 0 })
  const paid = await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 20, currency: 'USD', paymentMethod: 'pm_card_visa', customer: { email: 'a@example.com' } } })
  t.equal(paid.statusCode, 201, paid.body)
  t.same(paid.json().paymentMethodDetails, { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2034, country: 'US' } }, 'Stripe\'s expanded charge, no fingerprint')

  await app.inject({ method: 'PATCH', url: `/merchants/${merchant.merchantId}/connectors/${stripeId}`, headers: merchant.auth, payload: { status: 'disabled' } })
  await connector({ type: 'adyen', credentials: { apiKey: FAKE_ADYEN_API_KEY, merchantAccount: FAKE_ADYEN_MERCHANT, hmacKey: HMAC_KEY }, priority: 1 })
  const viaAdyen = await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 20, currency: 'EUR', paymentMethods: { adyen: 'stored_visa' }, shopperReference: 'shopper_42' } })
  t.equal(viaAdyen.statusCode, 201, viaAdyen.body)
  t.same(viaAdyen.json().paymentMethodDetails, { type: 'card', card: { brand: 'visa', last4: '1111', expMonth: 3, expYear: 2030, country: 'NL' } }, 'Adyen\'s additionalData, no BIN or holder')
  t.same(ids(await app.inject({ url: '/api/payments?last4=1111', headers: merchant.auth })), [viaAdyen.json().id])
})
