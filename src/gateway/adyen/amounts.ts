import { CURRENCY_MINOR_UNITS } from '../../domain/currencies'
import { AmountNotExpressibleError } from '../stripe/amounts'

export { AmountNotExpressibleError }

/**
 * Where Adyen's decimals differ from ISO 4217 (docs.adyen.com/development-resources/currency-codes:
 * "for CLP, CVE, IDR and ISK the standard has a different number of decimals"; Adyen's table leads).
 * Every other currency takes ISO 4217's minor units, three-decimal ones (BHD, KWD, …) included.
 */
const ADYEN_DECIMALS: Readonly<Record<string, number>> = { CLP: 2, CVE: 0, IDR: 0, ISK: 2 }

function isoDecimals (currency: string): number {
  const decimals = CURRENCY_MINOR_UNITS[currency.toUpperCase()]
  if (decimals === undefined) throw new AmountNotExpressibleError(`unknown currency ${currency}`)
  return decimals
}

/** The decimal places of a currency's `amount.value` in Adyen's APIs. */
export function adyenDecimals (currency: string): number {
  return ADYEN_DECIMALS[currency.toUpperCase()] ?? isoDecimals(currency)
}

/** Our ISO 4217 minor units as Adyen's `amount.value`: exact, or AmountNotExpressibleError (never rounded; e.g. IDR 10.50). */
export function toAdyenValue (amountMinor: number, currency: string): number {
  const shift = adyenDecimals(currency) - isoDecimals(currency)
  const value = shift >= 0 ? amountMinor * 10 ** shift : amountMinor / 10 ** -shift
  if (!Number.isSafeInteger(value)) throw new AmountNotExpressibleError(`${currency} ${amountMinor} (minor units) has no exact value in Adyen's units`)
  return value
}
