import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { MethodNotAllowedError, PreconditionFailedError, ValidationError, type DomainError } from '../../src/domain/errors'
import { contentEtag, evaluatePreconditions } from '../../plugins/http/conditional'
import { envelopeErrorHandler, envelopeNotFound } from '../../plugins/http/errors/envelope'
import { fieldErrorsFromSchema } from '../../plugins/http/errors/field-messages'
import { PRODUCT_CACHE_CONTROL, PRODUCT_METHODS, ProductBody, ProductConditionalGetHeaders, ProductConditionalPutHeaders, ProductId, ProductParams, productErrors, productResponse } from '../../schemas/products'
import { answerUnservedMethod } from '../../plugins/http/allowed-methods'
import { envelopeAuthErrors, publicOperation, requiresKey } from '../../schemas/auth'
import { cachedRead } from '../../src/services/read-cache'

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

const notFound = envelopeNotFound('route not found')

/**
 * The area's answer to a request no route serves (its row of the area table, app/app.ts): any other method on a
 * product path (POST, DELETE, TRACE, PROPFIND, …) is 405 with Allow and OPTIONS is 204 with Allow; any other path
 * is 404 `route not found`.
 */
export function productNotFound (request: FastifyRequest, reply: FastifyReply, pathInArea: string): FastifyReply {
  if (!isProductPath(pathInArea)) return notFound(request, reply)
  return answerUnservedMethod(request, reply, envelopeErrorHandler) ??
    envelopeErrorHandler(new MethodNotAllowedError(PRODUCT_METHODS), request, reply)
}

/** The products area: simple `{ error, code }` envelopes for every failure (the area table's shape, app/app.ts). */
const products: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/:id', {
    config: { auth: 'public' },
    schema: {
      tags: ['products'],
      operationId: 'getProduct',
      summary: 'Read a product',
      description: 'Returns the product stored at `id` with a strong `ETag` (a digest of its content) and ' +
        '`Cache-Control: public, max-age=0, must-revalidate`: caches may keep it but revalidate every time. With ' +
        '`If-None-Match` naming the current tag (or `*`) the answer is 304 without a body; with an `If-Match` that does not ' +
        'match, 412. Public: no API key needed (the catalogue). Each instance reuses the rendered answer for up to ' +
        '`PRODUCT_CACHE_TTL_MS` (1 s by default): a PUT is seen at once on the instance that took it and, with Redis, on the ' +
        'others within milliseconds; without Redis another instance may answer the previous version for at most that long.',
      security: publicOperation,
      params: ProductParams,
      headers: ProductConditionalGetHeaders,
      response: {
        200: productResponse,
        304: productErrors.notModified,
        400: productErrors.badRequest,
        401: productAuthErrors[401],
        404: productErrors.notFound,
        412: productErrors.preconditionFailed,
        429: productErrors.rateLimited,
        500: productErrors.internal,
        503: productErrors.unavailable
      }
    }
  }, async (request, reply) => {
    // The rendered answer (body and ETag) comes from the instance's product cache when it holds it (plugins/product-cache.ts).
    const id = request.params.id
    const rendered = await cachedRead(app.productCache, id, app.clock, async () => {
      const product = await app.products.get(id)
      // The route's own serializer (the 200 schema): the bytes the answer would have had without the cache.
      return { body: reply.serializeInput({ ...product }, '200', 'application/json') as string, etag: contentEtag(product) }
    })
    reply.header('etag', rendered.etag).header('cache-control', PRODUCT_CACHE_CONTROL)
    const outcome = evaluatePreconditions(request.method, request.headers, rendered.etag)
    if (outcome === 'failed') throw new PreconditionFailedError('If-Match does not match the product\'s current ETag.')
    if (outcome === 'not-modified') return reply.code(304).send()
    return reply.type('application/json; charset=utf-8').send(rendered.body)
  })

  app.put('/:id', {
    config: { auth: 'admin', audit: { action: 'product.update', resourceParam: 'id' } },
    schema: {
      tags: ['products'],
      operationId: 'putProduct',
      summary: 'Create or replace a product',
      description: 'Stores the whole product at `id`, creating it when it does not exist. ' +
        'PUT replaces: every field is required and nothing of the previous version is kept. ' +
        'The body must not carry an `id`: the path names the product (an `id` member is ignored for compatibility). ' +
        'Unknown fields are rejected. Answers 200 with the stored product and its `ETag`, also when the product was created: ' +
        'a deliberate deviation from RFC 9110 §9.3.4 (which suggests 201), kept from the original contract. ' +
        'Conditional: `If-Match` (strong comparison) stores only over the version you read, else 412 — `If-Match: *` on a ' +
        'product that does not exist is 412; `If-None-Match: *` creates only, 412 when the product exists. Needs the admin key.',
      security: requiresKey,
      params: ProductParams,
      headers: ProductConditionalPutHeaders,
      body: Type.Ref(ProductBody),
      response: { 200: productResponse, 400: productErrors.badRequest, ...productAuthErrors, 412: productErrors.preconditionFailed, ...commonErrors }
    }
  }, async (request, reply) => {
    if (request.headers['if-match'] !== undefined || request.headers['if-none-match'] !== undefined) {
      const current = await app.products.find(request.params.id)
      const outcome = evaluatePreconditions(request.method, request.headers, current === undefined ? undefined : contentEtag(current))
      if (outcome !== 'ok') {
        throw new PreconditionFailedError(current === undefined
          ? 'If-Match: the product does not exist; nothing was stored.'
          : 'The product\'s current ETag does not satisfy If-Match / If-None-Match; nothing was stored.')
      }
    }
    const product = await app.products.put({ id: request.params.id, name: request.body.name, price: request.body.price })
    await app.forgetProduct(product.id)
    reply.header('etag', contentEtag(product))
    return product
  })
}

export default products
