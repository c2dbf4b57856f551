import t from 'tap'
import { adyenConnector } from '../../../src/gateway/adyen/connector'
import { FAKE_ADYEN_API_KEY, FAKE_ADYEN_MERCHANT, FakeAdyen } from '../../helpers/fake-adyen'
import { connectorContract } from '../connector-contract'

const charge = (paymentId: string, paymentMethod: string, amount = '10.00') => ({
  idempotencyKey: `payment-${paymentId}`,
  paymentId,
  paymentMethod,
  shopperReference: 'shopper_contract',
  amountMinor: Math.round(Number(amount) * 100),
  amount,
  currency: 'USD'
})

connectorContract(t, async (t) => {
  const fake = await FakeAdyen.start()
  t.teardown(async () => { await fake.close() })
  return {
    gateway: adyenConnector({ apiKey: FAKE_ADYEN_API_KEY, merchantAccount: FAKE_ADYEN_MERCHANT, hmacKey: '00' }, { checkoutUrl: fake.url, timeoutMs: 300 }).gateway,
    approvedCharge: (paymentId, amount) => charge(paymentId, 'stored_visa', amount),
    declinedCharge: (paymentId) => charge(paymentId, 'stored_refused'),
    lostAnswerCharge: (paymentId) => {
      fake.failNext('hangAfterWork')
      return charge(paymentId, 'stored_visa')
    },
    chargesFor: async (paymentId) => fake.paymentsOf(paymentId).length,
    asynchronous: true
  }
})
