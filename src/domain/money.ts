/**
 * Exact money. A JSON number arrives as a double; its shortest round-trip
 * representation (String(n)) is exactly the decimal the client wrote (10.1
 * stays "10.1"), so amounts are converted through that string into integer
 * minor units and never through floating-point arithmetic.
 */
export function decimalPlaces (amount: number): number {
  const text = String(amount)
  const exponentAt = text.search(/e/i)
  if (exponentAt === -1) {
    const dot = text.indexOf('.')
    return dot === -1 ? 0 : text.length - dot - 1
  }
  const mantissa = text.slice(0, exponentAt)
  const exponent = Number(text.slice(exponentAt + 1))
  const dot = mantissa.indexOf('.')
  const mantissaPlaces = dot === -1 ? 0 : mantissa.length - dot - 1
  return Math.max(0, mantissaPlaces - exponent)
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
