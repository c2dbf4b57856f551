import type { FastifyReply, FastifyRequest } from 'fastify'
import { areaErrorHandler } from './area-error-handler'

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** Error handler for areas that speak the simple `{ error, code }` envelope. */
export const envelopeErrorHandler = areaErrorHandler(JSON_CONTENT_TYPE, (failure) => ({ error: failure.message, code: failure.code }))

export function envelopeNotFound (message: string) {
  return function notFound (_request: FastifyRequest, reply: FastifyReply): FastifyReply {
    return reply.code(404).type(JSON_CONTENT_TYPE).send({ error: message, code: 'NOT_FOUND' })
  }
}
