import fp from 'fastify-plugin'
import cookie from '@fastify/cookie'
import type { FastifyRequest, RouteOptions } from 'fastify'
import { ACCESS_LEVELS, decideAccess, type Access, type Principal } from '../src/domain/api-keys'
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../src/domain/errors'
import { merchantNotFoundMessage } from '../src/domain/merchants'
import { apiKeyService, type ApiKeyService } from '../src/services/api-keys'
import { dashboardSessionService, type DashboardSessionService } from '../src/services/dashboard-sessions'

/** The dashboard's session cookie, and the header that must accompany it (the session's CSRF token). */
export const SESSION_COOKIE = 'dashboard_session'
export const CSRF_HEADER = 'x-csrf-token'

/** What the request's Authorization header (or dashboard session cookie with its CSRF header) proved. */
export type Authentication =
  | { kind: 'anonymous' }
  /** A credential was sent but is malformed, unknown, revoked or expired (`via`: which kind). */
  | { kind: 'invalid', via: 'bearer' | 'session' }
  | { kind: 'authenticated', principal: Principal }

declare module 'fastify' {
  interface FastifyInstance {
    apiKeys: ApiKeyService
    dashboardSessions: DashboardSessionService
    /** Authenticates the request once (memoised): the rate limit's key and the access check share the answer. */
    authenticationOf: (request: FastifyRequest) => Promise<Authentication>
    /** Every route and the access it declares (for tests and audits). */
    routeAccess: () => Array<{ method: string, url: string, auth: Access | undefined }>
  }
  interface FastifyRequest {
    /** Who is calling; null for anonymous requests (only public routes get that far). */
    principal: Principal | null
  }
  interface FastifyContextConfig {
    /** Who may call the route (see src/domain/api-keys.ts). Every route declares it; undeclared means admin. */
    auth?: Access
  }
}

/** RFC 6750 §2.1: `Bearer` (any case), one space, a b64token. Anything else is malformed. */
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i

export function bearerTokenOf (header: string | undefined): { kind: 'none' } | { kind: 'malformed' } | { kind: 'token', token: string } {
  if (header === undefined) return { kind: 'none' }
  const token = BEARER.exec(header)?.[1]
  return token === undefined ? { kind: 'malformed' } : { kind: 'token', token }
}

const forbidden: Record<'admin' | 'merchant', string> = {
  admin: 'This operation needs the admin key; a merchant API key may not call it.',
  merchant: 'This operation needs a merchant API key; the admin key does not act on a merchant\'s behalf.'
}

/**
 * Authentication and function-level authorization. Credentials travel as
 * `Authorization: Bearer <key>`, or as the dashboard's session cookie together with its
 * `X-CSRF-Token` header (without the matching header the cookie is ignored; a bearer header wins). The key is checked when the rate limit asks whose
 * request it is (onRequest), and the route's declared access (`config.auth`) is
 * enforced in preParsing: both before the body is read, so an unauthenticated client
 * cannot make the service parse a body. Errors go to the area's error handler
 * (401 with `WWW-Authenticate`, 403, or 404 for another merchant's id).
 */
