import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { PreconditionFailedError, UnsupportedMediaTypeError, ValidationError } from '../../src/domain/errors'
import { codeErrors, createInputErrors, mergePatchShapeErrors, merchantEtag } from '../../src/domain/merchants'
import { noteFieldErrors } from '../../plugins/http/errors/field-errors'
import { utf8JsonParser } from '../../plugins/http/json-body'
import { evaluatePreconditions } from '../../plugins/http/conditional'
import { IdempotencyHeaders, jsonResponse } from '../../schemas/common'
import { integerQuery, metadataGuard } from '../../plugins/http/request-guards'
import { validPageRequest } from '../../src/domain/pagination'
import { merchantCreatedResponse } from '../../plugins/stored-responses'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { mayChangeMerchantStatus } from '../../src/domain/api-keys'
import apiKeyRoutes from './api-keys'
import webhookEndpointRoutes from './webhook-endpoints'
import connectorRoutes from './connectors'
import userRoutes from './users'
import auditLogRoutes from './audit-log'
import {
  ACCEPT_PATCH,
  ConditionalGetHeaders,
  ConditionalPatchHeaders,
  CreateMerchantBody,
  MERGE_PATCH_MEDIA_TYPE,
  MerchantList,
  MerchantListQuery,
  MerchantParams,
  MerchantPatchBody,
  merchantErrors,
  merchantResponses,
  toMerchantResource
} from '../../schemas/merchants'

const JSON_MEDIA_TYPE = 'application/json'

/** The media type of the request body without parameters, lower case; undefined without Content-Type. */
function mediaTypeOf (request: FastifyRequest): string | undefined {
  const header = request.headers['content-type']
  return header?.split(';')[0]?.trim().toLowerCase()
}

function hasBody (request: FastifyRequest): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0
}

/**
 * Checks the media type before the body is read, so a wrong one is a 415
 * problem that says what to send (and, for PATCH, carries Accept-Patch).
 */
function requireMediaType (accepted: string[], describe: string, acceptPatch?: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const type = mediaTypeOf(request)
    if (type === undefined ? !hasBody(request) : accepted.includes(type)) return
    throw new UnsupportedMediaTypeError(`${describe}; got ${type === undefined ? 'no Content-Type' : `'${type}'`}.`, acceptPatch)
  }
}

/** Country and currency codes (and, on create, read-only fields), judged on the raw body so they are reported with the schema's errors. */
async function noteCodeErrors (request: FastifyRequest): Promise<void> {
  const body = request.body as Record<string, unknown> | null
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return
  noteFieldErrors(request, request.method === 'POST'
    ? createInputErrors(body)
    : codeErrors({
      ...(typeof body.country === 'string' ? { country: body.country } : {}),
      ...(typeof body.defaultCurrency === 'string' ? { defaultCurrency: body.defaultCurrency } : {})
    }))
}

const adminOnlyErrors = problemAuthErrors('only the admin key creates merchants', '/merchants',
  'This operation needs the admin key; a merchant API key may not call it.')
const listErrors = problemAuthErrors('only the admin key lists merchants', '/merchants',
  'This operation needs the admin key; a merchant API key may not call it.')
const ownErrors = problemAuthErrors('only the admin key changes `status`', '/merchants/7c9e6679-7425-40de-944b-e07fc1f90ae7',
  'Only the admin key may change a merchant\'s status; nothing was changed.')

