import type { FastifyRequest } from 'fastify'
import { ValidationError, type FieldErrors } from '../../src/domain/errors'

/**
 * A NUL, or a UTF-16 surrogate without its pair. JSON can carry both ("\u0000", "\ud800"), but
 * neither survives storage: an unpaired surrogate has no UTF-8 encoding (SQLite and PostgreSQL
 * store U+FFFD instead, so the answer to a write and the next read differ) and PostgreSQL refuses
 * NUL in text outright. Matched per code unit, without the `u` flag, on purpose.
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const ILL_FORMED = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Deepest nesting of arrays and objects a body may have. No request of this service needs more
 * than 2; recursive code (the canonical JSON of idempotency fingerprints, serializers, loggers)
 * must never see 10,000 levels, which fit in 20 KB and exhaust the stack.
 */
export const MAX_BODY_DEPTH = 32

export function isIllFormedText (text: string): boolean {
  return ILL_FORMED.test(text)
}

const MAX_REPORTED = 5

/** Sets a member even when it is called `__proto__` (assignment would replace the map's prototype). */
function setField (errors: FieldErrors, field: string, message: string): void {
  Object.defineProperty(errors, field, { value: [message], enumerable: true, writable: true, configurable: true })
}

function subjectOf (field: string): string {
  return field === '$' ? 'The request body' : `The ${field} field`
}

/**
 * What no schema expresses but every body must satisfy, checked anywhere in a parsed JSON body:
 * no unstorable text (in values and member names), no nesting deeper than MAX_BODY_DEPTH.
 * Keyed like schema errors (`name`, `items.0.label`, `$` for the body itself). Iterative, so the
 * check itself cannot exhaust the stack.
 */
export function bodyGuardErrors (body: unknown): FieldErrors {
  const errors: FieldErrors = {}
  let reported = 0
  const stack: Array<[unknown, string, number]> = [[body, '', 0]]
  while (stack.length > 0 && reported < MAX_REPORTED) {
    const [value, path, depth] = stack.pop() as [unknown, string, number]
    const field = path === '' ? '$' : path
    if (typeof value === 'string') {
      if (isIllFormedText(value)) {
        setField(errors, field, `${subjectOf(field)} contains a NUL character or an unpaired UTF-16 surrogate; send well-formed Unicode text.`)
        reported++
      }
      continue
    }
    if (value === null || typeof value !== 'object') continue
    if (depth >= MAX_BODY_DEPTH) {
      // Reported on the top-level member that holds the nesting, where the client can find it.
      const [member = path] = path.split('.')
      const top = Array.isArray(body) ? '$' : member
      setField(errors, top, `${subjectOf(top)} is nested more than ${MAX_BODY_DEPTH} levels deep.`)
      reported++
      continue
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], path === '' ? String(i) : `${path}.${i}`, depth + 1])
      continue
    }
    for (const key of Object.keys(value)) {
      if (isIllFormedText(key)) {
        setField(errors, field, `${subjectOf(field)} has a member name with a NUL character or an unpaired UTF-16 surrogate; send well-formed Unicode text.`)
        reported++
        continue
      }
      stack.push([(value as Record<string, unknown>)[key], path === '' ? key : `${path}.${key}`, depth + 1])
    }
  }
  return errors
}

/** Root preValidation hook: a body that fails the guard is a 400 in the area's error shape, before any route code runs. */
export function rejectUnsafeBody (request: FastifyRequest): void {
  // A path no route serves is answered 404 whatever its body.
  if (request.is404 || request.body === undefined || request.body === null) return
  const errors = bodyGuardErrors(request.body)
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
}
