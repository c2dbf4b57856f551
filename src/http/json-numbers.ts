/**
 * What JSON.parse throws away: the digits of a number as the client wrote them. A double keeps
 * 15-17 significant digits, so `10.100000000000000001` arrives as 10.1; a service that promises
 * exact money must judge the literal, not the double (see the payments parser).
 */

const LITERAL = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y

/**
 * Decimal places of the value a JSON number literal denotes, trailing zeros ignored:
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

/** The largest literalDecimalPlaces of the number literals in a (valid) JSON text; strings are skipped. */
export function maxLiteralDecimalPlaces (json: string): number {
  let max = 0
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i)
    if (c === 0x22) { // a string: skip to its closing quote, over escapes
      for (i++; i < json.length && json.charCodeAt(i) !== 0x22; i++) if (json.charCodeAt(i) === 0x5c) i++
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i
      const literal = NUMBER.exec(json)?.[0] ?? json[i]
      max = Math.max(max, literalDecimalPlaces(literal))
      i += literal.length - 1
    }
  }
  return max
}
