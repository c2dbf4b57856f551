import { CURRENCY_MINOR_UNITS } from '../../domain/currencies'

/**
 * Stripe's zero-decimal currencies (docs.stripe.com/currencies#zero-decimal): the API amount is in
 * whole units. MGA is among them although ISO 4217 gives it 2 minor units.
 */
const ZERO_DECIMAL = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'])

/** Stripe's three-decimal currencies: amounts in thousandths whose last digit must be 0. */
const THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND'])

/**
 * The decimal places of a currency's amounts in Stripe's API: "unless otherwise noted, currencies are
 * two-decimal". The special cases: ISK is zero-decimal for ISO 4217 but stays two-decimal in Stripe's API
 * (amounts divisible by 100, which whole krónur always are); HUF and TWD are two-decimal for charges (only
 * payouts must be whole units), as ISO gives them.
 */
export function stripeDecimals (currency: string): number {
  const code = currency.toUpperCase()
  if (ZERO_DECIMAL.has(code)) return 0
  if (THREE_DECIMAL.has(code)) return 3
  return 2
}

/** An amount that Stripe cannot take in this currency (e.g. MGA 1.50, KWD 5.125). */
export class AmountNotExpressibleError extends Error {
  override name = 'AmountNotExpressibleError'
}

function isoDecimals (currency: string): number {
  const decimals = CURRENCY_MINOR_UNITS[currency.toUpperCase()]
  if (decimals === undefined) throw new AmountNotExpressibleError(`unknown currency ${currency}`)
  return decimals
}

/** Our ISO 4217 minor units as Stripe's `amount`: exact, or AmountNotExpressibleError (never rounded). */
export function toStripeAmount (amountMinor: number, currency: string): number {
  const shift = stripeDecimals(currency) - isoDecimals(currency)
  const amount = shift >= 0 ? amountMinor * 10 ** shift : amountMinor / 10 ** -shift
  if (!Number.isSafeInteger(amount)) throw new AmountNotExpressibleError(`${currency} ${amountMinor} (minor units) has no exact amount in Stripe's units`)
  if (THREE_DECIMAL.has(currency.toUpperCase()) && amount % 10 !== 0) {
    throw new AmountNotExpressibleError(`Stripe takes ${currency} amounts in multiples of 10 thousandths`)
  }
  return amount
}

/** Stripe's `amount` in our ISO 4217 minor units. */
export function fromStripeAmount (amount: number, currency: string): number {
  const shift = stripeDecimals(currency) - isoDecimals(currency)
  return shift >= 0 ? amount / 10 ** shift : amount * 10 ** -shift
}
