import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { MAX_ACTIVE_API_KEYS } from '../../src/domain/api-keys'
import { IdempotencyHeaders, idempotencyRule, problemResponse } from '../../schemas/common'
import { apiKeyCreatedResponse } from '../../plugins/stored-responses'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { ApiKeyParams, CreateApiKeyBody, apiKeyResponses, toApiKeyResource } from '../../schemas/api-keys'
import { MerchantParams, merchantErrors } from '../../schemas/merchants'

const exampleMerchant = '/merchants/7c9e6679-7425-40de-944b-e07fc1f90ae7/api-keys'
// The admin key or the merchant's own: any other valid key is 404 (below), so there is no 403 to declare.
const authErrors = {
  401: problemAuthErrors('a merchant key for another merchant is answered 404, not 403', exampleMerchant,
    'The API key is valid but may not do this.')[401]
}
const notFound = problemResponse('No merchant has this id, or the key is another merchant\'s (answered 404 as if the merchant did not exist; also for an id that is not a GUID).')
const who = 'The admin key, or the merchant\'s own key (another merchant\'s id is 404, as if it did not exist).'

/** /merchants/{id}/api-keys: a merchant's keys (inside the merchants area: problem documents). */
const apiKeys: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/:id/api-keys', {
    config: { auth: 'admin-or-own-merchant', roles: 'own', audit: 'api_key.create' },
    // No body at all means "all defaults".
    preValidation: async (request) => { request.body ??= {} },
    schema: {
      tags: ['api keys'],
      operationId: 'createApiKey',
      summary: 'Create an API key',
      description: `${who} The body is optional (\`name\`, \`expiresAt\`). The answer is the only time the secret is shown; ` +
        'the service stores its SHA-256. A merchant may hold several active keys (at most ' + String(MAX_ACTIVE_API_KEYS) + ' not revoked; one more is 409): ' +
        'create the new one, deploy it, then revoke the old one. ' +
        idempotencyRule(true),
      security: requiresKey,
      params: MerchantParams,
      headers: IdempotencyHeaders,
      body: Type.Ref(CreateApiKeyBody),
      response: {
        201: apiKeyResponses.created,
        400: merchantErrors.createValidation,
        ...authErrors,
        404: notFound,
        409: problemResponse(`The merchant already holds ${MAX_ACTIVE_API_KEYS} keys that are not revoked; revoke one first.`),
        413: merchantErrors.tooLarge,
        415: merchantErrors.createUnsupportedMediaType,
        429: merchantErrors.rateLimited,
        500: merchantErrors.internal,
        503: merchantErrors.unavailable
      }
    }
  }, async (request, reply) => {
    // The answer carries the secret: no cache may keep it (Cache-Control: no-store), and its copy kept for replays is sealed.
    return await app.idempotency.handle(request, reply, {
      work: async (key) => await app.apiKeys.create(request.params.id, request.body, key),
      respond: apiKeyCreatedResponse,
      sealed: true
    })
  })

  app.get('/:id/api-keys', {
    config: { auth: 'admin-or-own-merchant', roles: 'develop' },
    schema: {
      tags: ['api keys'],
      operationId: 'listApiKeys',
      summary: 'List a merchant\'s API keys',
      description: `${who} Secrets are never listed: \`prefix\` and \`last4\` identify a key.`,
      security: requiresKey,
      params: MerchantParams,
      response: {
        200: apiKeyResponses.list,
        ...authErrors,
        404: notFound,
        429: merchantErrors.rateLimited,
        500: merchantErrors.internal,
        503: merchantErrors.unavailable
      }
    }
  }, async (request) => {
    return { data: (await app.apiKeys.list(request.params.id)).map(toApiKeyResource) }
  })

  app.delete('/:id/api-keys/:keyId', {
    config: { auth: 'admin-or-own-merchant', roles: 'develop', audit: { action: 'api_key.revoke', resourceParam: 'keyId' } },
    schema: {
      tags: ['api keys'],
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key',
      description: `${who} The key is refused (401) from the next request on by the instance that revoked it, and within ` +
        'milliseconds by the others (at most AUTH_CACHE_TTL_MS, 2 s by default, when an instance cannot hear of it through Redis). ' +
        'An unknown or already revoked key is 404. A merchant may revoke the key it is calling with.',
      security: requiresKey,
      params: ApiKeyParams,
      response: {
        204: apiKeyResponses.revoked,
        ...authErrors,
        404: problemAuthNotFound(),
        429: merchantErrors.rateLimited,
        500: merchantErrors.internal,
        503: merchantErrors.unavailable
      }
    }
  }, async (request, reply) => {
    await app.apiKeys.revoke(request.params.id, request.params.keyId)
    return reply.code(204).send()
  })
}

function problemAuthNotFound () {
  return { ...notFound, description: 'No such merchant (or the key is another merchant\'s), or it has no active key with this id.' }
}

export default apiKeys
