import type { ApiVersion } from './api-versions'
import { hash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { MerchantStatus } from './merchants'
import type { UserRole } from './users'

/**
 * API keys and who may do what. Pure functions and types only: no storage, no HTTP.
 *
 * A secret is `sk_` followed by 32 base64url characters (24 random bytes = 192 bits).
 * Only its SHA-256 is stored. A keyed hash (HMAC with a server secret) would add
 * nothing against an attacker who reads the table: inverting SHA-256 of a 192-bit
 * random value is as infeasible as guessing the value, so no dictionary or brute
 * force applies — and a server-side pepper would be one more secret to distribute to
 * every instance and to rotate (rotating it invalidates every key). Passwords need
 * slow, keyed hashes because they are guessable; these keys are not.
 */
export const SECRET_PREFIX = 'sk_'
const SECRET_RANDOM_BYTES = 24
/** `sk_` + 32 base64url characters. */
export const SECRET_PATTERN = /^sk_[A-Za-z0-9_-]{32}$/
/** How many characters of the secret are kept (and shown) to recognise a key: `sk_` + 4. */
const PREFIX_LENGTH = SECRET_PREFIX.length + 4

/** The shortest ADMIN_API_KEY accepted (characters). */
export const ADMIN_KEY_MIN_LENGTH = 32

/** Keys a merchant may hold that are not revoked (expired ones count until revoked). */
export const MAX_ACTIVE_API_KEYS = 20

export const API_KEY_ROLES = ['admin', 'merchant'] as const
export type ApiKeyRole = typeof API_KEY_ROLES[number]

/** An API key as stored: never the secret, only its hash. */
export interface ApiKey {
  id: string
  /** The owning merchant; null for the admin key generated on first start (see bootstrap). */
  merchantId: string | null
  role: ApiKeyRole
  name: string
  /** The first characters of the secret (`sk_` + 4), to recognise a key in lists. */
  prefix: string
  last4: string
  /** Hex SHA-256 of the secret. */
  secretHash: string
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
}

export function generateSecret (): string {
  return SECRET_PREFIX + randomBytes(SECRET_RANDOM_BYTES).toString('base64url')
}

export function hashSecret (secret: string): string {
  return hash('sha256', secret, 'hex')
}

/** Compares two hex digests without a timing signal. */
export function sameHash (a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex')
  const right = Buffer.from(b, 'hex')
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right)
}

/** The stored parts of a new key for `secret`. */
export function describeSecret (secret: string): Pick<ApiKey, 'prefix' | 'last4' | 'secretHash'> {
  return { prefix: secret.slice(0, PREFIX_LENGTH), last4: secret.slice(-4), secretHash: hashSecret(secret) }
}

/** A key is usable until it is revoked or its expiry passes. */
export function isKeyUsable (key: Pick<ApiKey, 'revokedAt' | 'expiresAt'>, now: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || Date.parse(key.expiresAt) > now)
}

/** Who is calling. `credentialId` identifies the credential (for rate limits and logs), never the secret. */
export type Principal =
  | { kind: 'admin', credentialId: string }
  /** `apiVersion`: the merchant's pinned version, so resolving a request's version reads no database. */
  | {
    kind: 'merchant'
    credentialId: string
    merchantId: string
    merchantStatus: MerchantStatus
    apiVersion: ApiVersion
    /** A named person signed in to the dashboard (issue 43); absent for an API key. */
    user?: PrincipalUser
    /** An API key's name and prefix, as the audit log names it. */
    keyLabel?: string
  }

/** The user a dashboard session stands for: who, and the role that decides what they may do. */
export interface PrincipalUser {
  id: string
  email: string
  role: UserRole
  twoFactorEnabled: boolean
}

/**
 * What a route requires:
 * - `public`: anyone, with or without a credential;
 * - `admin`: the operator key;
 * - `merchant`: a merchant key (the admin key is refused: it does not act on a merchant's behalf);
 * - `admin-or-own-merchant`: the operator key, or the key of the merchant the route names
 *   (another merchant's key gets a 404, as if the merchant did not exist).
 */
export const ACCESS_LEVELS = ['public', 'admin', 'merchant', 'admin-or-own-merchant'] as const
export type Access = typeof ACCESS_LEVELS[number]

export type AccessDecision = 'allow' | 'unauthenticated' | 'forbidden' | 'not_found'

/**
 * Function-level authorization (OWASP API5): may `principal` call a route requiring `access`?
 * `targetMerchantId` is the merchant the route names, for `admin-or-own-merchant`.
 */
export function decideAccess (access: Access, principal: Principal | undefined, targetMerchantId?: string): AccessDecision {
  if (access === 'public') return 'allow'
  if (principal === undefined) return 'unauthenticated'
  switch (access) {
    case 'admin': return principal.kind === 'admin' ? 'allow' : 'forbidden'
    case 'merchant': return principal.kind === 'merchant' ? 'allow' : 'forbidden'
    case 'admin-or-own-merchant':
      if (principal.kind === 'admin') return 'allow'
      return targetMerchantId !== undefined && sameId(principal.merchantId, targetMerchantId) ? 'allow' : 'not_found'
  }
}

/** GUIDs compare case-insensitively. */
function sameId (a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase()
}

/** Object-level authorization (OWASP API1): a merchant sees only what it owns; anything else is "not found". */
export function ownsResource (principal: Principal, ownerMerchantId: string | null): boolean {
  return principal.kind === 'merchant' && ownerMerchantId !== null && sameId(principal.merchantId, ownerMerchantId)
}

/** Only the operator suspends and reactivates merchants. */
export function mayChangeMerchantStatus (principal: Principal): boolean {
  return principal.kind === 'admin'
}

/** A suspended merchant's keys still read, but create no payments. */
export function mayCreatePayments (principal: Principal): boolean {
  return principal.kind === 'merchant' && principal.merchantStatus === 'active'
}

/**
 * Webhooks of a suspended merchant: its keys still read, and still do what only reduces what is sent (disable,
 * delete, rotate a secret, relabel), but start no new traffic — no new endpoint, URL or event types, no
 * re-enabling, retry, replay or a test event. Events of what still happens to it (refunds) keep being delivered.
 */
export function mayDirectWebhooks (principal: Principal): boolean {
  return principal.kind === 'admin' || principal.merchantStatus === 'active'
}

/** A stable name for the credential, for per-credential rate limits. */
export function rateLimitKeyOf (principal: Principal): string {
  return `${principal.kind}:${principal.credentialId}`
}
