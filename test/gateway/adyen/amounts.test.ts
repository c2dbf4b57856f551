import t from 'tap'
import { adyenDecimals, AmountNotExpressibleError, toAdyenValue } from '../../../src/gateway/adyen/amounts'

t.test('Adyen\'s decimals: ISO 4217, except CLP, CVE, IDR and ISK (Adyen\'s table leads)', async (t) => {
  t.same(['USD', 'EUR', 'JPY', 'KWD', 'BHD', 'CLP', 'CVE', 'IDR', 'ISK', 'isk'].map(adyenDecimals), [2, 2, 0, 3, 3, 2, 0, 0, 2, 2])
})

t.test('our minor units as Adyen\'s amount.value: exact or refused, never rounded', async (t) => {
  t.equal(toAdyenValue(1050, 'EUR'), 1050)
  t.equal(toAdyenValue(500, 'JPY'), 500)
  t.equal(toAdyenValue(5125, 'KWD'), 5125, 'three decimals as ISO')
  t.equal(toAdyenValue(5, 'ISK'), 500, 'ISK: whole krónur in hundredths')
  t.equal(toAdyenValue(1000, 'CLP'), 100000)
  t.equal(toAdyenValue(150000, 'IDR'), 1500, 'IDR: whole rupiah')
  t.equal(toAdyenValue(2500, 'CVE'), 25)
  t.throws(() => toAdyenValue(150050, 'IDR'), AmountNotExpressibleError, 'IDR 1500.50 has no Adyen value')
  t.throws(() => toAdyenValue(1, 'CVE'), AmountNotExpressibleError)
  t.throws(() => toAdyenValue(100, 'XXY'), AmountNotExpressibleError, 'unknown currency')
})
