import { ConflictError, ValidationError, type FieldErrors } from './errors'
import { isCountryCode } from './countries'
import { invalidCurrencyMessage, isActiveCurrency } from './currencies'
import { mergeMetadata, metadataErrors, type Metadata } from './metadata'
import { isApiVersion, LATEST_API_VERSION, unknownVersionMessage, type ApiVersion } from './api-versions'

export const MERCHANT_STATUSES = ['active', 'suspended'] as const
export type MerchantStatus = typeof MERCHANT_STATUSES[number]

export const MERCHANT_NAME_MAX_LENGTH = 200
/** RFC 5321 limits a forward path to 256 octets including the angle brackets. */
export const MERCHANT_EMAIL_MAX_LENGTH = 254

/** A merchant as stored. `version` starts at 1 and grows by one on every change. */
export interface Merchant {
  id: string
  name: string
  email: string
  /** ISO 3166-1 alpha-2, or null when not set. */
  country: string | null
  /** ISO 4217 (active codes only), or null when not set. */
  defaultCurrency: string | null
  status: MerchantStatus
  /** The client's own key-value pairs ({} when none). */
  metadata: Metadata
  /** The API version its requests are answered in unless they send `Api-Version`; changed by PATCH to upgrade. */
  apiVersion: ApiVersion
  version: number
  /** ISO 8601 UTC timestamps. */
  createdAt: string
  updatedAt: string
}

/** The fields a client may set: everything but id, version and the timestamps. */
export type MerchantFields = Pick<Merchant, 'name' | 'email' | 'country' | 'defaultCurrency' | 'status' | 'metadata' | 'apiVersion'>

/** A second merchant with the same email (compared case-insensitively); mapped centrally to 409. */
export class EmailTakenError extends ConflictError {
  override readonly code = 'EMAIL_TAKEN'
  constructor () {
    super('Another merchant already uses this email address (emails are compared case-insensitively).')
  }
}

export const READ_ONLY_FIELDS = ['id', 'createdAt', 'updatedAt'] as const
export type ReadOnlyField = typeof READ_ONLY_FIELDS[number]
export const REQUIRED_FIELDS = ['name', 'email', 'status'] as const

const readOnlyReasons: Record<ReadOnlyField, string> = {
  id: 'is assigned by the service',
  createdAt: 'is set by the service when the merchant is created',
  updatedAt: 'is set by the service on every change'
}

export { isGuid } from './ids'

/** Strong ETag of a merchant: its version, quoted. Changes exactly when the stored record changes. */
export function merchantEtag (merchant: Pick<Merchant, 'version'>): string {
  return `"${merchant.version}"`
}

/** Quotes a client value in a message, unless it is too long to be useful. */
function quoted (value: string): string {
  return value.length <= 16 ? ` (got '${value}')` : ''
}

/** Checks what the JSON schema cannot: country and currency codes are real, assigned, upper-case codes. */
export function codeErrors (fields: { country?: string | null, defaultCurrency?: string | null }): FieldErrors {
  const errors: FieldErrors = {}
  const { country, defaultCurrency } = fields
  if (typeof country === 'string' && !isCountryCode(country)) {
    const upper = country.toUpperCase()
    errors.country = [isCountryCode(upper)
      ? `The country field must be an upper-case ISO 3166-1 alpha-2 code: use '${upper}', not '${country}'.`
      : /^[A-Za-z]{2}$/.test(country)
        ? `The country field must be an officially assigned ISO 3166-1 alpha-2 country code such as US, DE or JP; '${country}' is not one.`
        : `The country field must be a two-letter ISO 3166-1 alpha-2 country code such as US, DE or JP${quoted(country)}.`]
  }
  if (typeof defaultCurrency === 'string' && !isActiveCurrency(defaultCurrency)) {
    errors.defaultCurrency = [invalidCurrencyMessage('defaultCurrency', defaultCurrency)]
  }
  return errors
}

function throwIfAny (errors: FieldErrors): void {
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
}

/** What POST /merchants accepts (after schema validation). */
export interface MerchantCreateInput {
  name: string
  email: string
  country?: string
  defaultCurrency?: string
  status?: MerchantStatus
  metadata?: Metadata
  /** Defaults to the current version. */
  apiVersion?: string
  id?: unknown
  createdAt?: unknown
  updatedAt?: unknown
}

function apiVersionErrors (apiVersion: unknown): FieldErrors {
  return apiVersion === undefined || isApiVersion(apiVersion) ? {} : { apiVersion: [unknownVersionMessage(String(apiVersion))] }
}

