import fp from 'fastify-plugin'
import cookie from '@fastify/cookie'
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import { ACCESS_LEVELS, decideAccess, type Access, type Principal } from '../src/domain/api-keys'
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../src/domain/errors'
import { merchantNotFoundMessage } from '../src/domain/merchants'
import { apiKeyService, type ApiKeyService } from '../src/services/api-keys'
import { dashboardSessionService, type DashboardSessionService } from '../src/services/dashboard-sessions'
import { userService, type UserService } from '../src/services/users'
import { ROLE_SETS, type MerchantRole, type RoleSet } from '../src/domain/users'
import { actorOf, auditEntryOf, boundedUserAgent, type AuditDraft } from '../src/domain/audit'
import { newId } from '../src/domain/ids'
import { auditing } from '../src/store/audit-scope'
import { problemResponse } from '../schemas/common'

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
    /** A merchant's named users (issue 43). */
    users: UserService
    /** Authenticates the request once (memoised): the rate limit's key and the access check share the answer. */
    authenticationOf: (request: FastifyRequest) => Promise<Authentication>
    /** Every route and the access it declares (for tests and audits). */
    routeAccess: () => Array<{ method: string, url: string, auth: Access | undefined, roles: RoleSet | undefined, audit: AuditSpec | false | undefined }>
    /** What the request is about to do, for its audit entry (undefined for routes that change nothing). */
    auditDraftOf: (request: FastifyRequest) => AuditDraft | undefined
  }
  interface FastifyRequest {
    /** Who is calling; null for anonymous requests (only public routes get that far). */
    principal: Principal | null
  }
  interface FastifyContextConfig {
    /** Who may call the route (see src/domain/api-keys.ts). Every route declares it; undeclared means admin. */
    auth?: Access
    /**
     * Which of a merchant's roles may call it (src/domain/users.ts ROLE_SETS): every route a merchant can reach
     * declares it, so a new route without a role fails start-up (and the generated role × route tests).
     */
    roles?: RoleSet
    /**
     * The audit log's action for a route that changes state (`payment.refund`), with the route parameter that names
     * the resource when it does; `false` for a write route no person's change goes through (a PSP's webhook).
     */
    audit?: AuditSpec | false
  }
}

export type AuditSpec = string | { action: string, resourceParam: string }

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const MERCHANT_FACING: ReadonlySet<Access> = new Set(['merchant', 'admin-or-own-merchant'])

const roleRefused = problemResponse('The caller\'s role may not do this (`x-roles` lists who may; `api_key` is a merchant API key). ' +
  'Nothing was changed; the refusal is in the audit log (`outcome: denied`).')

type RouteDeclaration = ReturnType<FastifyInstance['routeAccess']>[number]

/**
 * What is missing from the routes' declarations (undefined when nothing): every route states who may call it
 * (`auth`), every route a merchant can reach which of its roles may (`roles`, and only those routes), and every
 * write route its audit action (`audit`, or false).
 */
export function declarationProblem (routes: readonly RouteDeclaration[]): string | undefined {
  const list = (failing: readonly RouteDeclaration[]): string => failing.map((r) => `${r.method} ${r.url}`).join(', ')
  const undeclared = routes.filter((route) => route.auth === undefined || !ACCESS_LEVELS.includes(route.auth))
  if (undeclared.length > 0) return `routes without a valid config.auth (${ACCESS_LEVELS.join(' | ')}): ${list(undeclared)}`
  const roleless = routes.filter((route) => route.auth !== undefined && MERCHANT_FACING.has(route.auth) !== (route.roles !== undefined && route.roles in ROLE_SETS))
  if (roleless.length > 0) return `routes a merchant may call need config.roles (${Object.keys(ROLE_SETS).join(' | ')}), and only they: ${list(roleless)}`
  const unaudited = routes.filter((route) => route.method.split(',').some((method) => WRITE_METHODS.has(method)) && route.audit === undefined)
  if (unaudited.length > 0) return `routes that change state need config.audit (an action, or false): ${list(unaudited)}`
  return undefined
}

