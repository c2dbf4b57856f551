import t from 'tap'
import { AmountNotExpressibleError, fromStripeAmount, stripeDecimals, toStripeAmount } from '../../../src/gateway/stripe/amounts'

t.test('two-decimal currencies pass through: USD 10.00 is 1000, HUF and TWD too', async (t) => {
  t.equal(toStripeAmount(1000, 'USD'), 1000)
  t.equal(toStripeAmount(1050, 'HUF'), 1050)
  t.equal(toStripeAmount(1050, 'TWD'), 1050)
  t.equal(fromStripeAmount(1000, 'usd'), 1000)
})

t.test('zero-decimal currencies are not multiplied: JPY 500 is 500, UGX too', async (t) => {
  t.equal(stripeDecimals('jpy'), 0)
  t.equal(toStripeAmount(500, 'JPY'), 500)
  t.equal(toStripeAmount(5000, 'UGX'), 5000)
  t.equal(fromStripeAmount(500, 'JPY'), 500)
})

t.test('ISK: zero-decimal for ISO, two-decimal in Stripe\'s API (ISK 5 is 500)', async (t) => {
  t.equal(toStripeAmount(5, 'ISK'), 500)
  t.equal(fromStripeAmount(500, 'ISK'), 5)
})

t.test('MGA: two minor units for ISO, zero-decimal for Stripe; a fraction cannot be sent', async (t) => {
  t.equal(toStripeAmount(15000, 'MGA'), 150)
  t.equal(fromStripeAmount(150, 'MGA'), 15000)
  t.throws(() => toStripeAmount(150, 'MGA'), AmountNotExpressibleError)
})

t.test('three-decimal currencies: the last digit must be 0, never rounded', async (t) => {
  t.equal(stripeDecimals('KWD'), 3)
  t.equal(toStripeAmount(5120, 'KWD'), 5120)
  t.throws(() => toStripeAmount(5124, 'KWD'), AmountNotExpressibleError)
  t.throws(() => toStripeAmount(100, 'XXX'), AmountNotExpressibleError, 'an unknown currency')
})
