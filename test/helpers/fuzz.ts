/**
 * Generators of hostile HTTP input for the property-based tests, and the contract every
 * response must keep whatever the input: no 5xx, JSON in the area's error shape, a status
 * documented for the operation, a body that validates against openapi.yaml.
 */
import fc from 'fast-check'
import { METHODS } from 'node:http'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { openApiValidator, printable } from './openapi-validator'

/** Fixed by default so every run is reproducible; FUZZ_SEED=<integer> replays or explores another. */
export const FUZZ_SEED = (() => {
  const raw = process.env.FUZZ_SEED
  if (raw === undefined || raw === '') return 20261121
  const seed = Number(raw)
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer (got ${JSON.stringify(raw)})`)
  return seed
})()

/** Scales the number of runs of every property: FUZZ_SCALE=10 for a long session. */
export const FUZZ_SCALE = (() => {
  const raw = process.env.FUZZ_SCALE
  const scale = raw === undefined || raw === '' ? 1 : Number(raw)
  if (!(scale > 0)) throw new Error(`FUZZ_SCALE must be a positive number (got ${JSON.stringify(raw)})`)
  return scale
})()

export function runs (base: number): number {
  return Math.max(1, Math.round(base * FUZZ_SCALE))
}

// ---------------------------------------------------------------------------------------------
// Values

/** Strings that have broken parsers, stores and terminals before. */
export const nastyStrings = [
  '', ' ', '\t', '\u0000', 'a\u0000b', '\ud800', 'a\udfffb', '\udc00\ud800', '\u202e', 'abc\u202edef', '\u200b', '\ufeff',
  '\u00e9', 'e\u0301', '\ud83d\ude00', '\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67', '\u0130', '\u2028', '\u2029',
  '%00', '%zz', '../..', '..', '.', '~', '<script>alert(1)</script>', "' OR 1=1 --", '$' + '{jndi:ldap://x}', '{{7*7}}',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'null', 'undefined', 'NaN', '-0', '1e400',
  'x'.repeat(255), 'x'.repeat(256), 'x'.repeat(1000), 'USD', 'usd', 'XXX', 'JPY', 'BHD', 'CLF', 'US', 'DE'
]

/** Numbers at the edges: zero of both signs, limits, precision loss, float artefacts. */
export const nastyNumbers = [
  0, -0, 1, -1, 0.01, 0.001, 0.1 + 0.2, 10.1, 1e-7, 5e-324, 1e308, -1e308, Number.MAX_VALUE, Number.MIN_VALUE,
  2 ** 53, 2 ** 53 + 2, -(2 ** 53), 999_999_999.99, 1_000_000_000, 1_000_000_000.01, 2000, 2999.99, 12.5
]

export const nastyString = (): fc.Arbitrary<string> => fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...nastyStrings) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  // Any UTF-16 code units: lone surrogates included.
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.nat({ max: 70_000 }).map((n) => 'y'.repeat(n)) }
)

export const nastyNumber = (): fc.Arbitrary<number> => fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...nastyNumbers) },
  { weight: 2, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer() }
)

/**
 * Nesting deep enough to exhaust a recursive consumer's stack cannot be a JS value here (JSON.stringify
 * and fast-check's own printing recurse too), so a deep value is a placeholder string that toJson
 * expands into JSON text.
 */
const DEEP = /"\\u0001deep:(\d+):(array|object)\\u0001"/g

export function deepJson (depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + '1' + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
}

/** JSON.stringify, with deep-nesting placeholders expanded; `undefined` becomes null. */
export function toJson (value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(DEEP, (_match, depth: string, kind: 'array' | 'object') => deepJson(Number(depth), kind))
}

/** Any JSON-ish value, nastier than fc.jsonValue alone. */
export const nastyValue = (): fc.Arbitrary<unknown> => fc.oneof(
  { weight: 3, arbitrary: nastyString() },
  { weight: 3, arbitrary: nastyNumber() },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  // Deep enough to exhaust the stack of any recursive consumer, shallow enough for the 64 KiB body limit.
  {
    weight: 2,
    arbitrary: fc.tuple(fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 2000, max: 9000 })), fc.constantFrom('array', 'object'))
      .map(([depth, kind]) => `\u0001deep:${depth}:${kind}\u0001`)
  }
)

const dangerousKeys = ['__proto__', 'constructor', 'prototype']

/** Sets an own, enumerable property, even `__proto__` (assignment would change the prototype instead). */
function defineOwn (target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

type Mutation =
  | { kind: 'drop', key: string }
  | { kind: 'set', key: string, value: unknown }
  | { kind: 'pollute', key: string, value: unknown }

/** A valid body with up to four mutations: members dropped, replaced with nasty values, added, or `__proto__` keys. */
export function mutatedObject (valid: Record<string, unknown>, extraKeys: string[] = []): fc.Arbitrary<Record<string, unknown>> {
  const keys = [...Object.keys(valid), ...extraKeys]
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    fc.record({ kind: fc.constant('drop' as const), key: fc.constantFrom(...keys) }),
    fc.record({ kind: fc.constant('set' as const), key: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }), value: nastyValue() }),
    fc.record({ kind: fc.constant('pollute' as const), key: fc.constantFrom(...dangerousKeys), value: fc.constantFrom<unknown>({ polluted: 'yes' }, { prototype: { polluted: 'yes' } }, 'yes') })
  )
  return fc.array(mutation, { maxLength: 4 }).map((mutations) => {
    const body: Record<string, unknown> = { ...valid }
    for (const m of mutations) {
      if (m.kind === 'drop') delete body[m.key]
      else defineOwn(body, m.key, m.value)
    }
    return body
  })
}

/** Text-level damage to a JSON document: truncation, stray bytes, duplicate keys, wrong top-level types. */
export function mutatedText (json: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(json) },
    { weight: 1, arbitrary: fc.nat({ max: Math.max(0, json.length) }).map((at) => json.slice(0, at)) },
    { weight: 1, arbitrary: fc.tuple(fc.nat({ max: json.length }), fc.string({ unit: 'binary', minLength: 1, maxLength: 3 })).map(([at, junk]) => json.slice(0, at) + junk + json.slice(at)) },
    { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 10 }), nastyValue()).map(([key, value]) => json.startsWith('{') && json.length > 2 ? `{${JSON.stringify(key)}:${toJson(value)},${json.slice(1)}` : json) },
    { weight: 1, arbitrary: fc.constantFrom(`[${json}]`, `\ufeff${json}`, `${json}x`, ` \n${json}\n `, `${json}${json}`, JSON.stringify(json)) },
    { weight: 1, arbitrary: fc.constantFrom('null', 'true', 'false', '0', '-0', '1e400', '"text"', '[]', '{}', '', ' ', '{', '}', '[', 'nul', '{"a":1,}', "{'a':1}", '{"a":NaN}', '{"a":01}', '{"a":.5}', '{"\\ud800":1}', '{"a":"\\u0000"}') },
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 1, max: 10_000 }), fc.constantFrom<'array' | 'object'>('array', 'object')).map(([depth, kind]) => deepJson(depth, kind)) }
  )
}

/** A valid body with exactly one member (an existing or an extra one) set to a nasty value: the deepest reach into the handlers. */
export function oneNastyMember (valid: Record<string, unknown>, extraKeys: string[] = []): fc.Arbitrary<Record<string, unknown>> {
  return fc.record({ key: fc.constantFrom(...Object.keys(valid), ...extraKeys), value: nastyValue() }).map(({ key, value }) => {
    const body: Record<string, unknown> = { ...valid }
    defineOwn(body, key, value)
    return body
  })
}

/** A JSON body built from a valid one: object-level then text-level mutations. */
export function hostileJson (valid: Record<string, unknown>, extraKeys: string[] = []): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: mutatedObject(valid, extraKeys).chain((body) => mutatedText(toJson(body))) },
    { weight: 3, arbitrary: oneNastyMember(valid, extraKeys).map(toJson) },
    { weight: 1, arbitrary: nastyValue().map(toJson) }
  )
}

/** Content-Type values: right, nearly right, wrong, malformed or absent. */
export const contentType = (preferred: string): fc.Arbitrary<string | undefined> => fc.oneof(
  { weight: 12, arbitrary: fc.constant(preferred) },
  {
    weight: 4,
    arbitrary: fc.constantFrom<string | undefined>(undefined, 'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON',
      'application/json;charset=UTF-8', 'application/json; charset=latin1', 'application/merge-patch+json', 'application/problem+json',
      'application/jsonx', 'application/json5', 'text/json', 'text/plain', 'text/html', 'application/xml', 'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x', 'application/octet-stream', '*/*', '', ';', 'application/', '/json', 'application/json;;;', 'json')
  },
  { weight: 1, arbitrary: headerValue() }
)

/** A header value a client can actually send over HTTP/1.1: Latin-1 without control characters other than tab. */
export const headerValue = (maxLength = 60): fc.Arbitrary<string> => fc.oneof(
  fc.string({ unit: fc.constantFrom(...'abcXYZ019 -_.:;,/"\'*=()<>@[]{}?\\\t\u00e9\u00ff~!#$%&+'), maxLength }),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength })
)

export const idempotencyKey = (): fc.Arbitrary<string | undefined> => fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.constantFrom('k', 'same-key', ' ', '', 'x'.repeat(255), 'x'.repeat(256), 'x'.repeat(8000), 'caf\u00e9', 'tab\there', '"quoted"') },
  { weight: 2, arbitrary: headerValue(300) }
)

export const requestId = (): fc.Arbitrary<string | undefined> => fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'x'.repeat(129), 'x'.repeat(5000), 'a b', 'a\tb', '<script>', 'caf\u00e9', '../../etc/passwd') },
  { weight: 1, arbitrary: headerValue(200) }
)

export const entityTags = (): fc.Arbitrary<string | undefined> => fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.constantFrom('*', '"1"', '"2"', 'W/"1"', '"1", "2"', 'W/"1", *', '"', '""', 'W/', '1', ' "1" ', '"1",', ',,,', '"\u00ff"') },
  { weight: 1, arbitrary: fc.array(fc.nat({ max: 5 }).map((n) => `"${n}"`), { maxLength: 50 }).map((tags) => tags.join(', ')) },
  { weight: 1, arbitrary: headerValue(100) }
)

const urlSafe = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&\'()*+,;=:@'

/** A path segment as a client could put it on the wire: valid ids, encoded unicode, stray percent signs, huge. */
export const pathSegment = (...valid: Array<fc.Arbitrary<string>>): fc.Arbitrary<string> => fc.oneof(
  ...valid.map((arbitrary) => ({ weight: 4, arbitrary })),
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom(...urlSafe), minLength: 1, maxLength: 70 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%0', '%00', '%2F', '%2e%2e', '%ED%A0%80', '%C0%AF', '%FF', '%E2%80%AE', '%F0%9F%98%80', '..', '.', '%20', '+', 'a%2Fb', 'A'.repeat(65), 'a'.repeat(101), 'a'.repeat(5000)) },
  { weight: 1, arbitrary: fc.uuid().map((id) => id.toUpperCase()) }
)

/** Every method Node's HTTP parser accepts, minus CONNECT (a tunnel, not a request for a path). */
export const anyMethod = (): fc.Arbitrary<string> => fc.constantFrom(...METHODS.filter((method) => method !== 'CONNECT'))

// ---------------------------------------------------------------------------------------------
// The contract

export interface Sent {
  method: string
  url: string
  headers?: Record<string, string>
  /** Undefined: no body (what fc.option draws). */
  payload?: string | undefined
}

/** Drops undefined header values (a header that is not sent). */
export function headers (values: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(values)) if (value !== undefined) out[name] = value
  return out
}

export function describe (sent: Sent, res?: LightMyRequestResponse): string {
  const shown = (value: string | undefined): string => value === undefined ? '-' : printable(value.length > 300 ? `${value.slice(0, 300)}…(${value.length})` : value)
  const request = `${sent.method} ${shown(sent.url)} headers=${printable(Object.fromEntries(Object.entries(sent.headers ?? {}).map(([k, v]) => [k, v.length > 100 ? `${v.slice(0, 100)}…(${v.length})` : v])))} body=${shown(sent.payload)}`
  if (res === undefined) return request
  return `${request}\n  → ${res.statusCode} ${String(res.headers['content-type'])} ${shown(res.body)}`
}

/**
 * The invariants of every answer: no 5xx, a request id, the area's content type and shape, a
 * documented status, a body that validates against openapi.yaml. Throws (fails the property) otherwise.
 */
export function assertContract (sent: Sent, res: LightMyRequestResponse): void {
  const failures: string[] = []
  if (res.statusCode >= 500) failures.push(`server error ${res.statusCode}`)
  if (typeof res.headers['x-request-id'] !== 'string' || res.headers['x-request-id'] === '') failures.push('no X-Request-Id')
  const check = openApiValidator().check(res.raw.req.method ?? sent.method, res.raw.req.url ?? sent.url, res)
  failures.push(...check.errors)
  const type = String(res.headers['content-type'] ?? '')
  // OPTIONS on a resource path: 204 with Allow and no body (the validator checks the Allow header).
  const optionsAnswer = sent.method === 'OPTIONS' && res.statusCode === 204
  if (check.area === 'envelope' && res.statusCode !== 304 && !optionsAnswer && type !== 'application/json; charset=utf-8') {
    failures.push(`content-type ${type}: every product/infrastructure response is application/json; charset=utf-8`)
  }
  if (check.area === 'problem' && res.statusCode >= 400 && type !== 'application/problem+json; charset=utf-8') {
    failures.push(`content-type ${type}: every payments/merchants error is application/problem+json; charset=utf-8`)
  }
  if (check.operation === undefined && check.area !== 'none' && ![404, 405].includes(res.statusCode) && !optionsAnswer) {
    failures.push(`an undocumented operation answered ${res.statusCode}; expected 404 or 405 (or 204 to OPTIONS)`)
  }
  if (res.statusCode === 405 && typeof res.headers.allow !== 'string') failures.push('a 405 without Allow')
  if (({} as Record<string, unknown>).polluted !== undefined) failures.push('Object.prototype was polluted')
  if (failures.length > 0) throw new Error(`contract broken: ${failures.join('; ')}\n  ${describe(sent, res)}`)
}

/** Sends a request through inject and checks the contract; returns the response for further checks. */
export async function send (inject: (opts: InjectOptions) => Promise<LightMyRequestResponse>, sent: Sent): Promise<LightMyRequestResponse> {
  let res: LightMyRequestResponse
  try {
    res = await inject({ method: sent.method as NonNullable<InjectOptions['method']>, url: sent.url, ...(sent.headers === undefined ? {} : { headers: sent.headers }), ...(sent.payload === undefined ? {} : { payload: sent.payload }) })
  } catch (err) {
    throw new Error(`inject threw ${String(err)}\n  ${describe(sent)}`)
  }
  assertContract(sent, res)
  return res
}
