import { Type, type Static } from '@sinclair/typebox'
import { MAX_PARAM_LENGTH, NON_BLANK_PATTERN } from './patterns'
import { MERCHANT_EMAIL_MAX_LENGTH, MERCHANT_NAME_MAX_LENGTH, MERCHANT_STATUSES, type Merchant as StoredMerchant, type MerchantStatus } from '../src/domain/merchants'
import { Metadata, metadataMember, MetadataPatch, PageQuery, pageOf } from './listing'
import { jsonResponse, problemResponse } from './common'
import { apiVersionField, apiVersionInput } from './api-versions'

const exampleId = '019aa9e8-77d0-7b3f-a2c4-5e91d0f3b6c2'

export const MerchantId = Type.String({
  format: 'uuid',
  maxLength: 36,
  description: 'Merchant identifier: a GUID assigned by the service, time-ordered (UUIDv7, RFC 9562: its first 48 bits ' +
    'are the creation time in milliseconds, the rest random). Treat it as opaque.',
  examples: [exampleId]
})

export const MerchantParams = Type.Object({
  id: Type.String({
    maxLength: MAX_PARAM_LENGTH,
    description: 'The merchant GUID (any letter case). A value that is not a GUID cannot name a merchant and is answered ' +
      '404 like an unknown GUID, not 400: the path names no resource, whatever its shape.',
    examples: [exampleId]
  })
})
export type MerchantParamsType = Static<typeof MerchantParams>

const nameDescription = `Display name: not blank, at most ${MERCHANT_NAME_MAX_LENGTH} characters.`
const nameSchema = (description: string) => Type.String({
  minLength: 1,
  maxLength: MERCHANT_NAME_MAX_LENGTH,
  pattern: NON_BLANK_PATTERN,
  description,
  examples: ['Blue Bottle Roasters']
})

const emailDescription = `Contact email address, at most ${MERCHANT_EMAIL_MAX_LENGTH} characters. Unique across merchants, compared ` +
  'case-insensitively (a second merchant with `Ops@Example.com` when `ops@example.com` exists is 409). Stored as sent.'
const emailSchema = (description: string) => Type.String({
  format: 'email',
  maxLength: MERCHANT_EMAIL_MAX_LENGTH,
  description,
  examples: ['ops@bluebottle.example']
})

const countryDescription = 'ISO 3166-1 alpha-2 country code in upper case (US, DE, JP …); only officially assigned codes.'
const currencyDescription = 'Default ISO 4217 currency in upper case (USD, EUR, JPY …); only active codes, the same list as payments.'

const statusSchema = (description: string) => Type.Unsafe<MerchantStatus>({
  type: 'string',
  enum: [...MERCHANT_STATUSES],
  description,
  examples: ['active']
})

// Accepted by the validator (a POST that sends them gets a 400 naming them; a PATCH may repeat the current value) but
// `readOnly`: the OpenAPI document leaves them out of request bodies, so generated clients do not offer them.
const readOnlyInRequest = (what: string) => Type.Optional(Type.Unknown({
  readOnly: true,
  description: `Read-only (${what}). ` +
    'On POST it must not be sent; on PATCH it may only repeat the current value, anything else is 400.'
}))

export const Merchant = Type.Object({
  id: MerchantId,
  name: Type.String({ maxLength: MERCHANT_NAME_MAX_LENGTH, description: 'Display name.', examples: ['Blue Bottle Roasters'] }),
  email: Type.String({ format: 'email', maxLength: MERCHANT_EMAIL_MAX_LENGTH, description: 'Contact email address, unique case-insensitively.', examples: ['ops@bluebottle.example'] }),
  country: Type.Optional(Type.String({ maxLength: 2, pattern: '^[A-Z]{2}$', description: `${countryDescription} Omitted when not set.`, examples: ['US'] })),
  defaultCurrency: Type.Optional(Type.String({ maxLength: 3, pattern: '^[A-Z]{3}$', description: `${currencyDescription} Omitted when not set.`, examples: ['USD'] })),
  status: statusSchema('`active` or `suspended`. A suspended merchant\'s keys create no payments (403) but still read, refund and cancel its payments.'),
  metadata: Type.Optional(Metadata),
  apiVersion: apiVersionField('The API version the merchant\'s requests are answered in unless they send `Api-Version`, and new webhook endpoints are pinned to: the current version when the merchant was created (merchants created before versioning: 2026-11-01). PATCH it to upgrade.'),
  createdAt: Type.String({ format: 'date-time', maxLength: 64, description: 'When the merchant was created (ISO 8601, UTC).', examples: ['2026-01-15T09:30:00.000Z'] }),
  updatedAt: Type.String({ format: 'date-time', maxLength: 64, description: 'When the merchant last changed (ISO 8601, UTC). A patch that changes nothing leaves it as it is.', examples: ['2026-01-15T09:30:00.000Z'] })
}, {
  $id: 'Merchant',
  title: 'Merchant',
  additionalProperties: false,
  examples: [{
    id: exampleId,
    name: 'Blue Bottle Roasters',
    email: 'ops@bluebottle.example',
    country: 'US',
    defaultCurrency: 'USD',
    status: 'active',
    metadata: { crmId: 'C-981' },
    apiVersion: '2026-11-25',
    createdAt: '2026-01-15T09:30:00.000Z',
    updatedAt: '2026-01-15T09:30:00.000Z'
  }]
})
export type MerchantType = Static<typeof Merchant>

