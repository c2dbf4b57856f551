import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { classifyError, isUnroutedRequestError, type ClassifiedError } from './classify-error'
import { mergeFieldErrors, notedFieldErrors } from './field-errors'

/**
 * An area's error handler: classifies the error centrally, logs only our own
 * failures, and renders the area's shape with its content type.
 */
export function areaErrorHandler (contentType: string, render: (failure: ClassifiedError, request: FastifyRequest) => unknown) {
  return function errorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    // No route serves this path: answer as the area's not-found handler does, whatever the body.
    if (isUnroutedRequestError(error, request)) return request.routeOptions.handler.call(request.server, request, reply) as FastifyReply
    const failure = classifyError(error)
    // Schema errors and the route's domain errors, in one map.
    const domainErrors = failure.code === 'VALIDATION' ? notedFieldErrors(request) : undefined
    if (domainErrors !== undefined && failure.fieldErrors !== domainErrors) failure.fieldErrors = mergeFieldErrors(failure.fieldErrors ?? {}, domainErrors)
    if (failure.internal) request.log.error({ err: error }, 'unhandled error')
    // The outage itself is logged once when it starts and ends (plugins/database.ts) and counted in metrics.
    else if (failure.code === 'STORE_UNAVAILABLE') request.log.debug({ err: error.cause ?? error }, 'database unavailable; answered 503')
    return reply
      .code(failure.statusCode)
      .headers(failure.headers)
      .type(contentType)
      .send(render(failure, request))
  }
}