/** What a create request gets wrong besides its shape: read-only fields sent, unknown codes. Tolerates any types. */
export function createInputErrors (input: Partial<Record<keyof MerchantCreateInput, unknown>>): FieldErrors {
  const errors: FieldErrors = {}
  for (const field of READ_ONLY_FIELDS) {
    if (input[field] !== undefined) errors[field] = [`The ${field} field ${readOnlyReasons[field]}; do not send it.`]
  }
  return Object.assign(errors, codeErrors({
    ...(typeof input.country === 'string' ? { country: input.country } : {}),
    ...(typeof input.defaultCurrency === 'string' ? { defaultCurrency: input.defaultCurrency } : {})
  }))
}

/** Validates a create request and builds the new record (version 1). Throws ValidationError. */
export function buildMerchant (input: MerchantCreateInput, id: string, now: string): Merchant {
  const errors: FieldErrors = { ...createInputErrors(input), ...metadataErrors(input.metadata), ...apiVersionErrors(input.apiVersion) }
  throwIfAny(errors)
  return {
    id,
    name: input.name,
    email: input.email,
    country: input.country ?? null,
    defaultCurrency: input.defaultCurrency ?? null,
    status: input.status ?? 'active',
    metadata: input.metadata ?? {},
    apiVersion: isApiVersion(input.apiVersion) ? input.apiVersion : LATEST_API_VERSION,
    version: 1,
    createdAt: now,
    updatedAt: now
  }
}

/** What PATCH /merchants/{id} accepts (after schema validation): a JSON Merge Patch (RFC 7396). */
export interface MerchantPatch {
  name?: string
  email?: string
  country?: string | null
  defaultCurrency?: string | null
  status?: MerchantStatus
  /** Merge-patched key by key: null removes a key. */
  metadata?: Record<string, string | null> | null
  /** Moves the merchant to another supported version (an upgrade, or back while it migrates). */
  apiVersion?: string
  id?: unknown
  createdAt?: unknown
  updatedAt?: unknown
}

/**
 * Checks the shape of a merge patch before the schema does, for messages the
 * schema cannot give: a non-object patch would replace the whole merchant (RFC
 * 7396), and null on a required field would remove it.
 */
export function mergePatchShapeErrors (body: unknown): FieldErrors {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { $: ['The request body must be a JSON object (a JSON Merge Patch of the fields to change); a patch that is not an object would replace the whole merchant, which is not allowed.'] }
  }
  const errors: FieldErrors = {}
  for (const field of REQUIRED_FIELDS) {
    if ((body as Record<string, unknown>)[field] === null) {
      errors[field] = [`The ${field} field is required and cannot be removed; send a new value instead of null.`]
    }
  }
  return errors
}

/**
 * Applies a merge patch to the current record (RFC 7396: absent = unchanged,
 * null = remove, value = replace). Read-only fields may be sent only with
 * their current value (so a client can send back what it read); any other
 * value is a validation error. Throws ValidationError.
 */
export function applyMerchantPatch (current: Merchant, patch: MerchantPatch): MerchantFields {
  const errors: FieldErrors = mergePatchShapeErrors(patch)
  for (const field of READ_ONLY_FIELDS) {
    const value = patch[field]
    if (value !== undefined && value !== current[field]) {
      errors[field] = [`The ${field} field is read-only: it ${readOnlyReasons[field]} and cannot be changed.`]
    }
  }
  Object.assign(errors, codeErrors(patch), metadataErrors(patch.metadata ?? undefined, { allowNull: true }), apiVersionErrors(patch.apiVersion))
  throwIfAny(errors)
  // RFC 7396 recursively: `metadata: null` removes every key, an object patches key by key.
  const metadata = patch.metadata === undefined
    ? current.metadata
    : patch.metadata === null ? {} : mergeMetadata(current.metadata, patch.metadata)
  throwIfAny(metadataErrors(metadata))
  return {
    name: patch.name ?? current.name,
    email: patch.email ?? current.email,
    country: patch.country === undefined ? current.country : patch.country,
    defaultCurrency: patch.defaultCurrency === undefined ? current.defaultCurrency : patch.defaultCurrency,
    status: patch.status ?? current.status,
    metadata,
    apiVersion: isApiVersion(patch.apiVersion) ? patch.apiVersion : current.apiVersion
  }
}

/** True when applying `fields` would leave the record as it is. */
export function isUnchanged (current: Merchant, fields: MerchantFields): boolean {
  return current.name === fields.name &&
    current.email === fields.email &&
    current.country === fields.country &&
    current.defaultCurrency === fields.defaultCurrency &&
    current.status === fields.status &&
    current.apiVersion === fields.apiVersion &&
    JSON.stringify(current.metadata) === JSON.stringify(fields.metadata)
}

/** The 404 detail for a merchant id, the same whether the merchant is missing or belongs to someone else. */
export function merchantNotFoundMessage (id: string): string {
  return `No merchant has the id '${id.length <= 64 ? id : `${id.slice(0, 64)}…`}'.`
}