/** The merchants collection, as mounted by the area table in app/app.ts (and named in `Location`). */
export const MERCHANTS_PATH = '/merchants'

/** A merchant as the API shows it: optional fields that are not set are omitted; the version is only in the ETag. */
export function toMerchantResource (merchant: StoredMerchant): MerchantType {
  // Member order is stable for readers: id, name, email, country, defaultCurrency, status, metadata, timestamps.
  return {
    id: merchant.id,
    name: merchant.name,
    email: merchant.email,
    ...(merchant.country !== null ? { country: merchant.country } : {}),
    ...(merchant.defaultCurrency !== null ? { defaultCurrency: merchant.defaultCurrency } : {}),
    status: merchant.status,
    ...metadataMember(merchant.metadata),
    apiVersion: merchant.apiVersion,
    createdAt: merchant.createdAt,
    updatedAt: merchant.updatedAt
  }
}

export const CreateMerchantBody = Type.Object({
  name: nameSchema(`Required. ${nameDescription}`),
  email: emailSchema(`Required. ${emailDescription}`),
  country: Type.Optional(Type.String({ maxLength: 64, description: `Optional. ${countryDescription}`, examples: ['US'] })),
  defaultCurrency: Type.Optional(Type.String({ maxLength: 64, description: `Optional. ${currencyDescription}`, examples: ['USD'] })),
  status: Type.Optional(statusSchema('Optional: `active` (the default) or `suspended`.')),
  metadata: Type.Optional(Metadata),
  apiVersion: Type.Optional(apiVersionInput('Optional: the API version to pin the merchant to; default the current one.')),
  id: readOnlyInRequest('assigned by the service'),
  createdAt: readOnlyInRequest('set by the service'),
  updatedAt: readOnlyInRequest('set by the service')
}, {
  $id: 'CreateMerchantRequest',
  title: 'Merchant creation',
  additionalProperties: false,
  description: 'Unknown fields are rejected.',
  examples: [{ name: 'Blue Bottle Roasters', email: 'ops@bluebottle.example', country: 'US', defaultCurrency: 'USD' }]
})
export type CreateMerchantBodyType = Static<typeof CreateMerchantBody>

const nullable = (description: string, example: string) => Type.Optional(Type.Unsafe<string | null>({
  type: ['string', 'null'],
  maxLength: 64,
  description,
  examples: [example]
}))

export const MerchantPatchBody = Type.Object({
  name: Type.Optional(nameSchema(`${nameDescription} Cannot be null (required).`)),
  email: Type.Optional(emailSchema(`${emailDescription} Cannot be null (required).`)),
  country: nullable(`${countryDescription} \`null\` removes it.`, 'DE'),
  defaultCurrency: nullable(`${currencyDescription} \`null\` removes it.`, 'EUR'),
  status: Type.Optional(statusSchema('`active` or `suspended`. Cannot be null (required).')),
  metadata: Type.Optional(MetadataPatch),
  apiVersion: Type.Optional(apiVersionInput('Moves the merchant (its requests without `Api-Version`, its new webhook endpoints) to this version: upgrade once your integration handles the changes listed for it. Cannot be null.')),
  id: readOnlyInRequest('assigned by the service'),
  createdAt: readOnlyInRequest('set by the service'),
  updatedAt: readOnlyInRequest('set by the service')
}, {
  $id: 'MerchantPatch',
  title: 'Merchant merge patch',
  additionalProperties: false,
  description: 'A JSON Merge Patch (RFC 7396): members that are absent stay unchanged, `null` removes an optional member, ' +
    'any other value replaces it. The body must be a JSON object. Unknown fields are rejected.',
  examples: [{ country: 'DE', defaultCurrency: null, metadata: { crmId: 'C-982', legacyRef: null } }]
})
export type MerchantPatchBodyType = Static<typeof MerchantPatchBody>

export const ConditionalGetHeaders = Type.Object({
  'if-none-match': Type.Optional(Type.String({
    maxLength: 1024,
    description: 'Entity tags (or `*`) the client already has. When one matches the current ETag (weak comparison), the answer is 304 without a body.'
  })),
  'if-match': Type.Optional(Type.String({
    maxLength: 1024,
    description: 'Entity tags (or `*`): unless one matches the current ETag (strong comparison), the answer is 412.'
  }))
})

