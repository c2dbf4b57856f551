import { createHmac, randomBytes } from 'node:crypto'
import { hashSecret, type Principal } from './api-keys'

/**
 * Dashboard sessions: a browser's API key exchanged for an opaque cookie token. Pure functions and
 * types only. The store keeps the SHA-256 of the token (its id) and of the CSRF token, never either
 * token and never the API key: the credential is kept as a reference (an API key id, or the admin key's
 * fingerprint), resolved to its current state on every request.
 */
export interface DashboardSession {
  /** Hex SHA-256 of the cookie token. */
  id: string
  /** What the session was made from: an API key id or `ADMIN_API_KEY#<fingerprint>` (see api-keys service). */
  credentialId: string
  /** Hex SHA-256 of the CSRF token. */
  csrfHash: string
  createdAt: string
  /** Renewed by use, at most once per renewal interval. */
  lastUsedAt: string
  /** The absolute end of the session (createdAt + the maximum lifetime). */
  expiresAt: string
}

const TOKEN_BYTES = 32
const CSRF_CONTEXT = 'dashboard-csrf-v1'

export function generateSessionToken (): string {
  return randomBytes(TOKEN_BYTES).toString('base64url')
}

/** A cookie token is 43 base64url characters; anything else is not looked up. */
export const SESSION_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

/**
 * The session's CSRF token, derived from the cookie token (HMAC keyed by it), so that a reload can be
 * given it again without the server storing it: whoever can compute it already holds the cookie.
 */
export function csrfTokenFor (sessionToken: string): string {
  return createHmac('sha256', sessionToken).update(CSRF_CONTEXT).digest('base64url')
}

export const sessionIdOf = hashSecret

export interface SessionLimits {
  idleMs: number
  maxMs: number
}

/** When the session ends if not used again: the idle timeout from its last use, never past its absolute end. */
export function sessionEndsAt (session: Pick<DashboardSession, 'lastUsedAt' | 'expiresAt'>, idleMs: number): number {
  return Math.min(Date.parse(session.lastUsedAt) + idleMs, Date.parse(session.expiresAt))
}

/** A live session as its holder may see it: never the cookie token's hash or the credential reference. */
export interface ActiveSession {
  principal: Principal
  csrfToken: string
  /** When it ends if not used again (idle timeout, capped by the absolute lifetime). */
  expiresAt: string
}
