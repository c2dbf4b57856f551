import { Type } from '@sinclair/typebox'
import { MAX_PAYMENT_AMOUNT } from '../src/domain/payments'
import { DECIMAL_STRING_PATTERN } from './patterns'

/** Longest decimal string accepted as an amount: far more than 1000000000.000 needs, so a long one is judged by its decimals. */
const DECIMAL_STRING_MAX_LENGTH = 32

/**
 * An amount in a request: a JSON number, or a decimal string ("10.10") so that a client never has to
 * compute a float. The payments area's JSON parser turns a decimal string into the number it denotes
 * (noting its decimals as written) before validation, so handlers, the idempotency fingerprint and
 * stored replays only ever see numbers; a string that is not a decimal is refused here by the pattern.
 * Responses keep amounts as numbers.
 */
export function amountInput (description: string, example: { number: number, string: string }) {
  return Type.Unsafe<number>({
    type: ['number', 'string'],
    exclusiveMinimum: 0,
    maximum: MAX_PAYMENT_AMOUNT,
    maxLength: DECIMAL_STRING_MAX_LENGTH,
    pattern: DECIMAL_STRING_PATTERN,
    description: `${description} A JSON number or a string holding a decimal number (\`"${example.string}"\`: digits, optionally a point ` +
      'and digits; no sign, exponent or spaces), judged by the same rules: the digits as written count, so `"10.100"` is 10.1 and ' +
      '`"10.001"` has 3 decimals. Both forms are the same request: an Idempotency-Key replays either.',
    examples: [example.number, example.string]
  })
}
