import type { FastifyRequest } from 'fastify'
import { noteFieldErrors } from './errors/field-errors'
import { metadataErrors } from '../../src/domain/metadata'

/**
 * The query string arrives as text and the service's Ajv does not coerce types: turns the named
 * members into numbers when they are written as integers, so the schema judges `limit=10` as 10 and
 * still refuses `limit=abc`, `limit=1.5` or a repeated `limit` with a clear 400.
 */
export function integerQuery (names: string[]) {
  return async (request: FastifyRequest): Promise<void> => {
    const query = request.query as Record<string, unknown>
    for (const name of names) {
      const value = query[name]
      if (typeof value === 'string' && /^-?\d{1,15}$/.test(value)) query[name] = Number(value)
    }
  }
}

/**
 * Checks `metadata` before the schema does, so every violation is reported under `errors.metadata`
 * with a message naming the key (the schema would report `metadata.<key>` one at a time).
 * `allowNull`: merge-patch semantics, where null removes a key.
 */
export function metadataGuard (options: { allowNull?: boolean } = {}) {
  return async (request: FastifyRequest): Promise<void> => {
    const body = request.body as Record<string, unknown> | null | undefined
    if (typeof body !== 'object' || body === null || Array.isArray(body) || !Object.hasOwn(body, 'metadata')) return
    if (body.metadata === null && options.allowNull === true) return
    // Noted, not thrown: reported with the schema's errors about the other fields (plugins/http/errors/field-errors.ts).
    noteFieldErrors(request, metadataErrors(body.metadata, options))
  }
}
