import { DomainError, type FieldErrors } from './errors'
import { CONNECTOR_TYPES, type ConnectorType } from './routing'

export { CONNECTOR_TYPES, type ConnectorType }

export const CONNECTOR_STATUSES = ['enabled', 'disabled'] as const
export type ConnectorStatus = typeof CONNECTOR_STATUSES[number]

/** Routing order: lower first; equal priorities go oldest first. */
export const PRIORITY_MIN = 0
export const PRIORITY_MAX = 1000
export const DEFAULT_PRIORITY = 0
export const DESCRIPTION_MAX_LENGTH = 255
/** At most this many connector accounts (not deleted) per merchant. */
export const MAX_CONNECTORS_PER_MERCHANT = 20

/** Stripe secret and restricted keys, test or live. */
export const STRIPE_SECRET_KEY = /^(sk|rk)_(test|live)_[0-9A-Za-z]{8,247}$/
/** A Stripe webhook endpoint's signing secret (for the Stripe events route). */
export const STRIPE_WEBHOOK_SECRET = /^whsec_[0-9A-Za-z]{8,}$/

/** An Adyen API key (Customer Area: Developers › API credentials): printable, no spaces. */
export const ADYEN_API_KEY = /^[\x21-\x7E]{16,255}$/
/** An Adyen merchant account name, e.g. YourCompanyECOM. */
export const ADYEN_MERCHANT_ACCOUNT = /^[A-Za-z0-9_.-]{1,255}$/
/** The HMAC key of an Adyen webhook (hex; Adyen generates 64 digits), which signs its notifications. */
export const ADYEN_HMAC_KEY = /^(?:[0-9A-Fa-f]{2}){16,64}$/
/** The prefix of an account's live endpoints (Customer Area: Developers › API URLs), e.g. 1797a841fbb37ca7-AdyenDemo. */
export const ADYEN_LIVE_URL_PREFIX = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,98}[A-Za-z0-9])?$/

/** A merchant's account at a PSP, as the API shows it (never its credentials). */
export interface ConnectorAccount {
  id: string
  merchantId: string
  type: ConnectorType
  priority: number
  status: ConnectorStatus
  description: string | null
  /** `…` and the last 4 characters of the secret key; null when the type takes no credentials. */
  credentialsHint: string | null
  createdAt: string
  updatedAt: string
}

/** As stored: the credentials sealed (JSON, encrypted with the account id as associated data); deleted accounts kept. */
export interface StoredConnectorAccount extends ConnectorAccount {
  credentials: string
  deletedAt: string | null
}

export type ConnectorCredentialsInput = Record<string, string>

export interface ConnectorInput {
  type: ConnectorType
  credentials?: ConnectorCredentialsInput
  priority?: number
  description?: string
}

export interface ConnectorPatch {
  priority?: number
  status?: ConnectorStatus
  description?: string | null
  credentials?: ConnectorCredentialsInput
}

const isType = (value: unknown): value is ConnectorType => typeof value === 'string' && (CONNECTOR_TYPES as readonly string[]).includes(value)

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Members of `given` that an account of this type does not take. */
function unknownMembers (given: Record<string, unknown>, allowed: readonly string[], message: string): FieldErrors {
  const errors: FieldErrors = {}
  for (const key of Object.keys(given)) {
    if (!allowed.includes(key)) errors[`credentials.${key}`.slice(0, 256)] = [message]
  }
  return errors
}

function stripeCredentialErrors (credentials: unknown): FieldErrors {
  if (!isObject(credentials)) return { credentials: ['A stripe connector needs credentials: { "secretKey": "sk_test_…" } (a secret or restricted key).'] }
  const errors = unknownMembers(credentials, ['secretKey', 'webhookSecret'], 'Unknown member: stripe credentials are secretKey and, optionally, webhookSecret.')
  if (typeof credentials.secretKey !== 'string' || !STRIPE_SECRET_KEY.test(credentials.secretKey)) {
    errors['credentials.secretKey'] = ['The secretKey must be a Stripe secret or restricted key: sk_test_…, sk_live_…, rk_test_… or rk_live_… followed by 8-247 letters and digits.']
  }
  if (credentials.webhookSecret !== undefined && (typeof credentials.webhookSecret !== 'string' || !STRIPE_WEBHOOK_SECRET.test(credentials.webhookSecret))) {
    errors['credentials.webhookSecret'] = ['The webhookSecret must be a Stripe webhook signing secret: whsec_ followed by at least 8 letters and digits.']
  }
  return errors
}

