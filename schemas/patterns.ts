/**
 * Longest path parameter the router accepts (plugins/http/server-limits.ts); the schemas of ids that
 * are judged by the handlers (payments, merchants: not a GUID → 404) state it as their bound.
 */
export const MAX_PARAM_LENGTH = 16 * 1024

/** Limits of a product id, shared by its pattern message and its schema. */
export const PRODUCT_ID_MAX_LENGTH = 64

import { DECIMAL_STRING_PATTERN } from '../src/domain/money'

export { DECIMAL_STRING_PATTERN }

/** String patterns used by the schemas, each with the human message shown when a value fails it. */
/** `.` and `..` are refused: as path segments they mean "this" and "parent" (RFC 3986 §5.2.4) and a client or proxy would rewrite them. */
export const PRODUCT_ID_PATTERN = '^(?!\\.\\.?$)[A-Za-z0-9._~-]+$'
export const NON_BLANK_PATTERN = '\\S'

/** Read by the validation-error renderer (plugins/http/errors/field-messages.ts); a plain table, filled by no import. */
export const patternMessages: ReadonlyMap<string, string> = new Map([
  [PRODUCT_ID_PATTERN, `must be 1-${PRODUCT_ID_MAX_LENGTH} characters: letters, digits, '.', '_', '~' or '-' (and not '.' or '..')`],
  [NON_BLANK_PATTERN, 'must not be blank'],
  [DECIMAL_STRING_PATTERN, 'must be a number, or a string holding a decimal number such as "10.10" (digits and an optional decimal point with digits after it; no sign, exponent, spaces or leading zeros)']
])