function roleRefusal (role: MerchantRole, roles: RoleSet): string {
  if (roles === 'self') return 'Only a user signed in to the dashboard has a password and an authenticator; an API key does not.'
  if (role === 'api_key') return 'An API key may not do this: a person signed in as the merchant\'s owner (or the operator) must.'
  const allowed = ROLE_SETS[roles].filter((allowedRole) => allowedRole !== 'api_key')
  return `The role '${role}' may not do this (it needs ${allowed.join(' or ')}).`
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
  const users = userService({ db: app.db, secretBox: app.secretBox, clock: app.clock, passwordHashCost: app.config.PASSWORD_HASH_COST })
  app.decorate('users', users)
  const sessions = dashboardSessionService({
    sessions: app.db.dashboardSessions,
    apiKeys: service,
    users,
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
  // The outcome once known, so that the access check after the rate limit's (which asked first) needs no promise.
  const settled = new WeakMap<FastifyRequest, Authentication>()
  app.decorate('authenticationOf', async (request: FastifyRequest) => {
    let outcome = outcomes.get(request)
    if (outcome === undefined) {
      outcome = authenticate(request).then((authentication) => {
        settled.set(request, authentication)
        return authentication
      })
      outcomes.set(request, outcome)
    }
    return await outcome
  })
  app.decorateRequest('principal', null)

  // Every route states who may call it; start-up fails on one that does not (checked once all
  // onRoute hooks, including those of child contexts, have run).
  const routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => {
    routes.push(route)
    // A route a merchant may call can refuse a role: its document says which roles may call it and what a refusal looks like.
    const roles = route.config?.roles
    if (roles === undefined || route.schema === undefined) return
    Object.assign(route.schema, { 'x-roles': [...ROLE_SETS[roles]] })
    const response = route.schema.response as Record<string, unknown> | undefined
    if (response !== undefined && response[403] === undefined) response[403] = roleRefused
  })
  const routeAccess = () => routes.map((route) => ({
    method: ([] as string[]).concat(route.method).join(','),
    url: route.url,
    auth: route.config?.auth,
    roles: route.config?.roles,
    audit: route.config?.audit
  }))
  app.decorate('routeAccess', routeAccess)
  app.addHook('onReady', async () => {
    const problem = declarationProblem(routeAccess())
    if (problem !== undefined) throw new Error(problem)
  })

  function auditDraftOf (request: FastifyRequest): AuditDraft | undefined {
    const spec = request.is404 ? undefined : request.routeOptions.config.audit
    if (spec === undefined || spec === false) return undefined
    const params = (request.params ?? {}) as Record<string, unknown>
    const principal = request.principal
    const named = typeof params.id === 'string' && request.routeOptions.config.auth === 'admin-or-own-merchant' ? params.id.toLowerCase() : null
    const resource = typeof spec === 'string' ? undefined : params[spec.resourceParam]
    return {
      actor: principal === null ? { type: 'system', id: 'anonymous', label: 'anonymous' } : actorOf(principal),
      action: typeof spec === 'string' ? spec : spec.action,
      merchantId: principal?.kind === 'merchant' ? principal.merchantId : named,
      ...(typeof resource === 'string' ? { resourceId: resource.toLowerCase() } : {}),
      requestId: request.id,
      ip: request.ip,
      userAgent: boundedUserAgent(request.headers['user-agent'])
    }
  }
  app.decorate('auditDraftOf', auditDraftOf)
  // The handler, and everything it starts, runs owing the entry: the store write of its change writes it (src/store/audit-scope.ts).
  app.addHook('preHandler', (request, _reply, done) => {
    const draft = auditDraftOf(request)
    if (draft === undefined) done()
    else auditing(draft, app.clock, done)
  })

  /** A request refused by its role changed nothing, but who tried is worth keeping: its own entry, outcome `denied`. */
  async function recordDenied (request: FastifyRequest): Promise<void> {
    const draft = auditDraftOf(request)
    if (draft === undefined) return
    try {
      await app.db.auditLog.append(auditEntryOf(draft, newId(), new Date(app.clock()).toISOString(), null, 'denied'))
    } catch (err) {
      request.log.warn({ err }, 'could not record a denied request in the audit log')
    }
  }

  /** Sets the principal and judges the route's access: throws the refusal, or returns the role a route's roles refuse. */
  function judge (request: FastifyRequest, authentication: Authentication): { role: MerchantRole, roles: RoleSet } | undefined {
    // Unknown routes answer 404 whoever asks; a declared route without `auth` is the admin's (deny by default).
    const access: Access = request.is404 ? 'public' : request.routeOptions.config.auth ?? 'admin'
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
      case 'allow': {
        const roles = request.routeOptions.config.roles
        if (request.principal?.kind !== 'merchant' || roles === undefined) return undefined
        const role: MerchantRole = request.principal.user?.role ?? 'api_key'
        return (ROLE_SETS[roles] as readonly string[]).includes(role) ? undefined : { role, roles }
      }
      case 'unauthenticated':
        throw new UnauthenticatedError('This operation needs an API key: send `Authorization: Bearer <key>`.', false)
      case 'forbidden': throw new ForbiddenError(forbidden[access === 'merchant' ? 'merchant' : 'admin'])
      case 'not_found': throw new NotFoundError(merchantNotFoundMessage(String(target)))
    }
  }
  function decide (request: FastifyRequest, authentication: Authentication, go: (err?: Error) => void): void {
    let refused
    try {
      refused = judge(request, authentication)
    } catch (err) {
      go(err as Error)
      return
    }
    if (refused === undefined) go()
    else recordDenied(request).then(() => { go(new ForbiddenError(roleRefusal(refused.role, refused.roles))) }, go)
  }
  // A callback hook: the usual request (its authentication settled by the rate limit's question) is judged without a promise.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const go = (err?: Error): void => { if (err === undefined) done(null, payload); else done(err) }
    const known = settled.get(request)
    if (known !== undefined) decide(request, known, go)
    else app.authenticationOf(request).then((authentication) => { decide(request, authentication, go) }, go)
  })
}, { name: 'auth', dependencies: ['config', 'database', 'clock', 'credential-cache', 'secrets'], fastify: '5.x' })
