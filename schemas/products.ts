import { Type, type Static } from '@sinclair/typebox'
import { NON_BLANK_PATTERN, PRODUCT_ID_MAX_LENGTH, PRODUCT_ID_PATTERN } from './patterns'
import { envelopeResponse, jsonResponse } from './common'

export { PRODUCT_ID_MAX_LENGTH }
/** The only methods a product accepts; every other one is 405 with this list in `Allow`. */
export const PRODUCT_METHODS = ['GET', 'HEAD', 'PUT', 'OPTIONS']

export const PRODUCT_NAME_MAX_LENGTH = 200
export const PRODUCT_PRICE_MAX = 1_000_000_000

export const ProductId = Type.String({
  minLength: 1,
  maxLength: PRODUCT_ID_MAX_LENGTH,
  pattern: PRODUCT_ID_PATTERN,
  description: `Product identifier chosen by the client: 1-${PRODUCT_ID_MAX_LENGTH} URL-safe characters (letters, digits, '.', '_', '~', '-'). Case-sensitive.`,
  examples: ['sku-123']
})

export const ProductParams = Type.Object({ id: ProductId })
export type ProductParamsType = Static<typeof ProductParams>

export const Product = Type.Object({
  id: ProductId,
  name: Type.String({ maxLength: PRODUCT_NAME_MAX_LENGTH, description: 'Display name.', examples: ['Espresso cup'] }),
  price: Type.Number({ minimum: 0, maximum: PRODUCT_PRICE_MAX, description: 'Price as a floating-point number.', examples: [12.5] })
}, { $id: 'Product', title: 'Product', additionalProperties: false, examples: [{ id: 'sku-123', name: 'Espresso cup', price: 12.5 }] })
export type ProductType = Static<typeof Product>

export const ProductBody = Type.Object({
  id: Type.Optional(Type.String({ maxLength: 1024, description: 'Ignored: the id in the path always wins. Do not send it.' })),
  name: Type.String({
    minLength: 1,
    maxLength: PRODUCT_NAME_MAX_LENGTH,
    pattern: NON_BLANK_PATTERN,
    description: `Required, not blank, at most ${PRODUCT_NAME_MAX_LENGTH} characters.`,
    examples: ['Espresso cup']
  }),
  price: Type.Number({
    minimum: 0,
    maximum: PRODUCT_PRICE_MAX,
    description: `Required, a finite number from 0 to ${PRODUCT_PRICE_MAX}.`,
    examples: [12.5]
  })
}, { $id: 'ProductReplacement', title: 'Product replacement', additionalProperties: false, examples: [{ name: 'Espresso cup', price: 12.5 }] })
export type ProductBodyType = Static<typeof ProductBody>

export const productErrors = {
  badRequest: envelopeResponse('Invalid id or body (code VALIDATION), invalid JSON (INVALID_JSON) or an empty body (EMPTY_BODY).'),
  notFound: envelopeResponse('No product has this id (NOT_FOUND).'),
  methodNotAllowed: envelopeResponse('Another method on this path (POST, DELETE, PATCH, …): only GET, HEAD, PUT and OPTIONS are allowed on a product (METHOD_NOT_ALLOWED); the Allow header lists them. Answered before the body is read.'),
  tooLarge: envelopeResponse('The body is larger than BODY_LIMIT (PAYLOAD_TOO_LARGE).'),
  unsupportedMediaType: envelopeResponse('The body is not application/json (UNSUPPORTED_MEDIA_TYPE).'),
  rateLimited: envelopeResponse('Too many requests from this client (RATE_LIMITED); see Retry-After.'),
  internal: envelopeResponse('Unexpected failure (INTERNAL); details are only in the server log.'),
  notModified: { description: 'The product you hold (If-None-Match) is current: no body; `ETag` repeats the tag.', type: 'null' },
  preconditionFailed: envelopeResponse('If-Match / If-None-Match did not hold (PRECONDITION_FAILED); nothing was stored.'),
  unavailable: envelopeResponse('The database is unavailable (restarting, unreachable, timed out, busy or out of space); nothing was lost. `Retry-After` says when to retry (code STORE_UNAVAILABLE).')
}

/** Products are public catalogue data: any cache may keep them, but must revalidate (ETag) before every use. */
export const PRODUCT_CACHE_CONTROL = 'public, max-age=0, must-revalidate'

export const ProductConditionalGetHeaders = Type.Object({
  'if-none-match': Type.Optional(Type.String({ maxLength: 1024, description: 'Entity tags you hold (or `*`): 304 when one is current (weak comparison).' })),
  'if-match': Type.Optional(Type.String({ maxLength: 1024, description: 'Entity tags (or `*`): 412 unless one is current (strong comparison).' }))
})

export const ProductConditionalPutHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ maxLength: 1024, description: 'Store only if the product\'s current ETag is one of these (strong comparison); `*`: only if it exists. Else 412.' })),
  'if-none-match': Type.Optional(Type.String({ maxLength: 1024, description: '`*`: create only; 412 when the product exists.' }))
})

export const productResponse = jsonResponse('The stored product.', Type.Ref(Product))