function adyenCredentialErrors (credentials: unknown): FieldErrors {
  if (!isObject(credentials)) {
    return { credentials: ['An adyen connector needs credentials: { "apiKey": "AQE…", "merchantAccount": "YourCompanyECOM", "hmacKey": "…" } (and "liveUrlPrefix" for a live account).'] }
  }
  const errors = unknownMembers(credentials, ['apiKey', 'merchantAccount', 'hmacKey', 'liveUrlPrefix'],
    'Unknown member: adyen credentials are apiKey, merchantAccount, hmacKey and, for a live account, liveUrlPrefix.')
  const check = (member: string, pattern: RegExp, message: string, optional = false): void => {
    const value = credentials[member]
    if (optional && value === undefined) return
    if (typeof value !== 'string' || !pattern.test(value)) errors[`credentials.${member}`] = [message]
  }
  check('apiKey', ADYEN_API_KEY, 'The apiKey must be an Adyen API key: 16-255 printable characters without spaces.')
  check('merchantAccount', ADYEN_MERCHANT_ACCOUNT, 'The merchantAccount must be the Adyen merchant account name: letters, digits, _ . and -.')
  check('hmacKey', ADYEN_HMAC_KEY, 'The hmacKey must be the HMAC key of the Adyen webhook, in hex (32-128 digits; Adyen generates 64).')
  check('liveUrlPrefix', ADYEN_LIVE_URL_PREFIX, 'The liveUrlPrefix must be the prefix of the account\'s live endpoints (letters, digits and -), e.g. 1797a841fbb37ca7-AdyenDemo.', true)
  return errors
}

/**
 * What is wrong with `credentials` for an account of `type` (field errors under `credentials…`).
 * Messages describe the expected form and never quote what was sent.
 */
export function credentialErrors (type: ConnectorType, credentials: unknown): FieldErrors {
  switch (type) {
    case 'simulated': {
      const empty = credentials === undefined || (isObject(credentials) && Object.keys(credentials).length === 0)
      return empty ? {} : { credentials: ['A simulated connector takes no credentials: leave credentials out or send {}.'] }
    }
    case 'stripe': return stripeCredentialErrors(credentials)
    case 'adyen': return adyenCredentialErrors(credentials)
  }
}

/** The create body's per-type checks, on the raw body (type-tolerant: what the schema refuses is left to it). */
export function connectorInputErrors (body: Record<string, unknown>): FieldErrors {
  return isType(body.type) ? credentialErrors(body.type, body.credentials) : {}
}

/** What an answer may show of the credentials: `…` and the last 4 characters of the secret key (Stripe) or API key (Adyen). */
export function credentialsHint (type: ConnectorType, credentials: ConnectorCredentialsInput | undefined): string | null {
  const key = type === 'stripe' ? credentials?.secretKey : type === 'adyen' ? credentials?.apiKey : undefined
  return key === undefined ? null : `…${key.slice(-4)}`
}

/** The account without what is stored only (sealed credentials, deletion time). */
export function publicAccount (stored: StoredConnectorAccount): ConnectorAccount {
  const { credentials: _credentials, deletedAt: _deletedAt, ...account } = stored
  return account
}

/** The PSP refused the credentials (checked before anything is stored). Never quotes them. */
export class ConnectorCredentialsRefusedError extends DomainError {
  readonly kind = 'validation'
  readonly code = 'CREDENTIALS_REFUSED'
  constructor (type: ConnectorType) {
    super(`The ${type} account refused these credentials (checked with one read-only call); nothing was stored. Check the key and its mode (test or live).`)
  }
}

/**
 * A PSP's webhook delivery that cannot be verified: no such connector account, not one that takes
 * these events, no signing secret configured, or a signature that is missing, wrong or too old.
 * Nothing was recorded or changed. One message for every cause (the log says which).
 */
export class ConnectorEventUnverifiedError extends DomainError {
  readonly kind = 'validation'
  readonly code = 'CONNECTOR_EVENT_UNVERIFIED'
  constructor () {
    super('The event could not be verified: unknown connector account, no webhookSecret in its credentials, or a Stripe-Signature that is ' +
      'missing, does not match the body, or is older than 5 minutes. Nothing was recorded.')
  }
}

/**
 * A verified PSP event we cannot apply yet: it names a payment whose charge, capture or refunds are not all recorded
 * here (the payment is still pending or requires capture after a lost answer, or a refund of it is in flight). Nothing was applied; the PSP sends the event
 * again later, by when the recovery worker has recorded what the PSP did.
 */
export class ConnectorEventNotMatchedError extends DomainError {
  readonly kind = 'unavailable'
  readonly code = 'CONNECTOR_EVENT_NOT_MATCHED'
  override readonly retryAfterSeconds = 60
  constructor () {
    super('The event names a payment whose charge or capture is not recorded yet; nothing was applied. Send it again later.')
  }
}
