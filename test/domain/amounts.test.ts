import t from 'tap'
import { amountInMinorUnits } from '../../src/domain/amounts'

t.test('an amount to move in a currency: minor units with the exponent, or the amount field errors', async (t) => {
  t.same(amountInMinorUnits('USD', 10.1), { amountMinor: 1010, exponent: 2 })
  t.same(amountInMinorUnits('JPY', 500), { amountMinor: 500, exponent: 0 })
  t.same(amountInMinorUnits('BHD', 1.234), { amountMinor: 1234, exponent: 3 })
  t.same(amountInMinorUnits('USD', 0), { errors: { amount: ['The amount field must be greater than 0.'] } })
  t.same(amountInMinorUnits('USD', -100), { errors: { amount: ['The amount field must be greater than 0.'] } })
  t.same(amountInMinorUnits('USD', 1.001), { errors: { amount: ['The amount field must have at most 2 decimal places for USD.'] } })
  t.same(amountInMinorUnits('JPY', 1.5), { errors: { amount: ['The amount field must be a whole number for JPY, which has no minor unit.'] } })
  t.same(amountInMinorUnits('USD', 10, 3), { errors: { amount: ['The amount field must have at most 2 decimal places for USD.'] } }, 'decimals as the client wrote them (10.000) count')
})
