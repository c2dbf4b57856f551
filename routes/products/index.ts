import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { MethodNotAllowedError, NotFoundError } from '../../src/domain/errors'
import { envelopeErrorHandler, envelopeNotFound } from '../../src/http/envelope'
import { PRODUCT_METHODS, isProductPath, ProductBody, ProductParams, productErrors, productResponse } from '../../schemas/products'
import { Type } from '@sinclair/typebox'

const commonErrors = {
  413: productErrors.tooLarge,
  415: productErrors.unsupportedMediaType,
  429: productErrors.rateLimited,
  500: productErrors.internal
}

/** The products area: simple `{ error, code }` envelopes for every failure. */
const products: FastifyPluginAsyncTypebox = async (app) => {
  app.setErrorHandler(envelopeErrorHandler)
  // Methods Fastify has no route for (TRACE, PROPFIND, …) still get 405 on a product path.
  const notFound = envelopeNotFound('route not found')
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, (request, reply) => {
    const path = request.url.split('?')[0]
    if (isProductPath(path)) return envelopeErrorHandler(new MethodNotAllowedError(PRODUCT_METHODS), request, reply)
    return notFound(request, reply)
  })

  app.get('/:id', {
    schema: {
      tags: ['products'],
      operationId: 'getProduct',
      summary: 'Read a product',
      description: 'Returns the product stored at `id`.',
      params: ProductParams,
      response: {
        200: productResponse,
        400: productErrors.badRequest,
        404: productErrors.notFound,
        429: productErrors.rateLimited,
        500: productErrors.internal
      }
    }
  }, async (request) => {
    const product = await app.db.products.get(request.params.id)
    if (product === undefined) throw new NotFoundError('product not found')
    return product
  })

  app.put('/:id', {
    schema: {
      tags: ['products'],
      operationId: 'putProduct',
      summary: 'Create or replace a product',
      description: 'Stores the whole product at `id`, creating it when it does not exist. ' +
        'PUT replaces: every field is required and nothing of the previous version is kept. ' +
        'An `id` in the body is ignored; the path id wins. Unknown fields are rejected.',
      params: ProductParams,
      body: ProductBody,
      response: { 200: productResponse, 400: productErrors.badRequest, ...commonErrors }
    }
  }, async (request) => {
    return await app.db.products.put({ id: request.params.id, name: request.body.name, price: request.body.price })
  })

  app.route({
    method: ['POST', 'DELETE', 'PATCH', 'OPTIONS'],
    url: '/:id',
    schema: {
      tags: ['products'],
      summary: 'Not allowed',
      description: 'Products can only be read (GET, HEAD) and replaced (PUT). Any other method answers 405 with an `Allow` header, before the body is read.',
      params: Type.Object({ id: Type.String() }),
      response: { 405: productErrors.methodNotAllowed, 429: productErrors.rateLimited }
    },
    onRequest: async () => { throw new MethodNotAllowedError(PRODUCT_METHODS) },
    handler: async () => { throw new MethodNotAllowedError(PRODUCT_METHODS) }
  })
}

export default products
