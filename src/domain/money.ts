/**
 * Exact money. A JSON number arrives as a double; its shortest round-trip
 * representation (String(n)) is exactly the decimal the client wrote (10.1
 * stays "10.1"), so amounts are converted through that string into integer
 * minor units and never through floating-point arithmetic.
 */
export function decimalPlaces (amount: number): number {
  return literalDecimalPlaces(String(amount))
}

/**
 * An amount a request may send as a JSON string instead of a number ("10.10"): digits, then
 * optionally a point and at least one digit. No sign, exponent, spaces, hex or leading zeros.
 */
export const DECIMAL_STRING_PATTERN = '^(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?$'
const DECIMAL_STRING = new RegExp(DECIMAL_STRING_PATTERN)

/**
 * The amount a decimal string denotes and its decimal places as written ("10.10" → 10.1, 1), or
 * undefined when the text is not one. The number is exact for every amount the service accepts (at
 * most 10^9 with at most 3 decimals: 13 significant digits, fewer than a double's 15); a string with
 * more digits than that is refused anyway, by its decimal places or its size.
 */
export function parseDecimalString (text: string): { amount: number, decimalPlaces: number } | undefined {
  if (!DECIMAL_STRING.test(text)) return undefined
  return { amount: Number(text), decimalPlaces: literalDecimalPlaces(text) }
}

const LITERAL = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/

/**
 * Decimal places of the value a number literal denotes, trailing zeros ignored:
 * "10.10" → 1, "1.5e-3" → 4, "1500e-2" → 0, "10.100000000000000001" → 18.
 */
export function literalDecimalPlaces (literal: string): number {
  const match = LITERAL.exec(literal)
  if (match === null) return 0
  const fraction = match[2] ?? ''
  let digits = (match[1] + fraction).replace(/^0+/, '')
  let scale = fraction.length - Number(match[3] ?? 0)
  const trailing = /0*$/.exec(digits)?.[0].length ?? 0
  digits = digits.slice(0, digits.length - trailing)
  scale -= trailing
  if (digits === '') return 0
  return Math.max(0, scale)
}

/** Integer minor units of a positive amount with at most `exponent` decimal places. */
export function toMinorUnits (amount: number, exponent: number): number {
  const text = amount.toFixed(exponent)
  return Number(text.replace('.', ''))
}

/** The decimal string for integer minor units: (1010, 2) → "10.10". */
export function formatMinorUnits (minor: number, exponent: number): string {
  if (exponent === 0) return String(minor)
  const digits = String(minor).padStart(exponent + 1, '0')
  return `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`
}

/** The JSON number for integer minor units: (1010, 2) → 10.1. */
export function fromMinorUnits (minor: number, exponent: number): number {
  return Number(formatMinorUnits(minor, exponent))
}
