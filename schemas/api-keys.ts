import { Type, type Static } from '@sinclair/typebox'
import { MerchantParams } from './merchants'
import { MAX_PARAM_LENGTH } from './patterns'
import { MAX_ACTIVE_API_KEYS, type ApiKey as StoredApiKey } from '../src/domain/api-keys'
import { jsonResponse } from './common'

const exampleKeyId = '019aa9e9-0a1b-7c2d-9e3f-4a5b6c7d8e9f'
const nullableDateTime = (description: string) => Type.Union([Type.String({ format: 'date-time', maxLength: 64 }), Type.Null()], { description })

const keyFields = {
  id: Type.String({ format: 'uuid', maxLength: 36, description: 'The key\'s id (for DELETE); not a secret.', examples: [exampleKeyId] }),
  name: Type.String({ maxLength: 100, description: 'A label for the key.', examples: ['checkout server'] }),
  prefix: Type.String({ maxLength: 16, pattern: '^sk_[A-Za-z0-9_-]*$', description: 'The first characters of the secret, to recognise the key.', examples: ['sk_q3Zx'] }),
  last4: Type.String({ maxLength: 4, pattern: '^[A-Za-z0-9_-]{4}$', description: 'The last four characters of the secret.', examples: ['Hd8a'] }),
  createdAt: Type.String({ format: 'date-time', maxLength: 64 }),
  lastUsedAt: nullableDateTime('When the key last authenticated a request, to the minute (null: never). Updated at most once a minute.'),
  expiresAt: nullableDateTime('After this time the key is refused (401); null: it does not expire.')
}

const exampleKey = {
  id: exampleKeyId,
  name: 'checkout server',
  prefix: 'sk_q3Zx',
  last4: 'Hd8a',
  createdAt: '2026-01-15T09:30:00.000Z',
  lastUsedAt: '2026-01-15T10:12:00.000Z',
  expiresAt: null
}

export const ApiKey = Type.Object(keyFields, {
  $id: 'ApiKey',
  title: 'API key',
  description: 'An API key as listed: never its secret.',
  additionalProperties: false,
  examples: [exampleKey]
})

export type ApiKeyType = Static<typeof ApiKey>

/** A key as its owner sees it: never the secret or its hash. */
export function toApiKeyResource (key: StoredApiKey): ApiKeyType {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    last4: key.last4,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    expiresAt: key.expiresAt
  }
}

export const CreatedApiKey = Type.Object({
  ...keyFields,
  secret: Type.String({
    maxLength: 64,
    pattern: '^sk_[A-Za-z0-9_-]+$',
    description: 'The key itself, `sk_` + 32 characters (192 random bits). Shown only in this response: store it now. ' +
      'The service keeps only its SHA-256.',
    examples: ['sk_q3ZxEXAMPLEonlyNOTaREALkeyXXHd8a']
  })
}, {
  $id: 'CreatedApiKey',
  title: 'New API key (with its secret)',
  additionalProperties: false,
  examples: [{ ...exampleKey, lastUsedAt: null, secret: 'sk_q3ZxEXAMPLEonlyNOTaREALkeyXXHd8a' }]
})
export type CreatedApiKeyType = Static<typeof CreatedApiKey>

export const ApiKeyList = Type.Object({
  data: Type.Array(Type.Ref(ApiKey), { maxItems: MAX_ACTIVE_API_KEYS, description: `The merchant's keys that are not revoked, oldest first (expired ones included): at most ${MAX_ACTIVE_API_KEYS}.` })
}, { $id: 'ApiKeyCollection', title: 'API keys', additionalProperties: false, examples: [{ data: [exampleKey] }] })

export const CreateApiKeyBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A label (default `API key`).', examples: ['checkout server'] })),
  expiresAt: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'When the key stops working (ISO 8601, in the future). Default: never.', examples: ['2027-01-01T00:00:00Z'] }))
}, { $id: 'CreateApiKeyRequest', title: 'API key request', additionalProperties: false, examples: [{ name: 'checkout server', expiresAt: '2027-01-01T00:00:00Z' }] })
export type CreateApiKeyBodyType = Static<typeof CreateApiKeyBody>

export const ApiKeyParams = Type.Object({
  id: MerchantParams.properties.id,
  keyId: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The key\'s id, as listed.', examples: [exampleKeyId] })
})

export const apiKeyResponses = {
  created: {
    ...jsonResponse('The key. `secret` is shown only here (`Cache-Control: no-store`).', Type.Ref(CreatedApiKey)),
    headers: { 'cache-control': { type: 'string', description: '`no-store`: the response carries a secret.' } }
  },
  list: jsonResponse('The merchant\'s active keys.', Type.Ref(ApiKeyList)),
  revoked: { description: 'Revoked: refused from the next request on (other instances: within milliseconds through Redis, at most AUTH_CACHE_TTL_MS without it).', type: 'null' }
}