export default fp(async (app) => {
  const service = apiKeyService({
    apiKeys: app.db.apiKeys,
    merchants: app.db.merchants,
    clock: app.clock,
    ...(app.config.ADMIN_API_KEY === undefined ? {} : { adminApiKey: app.config.ADMIN_API_KEY }),
    cache: app.credentialCache,
    onCredentialsChanged: app.forgetCredentials,
    onBackgroundError: (err) => { app.log.warn({ err }, 'could not record API key use') }
  })
  app.decorate('apiKeys', service)
  const sessions = dashboardSessionService({
    sessions: app.db.dashboardSessions,
    apiKeys: service,
    clock: app.clock,
    idleSeconds: app.config.DASHBOARD_SESSION_IDLE_SECONDS,
    maxSeconds: app.config.DASHBOARD_SESSION_MAX_SECONDS
  })
  app.decorate('dashboardSessions', sessions)
  await app.register(cookie)
  app.addHook('onClose', async () => { await service.flushUsage() })

  const outcomes = new WeakMap<FastifyRequest, Promise<Authentication>>()
  async function authenticate (request: FastifyRequest): Promise<Authentication> {
    const credential = bearerTokenOf(request.headers.authorization)
    if (credential.kind === 'none') return await sessionOf(request)
    if (credential.kind === 'malformed') return { kind: 'invalid', via: 'bearer' }
    const principal = await service.authenticate(credential.token)
    return principal === undefined ? { kind: 'invalid', via: 'bearer' } : { kind: 'authenticated', principal }
  }
  /** The session cookie counts only with its CSRF header: a request another site makes the browser send proves nothing. */
  async function sessionOf (request: FastifyRequest): Promise<Authentication> {
    const token = request.cookies[SESSION_COOKIE]
    const csrf = request.headers[CSRF_HEADER]
    if (token === undefined || typeof csrf !== 'string' || csrf === '') return { kind: 'anonymous' }
    const principal = await sessions.authenticate(token, csrf)
    if (principal === 'no-csrf') return { kind: 'anonymous' }
    return principal === undefined ? { kind: 'invalid', via: 'session' } : { kind: 'authenticated', principal }
  }
  app.decorate('authenticationOf', async (request: FastifyRequest) => {
    let outcome = outcomes.get(request)
    if (outcome === undefined) {
      outcome = authenticate(request)
      outcomes.set(request, outcome)
    }
    return await outcome
  })
  app.decorateRequest('principal', null)

  // Every route states who may call it; start-up fails on one that does not (checked once all
  // onRoute hooks, including those of child contexts, have run).
  const routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => { routes.push(route) })
  const routeAccess = () => routes.map((route) => ({
    method: ([] as string[]).concat(route.method).join(','),
    url: route.url,
    auth: route.config?.auth
  }))
  app.decorate('routeAccess', routeAccess)
  app.addHook('onReady', async () => {
    const undeclared = routeAccess().filter((route) => route.auth === undefined || !ACCESS_LEVELS.includes(route.auth))
    if (undeclared.length > 0) {
      throw new Error(`routes without a valid config.auth (${ACCESS_LEVELS.join(' | ')}): ${undeclared.map((r) => `${r.method} ${r.url}`).join(', ')}`)
    }
  })

  app.addHook('preParsing', async (request) => {
    // Unknown routes answer 404 whoever asks; a declared route without `auth` is the admin's (deny by default).
    const access: Access = request.is404 ? 'public' : request.routeOptions.config.auth ?? 'admin'
    const authentication = await app.authenticationOf(request)
    if (authentication.kind === 'invalid' && authentication.via === 'bearer') {
      throw new UnauthenticatedError('The API key is malformed, unknown, revoked or expired. Send `Authorization: Bearer <key>` with an active key.', true)
    }
    // An ended session does not stop a public route (signing in again, asking whether a session is live).
    if (authentication.kind === 'invalid' && access !== 'public') {
      throw new UnauthenticatedError('The dashboard session has ended (signed out, expired, or its API key revoked): sign in again.', true)
    }
    if (authentication.kind === 'authenticated') request.principal = authentication.principal
    const target = (request.params as { id?: unknown } | undefined)?.id
    const decision = decideAccess(access, request.principal ?? undefined, typeof target === 'string' ? target : undefined)
    switch (decision) {
      case 'allow': return
      case 'unauthenticated':
        throw new UnauthenticatedError('This operation needs an API key: send `Authorization: Bearer <key>`.', false)
      case 'forbidden': throw new ForbiddenError(forbidden[access === 'merchant' ? 'merchant' : 'admin'])
      case 'not_found': throw new NotFoundError(merchantNotFoundMessage(String(target)))
    }
  })
}, { name: 'auth', dependencies: ['config', 'database', 'clock', 'credential-cache'], fastify: '5.x' })
