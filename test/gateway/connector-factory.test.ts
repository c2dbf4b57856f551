import t from 'tap'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { connectorFactory, CredentialsRefusedError } from '../../src/gateway/connectors'
import { FakeStripe } from '../helpers/fake-stripe'
import { FAKE_ADYEN_API_KEY, FAKE_ADYEN_MERCHANT, FakeAdyen } from '../helpers/fake-adyen'
import { connectorRegistry } from '../../src/gateway/registry'
import { testConfig } from '../helpers/app'

t.test('the factory builds a Stripe connector on STRIPE_API_URL with the account\'s secret key', async (t) => {
  const fake = await FakeStripe.start()
  t.teardown(async () => { await fake.close() })
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const factory = connectorFactory({ ledger: db.ledger, config: testConfig({ STRIPE_API_URL: fake.url, GATEWAY_TIMEOUT_MS: '1000' }) }, connectorRegistry())

  const connector = factory('stripe', { secretKey: 'sk_test_fake' }, 'conn_1')
  await connector.verify()
  t.match(await connector.gateway.charge({ idempotencyKey: 'payment:pay_f1', paymentId: 'pay_f1', paymentMethod: 'pm_card_visa', amountMinor: 1000, amount: '10.00', currency: 'USD' }),
    { outcome: 'succeeded', chargeId: /^pi_/ })
  t.same(fake.requests.map((request) => [request.method, request.path, request.headers.authorization]), [
    ['GET', '/v1/balance', 'Bearer sk_test_fake'],
    ['POST', '/v1/payment_intents', 'Bearer sk_test_fake']
  ])
  await t.rejects(factory('stripe', { secretKey: 'sk_test_other' }, 'conn_2').verify(), CredentialsRefusedError)
  t.throws(() => factory('stripe', {}, 'conn_3'), CredentialsRefusedError, 'no secret key')
})

t.test('the factory builds an Adyen connector on ADYEN_CHECKOUT_URL with the account\'s API key and merchant account', async (t) => {
  const fake = await FakeAdyen.start()
  t.teardown(async () => { await fake.close() })
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const factory = connectorFactory({ ledger: db.ledger, config: testConfig({ STRIPE_API_URL: 'http://127.0.0.1:9', ADYEN_CHECKOUT_URL: fake.url, GATEWAY_TIMEOUT_MS: '1000' }) }, connectorRegistry())
  const credentials = { apiKey: FAKE_ADYEN_API_KEY, merchantAccount: FAKE_ADYEN_MERCHANT, hmacKey: '00'.repeat(32) }
  const connector = factory('adyen', credentials, 'conn_a1')
  await connector.verify()
  t.match(await connector.gateway.charge({ idempotencyKey: 'payment-pay_a1', paymentId: 'pay_a1', paymentMethod: 'stored_visa', shopperReference: 'shopper_1', amountMinor: 1000, amount: '10.00', currency: 'EUR' }),
    { outcome: 'succeeded', chargeId: /^FAKE/ })
  t.same(fake.requests.map((request) => [request.path, request.headers['x-api-key']]), [['/v72/paymentMethods', FAKE_ADYEN_API_KEY], ['/v72/payments', FAKE_ADYEN_API_KEY]])
  t.throws(() => factory('adyen', { merchantAccount: FAKE_ADYEN_MERCHANT }, 'conn_a2'), CredentialsRefusedError, 'no API key')
})

t.test('a type the registry lacks is a bug of the caller, named', async (t) => {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const factory = connectorFactory({ ledger: db.ledger, config: testConfig() }, connectorRegistry())
  t.throws(() => factory('paypal', {}, 'conn_p1'), /no connector module of type paypal: this instance has simulated, stripe, adyen/)
})
