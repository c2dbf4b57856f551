import type { Principal } from '../domain/api-keys'
import { sameHash, hashSecret } from '../domain/api-keys'
import {
  SESSION_TOKEN_PATTERN,
  csrfTokenFor,
  generateSessionToken,
  sessionEndsAt,
  sessionIdOf,
  type ActiveSession,
  type DashboardSession
} from '../domain/dashboard-sessions'
import { UnauthenticatedError } from '../domain/errors'
import type { DashboardSessionStore } from '../store/types'
import type { ApiKeyService } from './api-keys'
import type { UserService } from './users'
import { userCredential, userIdOfCredential } from '../domain/users'
import { actorOf } from '../domain/audit'
import { auditEntry, auditEntryAs } from '../store/audit-scope'

export interface DashboardSessionServiceDeps {
  sessions: DashboardSessionStore
  apiKeys: Pick<ApiKeyService, 'authenticate' | 'credentialOf' | 'principalOf'>
  /** Named users (issue 43): who a user's session stands for now. */
  users: Pick<UserService, 'principalOf'>
  /** Milliseconds since the epoch. */
  clock: () => number
  /** A session unused for this long ends (DASHBOARD_SESSION_IDLE_SECONDS). */
  idleSeconds: number
  /** A session ends this long after sign-in, however much it is used (DASHBOARD_SESSION_MAX_SECONDS). */
  maxSeconds: number
  /** lastUsedAt is written at most once per this many ms per session (default one minute). */
  renewAfterMs?: number
}

export interface DashboardSessionService {
  /** Exchanges an API key for a session; the cookie token is returned once, only its hash is kept. */
  signIn: (apiKey: string) => Promise<ActiveSession & { token: string }>
  /** A session for a user whose credentials were just proven (users service). */
  signInUser: (userId: string) => Promise<ActiveSession & { token: string }>
  /** The session `token` names, renewed; undefined when unknown, ended, or its credential no longer works. */
  resume: (token: string) => Promise<ActiveSession | undefined>
  /**
   * Who the cookie `token` with the header `csrfToken` stands for: 'no-csrf' when the header does not
   * match the session's (the cookie is then ignored), undefined when the session is unknown or ended.
   */
  authenticate: (token: string, csrfToken: string) => Promise<Principal | 'no-csrf' | undefined>
  /** Ends the session (sign-out); true when there was one. */
  signOut: (token: string) => Promise<boolean>
  /** Deletes ended sessions (the reaper); how many. */
  deleteEnded: () => Promise<number>
}

const DEFAULT_RENEW_AFTER_MS = 60_000

/**
 * Dashboard sessions: sign-in with an API key, the cookie token checked on each request with its
 * CSRF token, sliding idle expiry under an absolute lifetime, and sign-out. The principal is
 * resolved through the API key's current state on every request (cached like a bearer key, and
 * cleared by the same revocations and suspensions), so revoking the key, suspending the merchant or
 * setting another ADMIN_API_KEY takes effect on its sessions as on the key.
 */
export function dashboardSessionService (deps: DashboardSessionServiceDeps): DashboardSessionService {
  const idleMs = deps.idleSeconds * 1000
  const maxMs = deps.maxSeconds * 1000
  const renewAfterMs = deps.renewAfterMs ?? DEFAULT_RENEW_AFTER_MS

  async function find (token: string): Promise<DashboardSession | undefined> {
    return SESSION_TOKEN_PATTERN.test(token) ? await deps.sessions.get(sessionIdOf(token)) : undefined
  }

  /** The principal a session stands for now and the session renewed (when its recorded use is old enough); undefined once ended. */
  async function live (session: DashboardSession): Promise<{ session: DashboardSession, principal: Principal } | undefined> {
    const now = deps.clock()
    if (now >= sessionEndsAt(session, idleMs)) {
      await deps.sessions.delete(session.id)
      return undefined
    }
    const principal = await principalOf(session.credentialId)
    if (principal === undefined) return undefined
    if (now - Date.parse(session.lastUsedAt) >= renewAfterMs) {
      const at = new Date(now).toISOString()
      await deps.sessions.touch(session.id, at)
      return { session: { ...session, lastUsedAt: at }, principal }
    }
    return { session, principal }
  }

  async function principalOf (credential: string): Promise<Principal | undefined> {
    const userId = userIdOfCredential(credential)
    return userId === undefined ? await deps.apiKeys.principalOf(credential) : await deps.users.principalOf(userId)
  }

  async function open (principal: Principal, credentialId: string): Promise<ActiveSession & { token: string }> {
    const token = generateSessionToken()
    const now = deps.clock()
    const session: DashboardSession = {
      id: sessionIdOf(token),
      credentialId,
      csrfHash: hashSecret(csrfTokenFor(token)),
      createdAt: new Date(now).toISOString(),
      lastUsedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + maxMs).toISOString()
    }
    const audit = auditEntryAs(actorOf(principal), null, principal.kind === 'merchant' ? principal.merchantId : null)
    await deps.sessions.create(session, audit)
    return { ...active(token, session, principal), token }
  }

  function active (token: string, session: DashboardSession, principal: Principal): ActiveSession {
    return { principal, csrfToken: csrfTokenFor(token), expiresAt: new Date(sessionEndsAt(session, idleMs)).toISOString() }
  }

  return {
    async signIn (apiKey) {
      const principal = await deps.apiKeys.authenticate(apiKey)
      if (principal === undefined) throw new UnauthenticatedError('The API key is malformed, unknown, revoked or expired.', true)
      return await open(principal, deps.apiKeys.credentialOf(principal))
    },

    async signInUser (userId) {
      const principal = await deps.users.principalOf(userId)
      if (principal === undefined) throw new UnauthenticatedError('The user no longer exists.', true)
      return await open(principal, userCredential(userId))
    },

    async resume (token) {
      const session = await find(token)
      const found = session === undefined ? undefined : await live(session)
      return found === undefined ? undefined : active(token, found.session, found.principal)
    },

    async authenticate (token, csrfToken) {
      const session = await find(token)
      if (session === undefined) return undefined
      // Compared before anything else: a cookie without its header (a cross-site request) does nothing, renews nothing.
      if (!sameHash(hashSecret(csrfToken), session.csrfHash)) return 'no-csrf'
      return (await live(session))?.principal
    },

    async signOut (token) {
      return SESSION_TOKEN_PATTERN.test(token) && await deps.sessions.delete(sessionIdOf(token), auditEntry(null))
    },

    async deleteEnded () {
      const now = deps.clock()
      return await deps.sessions.deleteEnded(new Date(now).toISOString(), new Date(now - idleMs).toISOString())
    }
  }
}
