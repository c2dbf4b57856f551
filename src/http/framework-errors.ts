import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { MethodNotAllowedError, NotFoundError, ValidationError, type DomainError } from '../domain/errors'
import { fieldErrorsFromSchema } from './field-messages'
import { envelopeErrorHandler } from './envelope'
import { problemErrorHandler } from './problem'
import { PRODUCT_METHODS, ProductId, isProductPath } from '../../schemas/products'
import { REQUEST_ID_HEADER } from '../../plugins/request-id'


/** The path of a request target, without the query; never decoded. */
function rawPathOf (request: FastifyRequest): string {
  return (request.raw.url ?? '/').split('?')[0]
}

export function isProblemArea (path: string): boolean {
  return /^\/(api|merchants)(\/|$)/.test(path)
}

/**
 * What a request the router could not even route means in its area: a path whose percent-encoding
 * is broken (`%zz`, an encoded lone surrogate) names no resource.
 *  - a product path: 400 VALIDATION for GET, HEAD and PUT (the id is not a valid id), 405 for
 *    other methods (they are refused before anything else is looked at);
 *  - payments and merchants: 404, as for any id that is not a GUID;
 *  - anything else: 404 route not found.
 */
function domainErrorFor (request: FastifyRequest, path: string): DomainError {
  if (isProductPath(path)) {
    if (!PRODUCT_METHODS.includes(request.method)) return new MethodNotAllowedError(PRODUCT_METHODS)
    return new ValidationError(fieldErrorsFromSchema([{ keyword: 'pattern', instancePath: '/id', params: { pattern: ProductId.pattern } }], 'params'))
  }
  if (isProblemArea(path)) return new NotFoundError(`No resource matches ${request.method} ${path.length <= 80 ? path : `${path.slice(0, 80)}…`}.`)
  return new NotFoundError('route not found')
}

/**
 * Fastify's `frameworkErrors`: errors raised before a request reaches any route (a URL that cannot be
 * percent-decoded, a path parameter over maxParamLength). Without it Fastify answers with its own
 * JSON (`{"error":"Bad Request","code":"FST_ERR_BAD_URL","message":"'<the url>' is …"}`), which is in
 * no area's shape, is not documented, and echoes the raw URL. The onRequest hooks did not run, so
 * the request id and the security headers are set here.
 */
export function frameworkErrorHandler (_error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  for (const [name, value] of request.server.securityHeaders ?? []) reply.header(name, value)
  reply.header(REQUEST_ID_HEADER, request.id)
  const path = rawPathOf(request)
  const error = domainErrorFor(request, path) as unknown as FastifyError
  if (isProblemArea(path)) problemErrorHandler(error, request, reply)
  else envelopeErrorHandler(error, request, reply)
}
