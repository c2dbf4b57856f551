import { hash, randomBytes } from 'node:crypto'
import { ConflictError, DomainError, UnauthenticatedError } from './errors'

/**
 * A merchant's named users (issue 43) and what each role may do. Pure types and functions.
 *
 * Roles, from most to least: `owner` (everything, users included), `developer` (API keys, webhooks, connector
 * accounts; reads), `support` (reads, refunds, cancels, captures), `viewer` (reads). A merchant API key is not a
 * user: it acts as `api_key`, which may do everything an owner may except manage users (people are managed by
 * people: an owner, or the operator).
 */
export const USER_ROLES = ['owner', 'developer', 'support', 'viewer'] as const
export type UserRole = typeof USER_ROLES[number]

/** Who may call a merchant-facing route: the user roles, and `api_key` for a merchant API key. */
export const MERCHANT_ROLES = ['api_key', ...USER_ROLES] as const
export type MerchantRole = typeof MERCHANT_ROLES[number]

/** The role sets routes declare (`config.roles`): one name per kind of work, so the table in the docs stays short. */
export const ROLE_SETS = {
  /** Reading anything of the merchant's. */
  read: ['api_key', 'owner', 'developer', 'support', 'viewer'],
  /** Moving money that is already the merchant's: refunds, cancels, captures, dispute answers. */
  operate: ['api_key', 'owner', 'support'],
  /** Integration settings: listing and revoking API keys, webhook endpoints, connector accounts. */
  develop: ['api_key', 'owner', 'developer'],
  /**
   * Taking payments, changing the merchant's own account, and creating API keys: a key acts with an owner's rights
   * (but for people), so whoever mints one must hold them, or a developer would be an owner through a key.
   */
  own: ['api_key', 'owner'],
  /** The merchant's users. */
  team: ['owner'],
  /** A signed-in user's own account (password, two-factor): any user, no API key. */
  self: ['owner', 'developer', 'support', 'viewer']
} as const satisfies Record<string, readonly MerchantRole[]>
export type RoleSet = keyof typeof ROLE_SETS

export type UserStatus = 'invited' | 'active'

export interface User {
  id: string
  merchantId: string
  /** Lower case; unique across merchants (it is what a person signs in with). */
  email: string
  role: UserRole
  /** `scrypt$…` (src/secrets/passwords.ts); null until the invite is accepted. */
  passwordHash: string | null
  /** The TOTP secret, sealed (ENCRYPTION_KEYS); set when enrollment starts. */
  totpSecret: string | null
  /** When the user proved the authenticator works; from then on sign-in needs a code. */
  totpEnabledAt: string | null
  /** Hex SHA-256 of the outstanding invite token; null once used. */
  inviteHash: string | null
  inviteExpiresAt: string | null
  createdAt: string
  updatedAt: string
  lastSignInAt: string | null
}

export function userStatus (user: Pick<User, 'passwordHash'>): UserStatus {
  return user.passwordHash === null ? 'invited' : 'active'
}

export const INVITE_TTL_MS = 72 * 3600_000
const INVITE_BYTES = 32
/** An invite token is 43 base64url characters; anything else is not looked up. */
export const INVITE_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

export function generateInviteToken (): { token: string, hash: string } {
  const token = randomBytes(INVITE_BYTES).toString('base64url')
  return { token, hash: hash('sha256', token, 'hex') }
}

export const PASSWORD_MIN_LENGTH = 12
export const PASSWORD_MAX_LENGTH = 256

/** Five failed sign-ins lock the account (and, separately, the address they came from) for 15 minutes. */
export const SIGN_IN_MAX_FAILURES = 5
export const SIGN_IN_LOCK_MS = 15 * 60_000
/** Failures further apart than this are not added up (five typos over a month lock nothing). */
export const SIGN_IN_WINDOW_MS = 15 * 60_000

/** The session credential of a user (dashboard_sessions.credential_id), beside API key ids. */
const USER_CREDENTIAL_PREFIX = 'user:'
export function userCredential (userId: string): string {
  return USER_CREDENTIAL_PREFIX + userId
}
export function userIdOfCredential (credential: string): string | undefined {
  return credential.startsWith(USER_CREDENTIAL_PREFIX) ? credential.slice(USER_CREDENTIAL_PREFIX.length) : undefined
}

export function normalizeEmail (email: string): string {
  return email.trim().toLowerCase()
}

/** A second user with the same email, at any merchant (emails sign people in, so they are unique). */
export class UserEmailTakenError extends ConflictError {
  override readonly code = 'USER_EMAIL_TAKEN'
  constructor () {
    super('A user with this email address already exists (emails are compared case-insensitively).')
  }
}

/** The email and password were right, but the user enrolled TOTP and the code is missing or wrong. */
export class TotpRequiredError extends UnauthenticatedError {
  override readonly code = 'TOTP_REQUIRED' as 'UNAUTHENTICATED'
  constructor () {
    super('This account has two-factor authentication: send the current 6-digit code of its authenticator app as `totp`.', true)
  }
}

/** Too many failed sign-ins for this account or from this address: nothing is checked until the lock ends. */
export class SignInLockedError extends DomainError {
  readonly kind = 'rate_limited'
  readonly code = 'SIGN_IN_LOCKED'
  constructor (override readonly retryAfterSeconds: number) {
    super(`Too many failed sign-ins: try again in ${Math.ceil(retryAfterSeconds / 60)} minutes.`)
  }
}

/** The merchant would be left without an owner. */
export class LastOwnerError extends ConflictError {
  override readonly code = 'LAST_OWNER'
  constructor () {
    super('This is the merchant\'s only owner: make another user owner first.')
  }
}
