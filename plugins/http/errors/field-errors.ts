import type { FastifyRequest } from 'fastify'
import { ValidationError, type FieldErrors } from '../../../src/domain/errors'

/**
 * One `errors` map for schema and domain failures, as ASP.NET's ValidationProblemDetails has: a body
 * with a negative amount (schema) and a lower-case currency (domain) reports both at once.
 *
 * A route's preValidation hook runs its domain checks on the raw body (type-tolerant: a field the
 * schema will refuse is skipped) and notes what fails here. If the schema then fails, the area's error
 * handler merges these into the schema's errors; if it passes, `throwNotedFieldErrors` (preHandler)
 * throws them before any work is done.
 */
const noted = new WeakMap<FastifyRequest, FieldErrors>()

export function noteFieldErrors (request: FastifyRequest, errors: FieldErrors): void {
  if (Object.keys(errors).length === 0) return
  noted.set(request, { ...noted.get(request), ...errors })
}

export function notedFieldErrors (request: FastifyRequest): FieldErrors | undefined {
  return noted.get(request)
}

/**
 * Every field either map names. For a field both name, the schema's messages (`first`): a value of
 * the wrong type needs no second opinion. A domain check that judged a whole member (`metadata`)
 * replaces the schema's messages about its parts (`metadata.x`).
 */
export function mergeFieldErrors (first: FieldErrors, second: FieldErrors): FieldErrors {
  const merged: FieldErrors = {}
  const wholes = Object.keys(second)
  const set = (field: string, messages: string[]): void => {
    Object.defineProperty(merged, field, { value: [...messages], enumerable: true, writable: true, configurable: true })
  }
  for (const [field, messages] of Object.entries(first)) {
    if (!wholes.some((whole) => field.startsWith(`${whole}.`))) set(field, messages)
  }
  for (const [field, messages] of Object.entries(second)) {
    if (!Object.hasOwn(merged, field)) set(field, messages)
  }
  return merged
}

/** preHandler: the schema passed; the noted domain errors are the answer. */
export function throwNotedFieldErrors (request: FastifyRequest): void {
  const errors = noted.get(request)
  if (errors !== undefined) throw new ValidationError(errors)
}
