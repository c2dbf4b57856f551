import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { classifyError, isUnroutedRequestError } from './classify-error'

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** Error handler for areas that speak the simple `{ error, code }` envelope. */
export function envelopeErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // No route serves this path: answer as its area's not-found handler does (404, or 405 on a product path).
  if (isUnroutedRequestError(error, request)) return request.routeOptions.handler.call(request.server, request, reply) as FastifyReply
  const failure = classifyError(error)
  if (failure.internal) request.log.error({ err: error }, 'unhandled error')
  return reply
    .code(failure.statusCode)
    .headers(failure.headers)
    .type(JSON_CONTENT_TYPE)
    .send({ error: failure.message, code: failure.code })
}

export function envelopeNotFound (message: string) {
  return function notFound (_request: FastifyRequest, reply: FastifyReply): FastifyReply {
    return reply.code(404).type(JSON_CONTENT_TYPE).send({ error: message, code: 'NOT_FOUND' })
  }
}
