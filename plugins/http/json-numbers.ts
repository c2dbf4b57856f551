/**
 * What JSON.parse throws away: the digits of a number as the client wrote them. A double keeps
 * 15-17 significant digits, so `10.100000000000000001` arrives as 10.1; a service that promises
 * exact money must judge the literal, not the double (see the payments parser).
 */

import { literalDecimalPlaces } from '../../src/domain/money'

export { literalDecimalPlaces }

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y

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