export const ConditionalPatchHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({
    description: 'Optional. Apply the patch only if the merchant\'s current ETag is one of these (strong comparison; `*` matches any ' +
      'existing merchant); otherwise 412 and nothing changes. Use the ETag of your last read to avoid overwriting someone else\'s change.',
    maxLength: 1024
  })),
  'if-none-match': Type.Optional(Type.String({
    description: 'Optional. Apply the patch only if the merchant\'s current ETag is none of these (weak comparison; `*` matches any ' +
      'existing merchant, so `If-None-Match: *` always fails on PATCH); otherwise 412 and nothing changes.',
    maxLength: 1024
  }))
})

const etagHeader = {
  etag: { type: 'string', description: 'Strong entity tag of the merchant: its version as a quoted integer, e.g. `"3"`. Changes on every change of the merchant.' }
}

export const MERGE_PATCH_MEDIA_TYPE = 'application/merge-patch+json'
export const ACCEPT_PATCH = `${MERGE_PATCH_MEDIA_TYPE}, application/json`

export const merchantResponses = {
  created: {
    ...jsonResponse('The merchant was created. `Location` holds its URL (`/merchants/{id}`) and `ETag` its entity tag.', Type.Ref(Merchant)),
    headers: {
      location: { type: 'string', description: 'The URL path of the new merchant: `/merchants/{id}`.' },
      ...etagHeader
    }
  },
  ok: {
    ...jsonResponse('The merchant, with its `ETag`.', Type.Ref(Merchant)),
    headers: etagHeader
  },
  patched: {
    ...jsonResponse('The merchant after the patch, with its new `ETag` (unchanged when the patch changed nothing).', Type.Ref(Merchant)),
    headers: etagHeader
  },
  notModified: {
    description: 'The representation the client holds (If-None-Match) is current. No body.',
    type: 'null',
    headers: etagHeader
  }
}

export const merchantErrors = {
  createValidation: problemResponse('Validation failure: `errors` maps each JSON field name to messages (a missing, blank or too long ' +
    'name, an invalid email, an unknown or lower-case country or currency code, an unknown field, a read-only field); also invalid JSON or an empty body.'),
  patchValidation: problemResponse('Validation failure: `errors` maps each JSON field name to messages (also: null on a required field, ' +
    'a different value for id/createdAt/updatedAt, a body that is not a JSON object); also invalid JSON or an empty body.'),
  notFound: problemResponse('No merchant has this id (also answered for an id that is not a GUID).'),
  emailTaken: problemResponse('Another merchant already uses this email, compared case-insensitively (`type` urn:problem-type:merchant-email-taken); ' +
    'or the Idempotency-Key was reused with a different body (urn:problem-type:idempotency-key-reused) or is still in flight ' +
    '(urn:problem-type:idempotency-key-in-use, with Retry-After).'),
  patchConflict: problemResponse('Another merchant already uses this email (`type` urn:problem-type:merchant-email-taken), or the merchant ' +
    'kept changing concurrently while the patch was retried (`type` RFC 9110 409); re-read and retry.'),
  preconditionFailed: problemResponse('If-Match does not match the merchant\'s current ETag (strong comparison): someone changed it since you read it. Nothing was changed; re-read and retry.'),
  tooLarge: problemResponse('The body is larger than BODY_LIMIT.'),
  createUnsupportedMediaType: problemResponse('The body is not application/json.'),
  patchUnsupportedMediaType: {
    ...problemResponse('The body is neither application/merge-patch+json nor application/json. ' +
      'The `Accept-Patch` header lists the accepted media types.'),
    headers: { 'accept-patch': { type: 'string', description: `The media types PATCH accepts: \`${ACCEPT_PATCH}\`.` } }
  },
  rateLimited: problemResponse('Too many requests from this client; see Retry-After.'),
  internal: problemResponse('Unexpected failure; the body carries only a generic title and the trace id.'),
  unavailable: problemResponse('The database is unavailable (restarting, unreachable, timed out, busy or out of space); nothing was lost. `Retry-After` says when to retry (with the same Idempotency-Key, if any). (urn:problem-type:service-unavailable)')
}

export const MerchantListQuery = PageQuery

export const MerchantList = pageOf(Merchant, 'Merchant list', {
  id: exampleId,
  name: 'Blue Bottle Roasters',
  email: 'ops@bluebottle.example',
  status: 'active',
  apiVersion: '2026-11-25',
  createdAt: '2026-01-15T09:30:00.000Z',
  updatedAt: '2026-01-15T09:30:00.000Z'
})
