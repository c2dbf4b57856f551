import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { MethodNotAllowedError, ValidationError, type DomainError } from '../../src/domain/errors'
import { envelopeErrorHandler, envelopeNotFound } from '../../plugins/http/envelope'
import { fieldErrorsFromSchema } from '../../plugins/http/field-messages'
import { PRODUCT_METHODS, ProductBody, ProductId, ProductParams, productErrors, productResponse } from '../../schemas/products'
import { answerUnservedMethod } from '../../plugins/http/allowed-methods'
import { envelopeAuthErrors, publicOperation, requiresKey } from '../../schemas/auth'

const productAuthErrors = envelopeAuthErrors('only the admin key replaces products')

const commonErrors = {
  413: productErrors.tooLarge,
  415: productErrors.unsupportedMediaType,
  429: productErrors.rateLimited,
  500: productErrors.internal,
  503: productErrors.unavailable
}

/** True for a path inside the area that names one product (`/<id>`), whatever the id. */
function isProductPath (pathInArea: string): boolean {
  return /^\/[^/]+$/.test(pathInArea)
}

/**
 * The area's answer to a request the router could not route (a product path with broken
 * percent-encoding): 405 for methods a product refuses before anything else is looked at,
 * else 400 VALIDATION (the id is not a valid id). Undefined for other paths: a plain 404.
 */
export function unroutableProductRequest (method: string, pathInArea: string): DomainError | undefined {
  if (!isProductPath(pathInArea)) return undefined
  if (!PRODUCT_METHODS.includes(method)) return new MethodNotAllowedError(PRODUCT_METHODS)
  return new ValidationError(fieldErrorsFromSchema([{ keyword: 'pattern', instancePath: '/id', params: { pattern: ProductId.pattern } }], 'params'))
}

/** The products area: simple `{ error, code }` envelopes for every failure. */
const products: FastifyPluginAsyncTypebox = async (app) => {
  app.setErrorHandler(envelopeErrorHandler)
  // Any other method on a product path (POST, DELETE, TRACE, PROPFIND, …) is 405 with Allow; OPTIONS is 204 with Allow.
  const notFound = envelopeNotFound('route not found')
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, (request, reply) => {
    const path = request.url.split('?')[0]
    if (isProductPath(path.slice(app.prefix.length))) {
      return answerUnservedMethod(request, reply, envelopeErrorHandler) ?? envelopeErrorHandler(new MethodNotAllowedError(PRODUCT_METHODS), request, reply)
    }
    return notFound(request, reply)
  })

  app.get('/:id', {
    config: { auth: 'public' },
    schema: {
      tags: ['products'],
      operationId: 'getProduct',
      summary: 'Read a product',
      description: 'Returns the product stored at `id`. Public: no API key needed (the catalogue).',
      security: publicOperation,
      params: ProductParams,
      response: {
        200: productResponse,
        400: productErrors.badRequest,
        401: productAuthErrors[401],
        404: productErrors.notFound,
        429: productErrors.rateLimited,
        500: productErrors.internal,
        503: productErrors.unavailable
      }
    }
  }, async (request) => await app.products.get(request.params.id))

  app.put('/:id', {
    config: { auth: 'admin' },
    schema: {
      tags: ['products'],
      operationId: 'putProduct',
      summary: 'Create or replace a product',
      description: 'Stores the whole product at `id`, creating it when it does not exist. ' +
        'PUT replaces: every field is required and nothing of the previous version is kept. ' +
        'An `id` in the body is ignored; the path id wins. Unknown fields are rejected. Needs the admin key.',
      security: requiresKey,
      params: ProductParams,
      body: ProductBody,
      response: { 200: productResponse, 400: productErrors.badRequest, ...productAuthErrors, ...commonErrors }
    }
  }, async (request) => {
    return await app.products.put({ id: request.params.id, name: request.body.name, price: request.body.price })
  })
}

export default products
