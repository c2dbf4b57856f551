import type { FieldErrors } from './errors'
import { minorUnitsOf } from './currencies'
import { decimalPlaces, toMinorUnits } from './money'

/**
 * An amount a client asks to move on a payment in `currency` (major units, as refunds and captures
 * take it): in minor units with the currency's exponent, or the `amount` field errors — greater
 * than 0, and no more decimals than the currency allows (also as the client wrote them).
 */
export function amountInMinorUnits (currency: string, amount: number, writtenDecimalPlaces = 0): { amountMinor: number, exponent: number } | { errors: FieldErrors } {
  const exponent = minorUnitsOf(currency) ?? 2
  if (!(amount > 0)) return { errors: { amount: ['The amount field must be greater than 0.'] } }
  if (Math.max(decimalPlaces(amount), writtenDecimalPlaces) > exponent) {
    return {
      errors: {
        amount: [exponent === 0
          ? `The amount field must be a whole number for ${currency}, which has no minor unit.`
          : `The amount field must have at most ${exponent} decimal places for ${currency}.`]
      }
    }
  }
  return { amountMinor: toMinorUnits(amount, exponent), exponent }
}
