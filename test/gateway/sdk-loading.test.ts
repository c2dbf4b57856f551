/**
 * The PSP SDKs are loaded when a connector of their type is first built (or a Stripe event first verified), not
 * at start-up: the Adyen library's index alone costs about a second of it. Its own process (tap runs each file in
 * one), so nothing else has loaded them before.
 */
import t from 'tap'
import { buildTestApp } from '../helpers/app'

const loaded = (pattern: RegExp): boolean => Object.keys(require.cache).some((path) => pattern.test(path))
const STRIPE_SDK = /[/\\]node_modules[/\\]stripe[/\\]/
const ADYEN_INDEX = /[/\\]@adyen[/\\]api-library[/\\]lib[/\\]src[/\\]index\.js$/

t.test('a started service has not loaded Stripe\'s SDK or the Adyen library; building a connector of each type loads its own', async (t) => {
  const app = await buildTestApp(t)
  t.equal(loaded(STRIPE_SDK), false, 'Stripe\'s SDK is not loaded at start-up')
  t.equal(loaded(ADYEN_INDEX), false, 'nor the Adyen library\'s index')
  t.ok(loaded(/hmacValidator\.js$/), 'only the Adyen notification validator\'s own module is')

  app.connectorFactory('stripe', { secretKey: 'sk_test_lazy' }, 'conn_lazy_stripe')
  t.equal(loaded(STRIPE_SDK), true, 'a Stripe connector loads Stripe\'s SDK')
  t.equal(loaded(ADYEN_INDEX), false)
  app.connectorFactory('adyen', { apiKey: 'key', merchantAccount: 'Merchant' }, 'conn_lazy_adyen')
  t.equal(loaded(ADYEN_INDEX), true, 'an Adyen connector loads the Adyen library')
})