/** The merchants area: RFC 9457 problem documents for every failure. */
const merchants: FastifyPluginAsyncTypebox = async (app) => {
  // JSON Merge Patch documents are JSON: same parser, same body limit (the
  // server's), same invalid-JSON and empty-body errors. Only in this plugin.
  app.addContentTypeParser(MERGE_PATCH_MEDIA_TYPE, { parseAs: 'buffer' }, utf8JsonParser(app))

  await app.register(apiKeyRoutes)
  await app.register(webhookEndpointRoutes)
  await app.register(connectorRoutes)
  await app.register(userRoutes)
  await app.register(auditLogRoutes)

  // '' (not '/'): the collection is /merchants, documented without a trailing slash.
  app.post('', {
    config: { auth: 'admin', audit: 'merchant.create' },
    schema: {
      tags: ['merchants'],
      operationId: 'createMerchant',
      summary: 'Create a merchant',
      description: 'Creates a merchant from `name` and `email` (required) and optionally `country`, `defaultCurrency` and `status` ' +
        '(default `active`). The service assigns `id`, `createdAt` and `updatedAt`; sending them, or any unknown field, is 400. ' +
        'Emails are unique case-insensitively: a second merchant with the same email is 409 ' +
        '(`type` urn:problem-type:merchant-email-taken). Answers 201 with the merchant, `Location: /merchants/{id}` and its `ETag`. ' +
        'The body must be `application/json`. Supports `Idempotency-Key` with the same semantics as payments: a repeat with the ' +
        'same body replays the 201 (`Idempotent-Replayed: true`), a different body is 409 `idempotency-key-reused`, a concurrent ' +
        'one 409 `idempotency-key-in-use`; rejected requests (400, 409 email taken, 413, 415, 429) leave the key unused. ' +
        'Needs the admin key (a merchant key is 403).',
      security: requiresKey,
      headers: IdempotencyHeaders,
      body: Type.Ref(CreateMerchantBody),
      response: {
        201: merchantResponses.created,
        400: merchantErrors.createValidation,
        ...adminOnlyErrors,
        409: merchantErrors.emailTaken,
        413: merchantErrors.tooLarge,
        415: merchantErrors.createUnsupportedMediaType,
        429: merchantErrors.rateLimited,
        500: merchantErrors.internal,
        503: merchantErrors.unavailable
      }
    },
    onRequest: requireMediaType([JSON_MEDIA_TYPE], 'POST /merchants takes application/json'),
    preValidation: [metadataGuard(), noteCodeErrors]
  }, async (request, reply) => {
    return await app.idempotency.handle(request, reply, {
      work: async (key) => await app.merchants.create(request.body, key),
      respond: merchantCreatedResponse
    })
  })

  app.get('', {
    config: { auth: 'admin' },
    schema: {
      tags: ['merchants'],
      operationId: 'listMerchants',
      summary: 'List merchants',
      description: 'Every merchant, newest first (created time, then id), paginated like the payment list: `limit` (1-100, ' +
        'default 10), `startingAfter` / `endingBefore` cursors, `hasMore`. The operator\'s view of the merchants: needs the admin key.',
      security: requiresKey,
      querystring: MerchantListQuery,
      response: {
        200: jsonResponse('A page of merchants.', Type.Ref(MerchantList)),
        400: merchantErrors.createValidation,
        ...listErrors,
        429: merchantErrors.rateLimited,
        500: merchantErrors.internal
      }
    },
    preValidation: integerQuery(['limit'])
  }, async (request) => {
    const page = validPageRequest(request.query)
    const result = await app.merchants.list(page)
    return { data: result.data.map(toMerchantResource), hasMore: result.hasMore }
  })

  app.get('/:id', {
    config: { auth: 'admin-or-own-merchant', roles: 'read' },
    schema: {
      tags: ['merchants'],
      operationId: 'getMerchant',
      summary: 'Read a merchant',
      description: 'Returns the merchant with its strong `ETag` (the version as a quoted integer, e.g. `"3"`). ' +
        'With `If-None-Match` naming the current tag (or `*`; lists allowed; weak comparison) the answer is 304 with the ETag and no body. ' +
        'An unknown id is 404; so is an id that is not a GUID, since it cannot name a merchant. ' +
        'Needs the admin key or the merchant\'s own key (another merchant\'s id is 404, as if it did not exist).',
      security: requiresKey,
      params: MerchantParams,
      headers: ConditionalGetHeaders,
      response: {
        200: merchantResponses.ok,
        304: merchantResponses.notModified,
        401: ownErrors[401],
        404: merchantErrors.notFound,
        412: merchantErrors.preconditionFailed,
        429: merchantErrors.rateLimited,
        500: merchantErrors.internal,
        503: merchantErrors.unavailable
      }
    }
  }, async (request, reply) => {
    const merchant = await app.merchants.get(request.params.id)
    const etag = merchantEtag(merchant)
    reply.header('etag', etag)
    const outcome = evaluatePreconditions(request.method, request.headers, etag)
    if (outcome === 'failed') throw new PreconditionFailedError(`If-Match does not match the merchant's current ETag ${etag}.`)
    if (outcome === 'not-modified') return reply.code(304).send()
    return toMerchantResource(merchant)
  })

  app.patch('/:id', {
    config: { auth: 'admin-or-own-merchant', roles: 'own', audit: { action: 'merchant.update', resourceParam: 'id' } },
    schema: {
      tags: ['merchants'],
      operationId: 'patchMerchant',
      summary: 'Partially update a merchant (JSON Merge Patch)',
      description: 'Applies a JSON Merge Patch (RFC 7396) sent as `application/merge-patch+json` (plain `application/json` is accepted ' +
        'as the same). Absent members stay unchanged; `null` removes `country` or `defaultCurrency`; `null` on `name`, `email` or ' +
        '`status` is 400. `id`, `createdAt` and `updatedAt` are read-only: sending a different value is 400 (repeating the current ' +
        'value is allowed). The body must be a JSON object. A patch that changes nothing (e.g. `{}`) answers 200 with the merchant ' +
        'unchanged: same ETag, same `updatedAt`. With `If-Match` (strong comparison, `*` matches any existing merchant) the patch ' +
        'applies only if the ETag is current, else 412. Concurrent patches never lose each other\'s changes (compare-and-set on the ' +
        'version). Another merchant\'s email is 409. Other media types are 415 with `Accept-Patch`. ' +
        'Needs the admin key or the merchant\'s own key (another merchant\'s id is 404); changing `status` needs the admin key (403).',
      security: requiresKey,
      params: MerchantParams,
      headers: ConditionalPatchHeaders,
      // Documented as a merge patch first (Swagger UI sends that), plain JSON accepted as the same.
      consumes: [MERGE_PATCH_MEDIA_TYPE, JSON_MEDIA_TYPE],
      body: Type.Ref(MerchantPatchBody),
      response: {
        200: merchantResponses.patched,
        400: merchantErrors.patchValidation,
        ...ownErrors,
        404: merchantErrors.notFound,
        409: merchantErrors.patchConflict,
        412: merchantErrors.preconditionFailed,
        413: merchantErrors.tooLarge,
        415: merchantErrors.patchUnsupportedMediaType,
        429: merchantErrors.rateLimited,
        500: merchantErrors.internal,
        503: merchantErrors.unavailable
      }
    },
    onRequest: requireMediaType([MERGE_PATCH_MEDIA_TYPE, JSON_MEDIA_TYPE],
      `PATCH /merchants/{id} takes ${MERGE_PATCH_MEDIA_TYPE} (or application/json)`, ACCEPT_PATCH),
    // Before the schema, for messages it cannot give: a non-object patch, null on a required field.
    preValidation: [async (request) => {
      const errors = mergePatchShapeErrors(request.body)
      if (Object.keys(errors).length > 0) throw new ValidationError(errors)
    }, metadataGuard({ allowNull: true }), noteCodeErrors]
  }, async (request, reply) => {
    const conditional = request.headers['if-match'] !== undefined || request.headers['if-none-match'] !== undefined
    const merchant = await app.merchants.patch(request.params.id, request.body,
      conditional ? (current) => evaluatePreconditions(request.method, request.headers, merchantEtag(current)) === 'ok' : undefined,
      { mayChangeStatus: request.principal !== null && mayChangeMerchantStatus(request.principal) })
    reply.header('etag', merchantEtag(merchant))
    return toMerchantResource(merchant)
  })
}

export default merchants
