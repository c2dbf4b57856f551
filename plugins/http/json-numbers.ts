/**
 * What JSON.parse throws away: the digits of a number as the client wrote them. A double keeps
 * 15-17 significant digits, so `10.100000000000000001` arrives as 10.1; a service that promises
 * exact money must judge the literal, not the double (see the payments parser).
 */

import { literalDecimalPlaces, parseDecimalString } from '../../src/domain/money'

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
      const literal = NUMBER.exec(json)?.[0] ?? '0'
      max = Math.max(max, literalDecimalPlaces(literal))
      i += literal.length - 1
    }
  }
  return max
}

/**
 * literalDecimalPlaces of the member `name` of a (valid) JSON object text, as written; 0 when the
 * member is absent, not a number, or the text is not an object. When the member is repeated the last
 * one counts, as it does for JSON.parse: `{"amount":1.234,"amount":1}` is an amount of 1, judged as 1.
 * Members of nested objects and arrays are not looked at.
 */
export function literalDecimalPlacesOfMember (json: string, name: string): number {
  const stack: string[] = []
  let awaitingKey = false
  let key: string | undefined
  let places = 0
  for (let i = 0; i < json.length; i++) {
    const c = json.charAt(i)
    const topLevel = stack.length === 1 && stack[0] === '{'
    if (c === '"') {
      const start = i
      for (i++; i < json.length && json[i] !== '"'; i++) if (json[i] === '\\') i++
      if (topLevel && awaitingKey) {
        key = JSON.parse(json.slice(start, i + 1)) as string
        awaitingKey = false
      } else if (topLevel && key === name) {
        places = 0
      }
    } else if (c === '{' || c === '[') {
      if (topLevel && key === name) places = 0
      stack.push(c)
      awaitingKey = c === '{' && stack.length === 1
    } else if (c === '}' || c === ']') {
      stack.pop()
    } else if (c === ',') {
      if (topLevel) { awaitingKey = true; key = undefined }
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i
      const literal = NUMBER.exec(json)?.[0] ?? '0'
      if (topLevel && key === name) places = literalDecimalPlaces(literal)
      i += literal.length - 1
    } else if (topLevel && key === name && (c === 't' || c === 'f' || c === 'n')) {
      places = 0
    }
  }
  return places
}

/**
 * The decimals of a body's top-level `amount` as the client wrote it. A decimal string (`"10.10"`)
 * is replaced, in the body, by the number it denotes: validation, the idempotency fingerprint and the
 * services then see `10.1` whether it was sent as `10.1`, `10.10` or `"10.10"`. A string that is not a
 * decimal is left for the schema's pattern to refuse.
 */
export function normaliseAmount (body: unknown, json: string): number {
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && Object.hasOwn(body, 'amount')) {
    const record = body as Record<string, unknown>
    const parsed = typeof record.amount === 'string' ? parseDecimalString(record.amount) : undefined
    if (parsed !== undefined) {
      record.amount = parsed.amount
      return parsed.decimalPlaces
    }
  }
  return literalDecimalPlacesOfMember(json, 'amount')
}
