import fp from 'fastify-plugin'
import type { FastifyReply } from 'fastify'
import type { IncomingMessage, ServerResponse } from 'node:http'
import helmet from '@fastify/helmet'
import helmetMiddleware from 'helmet'
import rateLimit from '@fastify/rate-limit'
import sensible from '@fastify/sensible'
import cors from '@fastify/cors'
import { RATE_LIMIT_POLICY_NAME } from '../schemas/openapi-contract'
import { RateLimitedError } from '../src/domain/errors'
import { redisRateLimitStore } from './http/redis-rate-limit-store'

import { rateLimitKeyOf } from '../src/domain/api-keys'
import { corsOrigins } from '../src/config'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Sets the security headers of every response on `reply`, for answers sent before any hook
     * runs (frameworkErrors); routed responses get them from @fastify/helmet.
     */
    applySecurityHeaders: (reply: FastifyReply) => void
    /** The security headers of every response, for answers written to the socket directly (plugins/http/errors/client-error.ts). */
    securityHeaders: Readonly<Record<string, string>>
  }
}

/**
 * The IETF rate-limit fields (draft-ietf-httpapi-ratelimit-headers) from the numbers @fastify/rate-limit
 * put in X-RateLimit-*: `RateLimit-Policy: "default";q=600;w=60` and `RateLimit: "default";r=599;t=42`.
 * The X-RateLimit-* fields stay, for clients that read them.
 */
export function setRateLimitFields (reply: FastifyReply, windowSeconds: number): void {
  const limit = reply.getHeader('x-ratelimit-limit')
  const remaining = reply.getHeader('x-ratelimit-remaining')
  const reset = reply.getHeader('x-ratelimit-reset')
  if (limit === undefined || remaining === undefined || reset === undefined) return
  reply.header('ratelimit-policy', `"${RATE_LIMIT_POLICY_NAME}";q=${String(limit)};w=${windowSeconds}`)
  reply.header('ratelimit', `"${RATE_LIMIT_POLICY_NAME}";r=${String(remaining)};t=${String(reset)}`)
}

/**
 * Security headers, one global per-client rate limit and @fastify/sensible.
 * The CSP only allows same-origin scripts: Swagger UI ships no inline script, so it
 * works under it; its inline style attributes need 'unsafe-inline' for styles only.
 */
export default fp(async (app) => {
  await app.register(sensible)
  const helmetOptions = {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        connectSrc: ["'self'"],
        frameAncestors: ["'none'"],
        upgradeInsecureRequests: null
      }
    }
  }
  // @fastify/helmet builds helmet's middleware once per configuration (patches/@fastify+helmet+*.patch).
  await app.register(helmet, helmetOptions)
  // The same helmet middleware, same options, for answers sent before any hook runs (see frameworkErrors).
  const forUnroutedAnswers = helmetMiddleware(helmetOptions)
  app.decorate('applySecurityHeaders', (reply: FastifyReply) => {
    forUnroutedAnswers(reply.request.raw, reply.raw, (err?: unknown) => { if (err !== undefined && err !== null) throw err })
  })
  // The same headers as name/value pairs, for answers written to the socket by hand (the HTTP parser's 400/408/431).
  const securityHeaders: Record<string, string> = {}
  const collector = { setHeader: (name: string, value: unknown) => { securityHeaders[name] = String(value) }, removeHeader: () => {} }
  forUnroutedAnswers({ headers: {} } as IncomingMessage, collector as unknown as ServerResponse, () => {})
  app.decorate('securityHeaders', securityHeaders)
  // With REDIS_URL the counters live in Redis and every instance shares them; when
  // Redis fails a request is served anyway (skipOnError) and the failure is logged.
  const shared = app.redis === null
    ? {}
    : { store: redisRateLimitStore(app.redis, `${app.config.REDIS_KEY_PREFIX}rate-limit:`, app.reportRedisFailure), skipOnError: true }
  await app.register(rateLimit, {
    global: true,
    max: app.config.RATE_LIMIT_MAX,
    timeWindow: app.config.RATE_LIMIT_WINDOW_MS,
    ...shared,
    // Per credential when the request carries a valid key (so a merchant's traffic is limited wherever
    // it comes from, and tenants behind one address do not share a budget); per address otherwise,
    // invalid keys included (so guessing keys is throttled like any other anonymous traffic).
    keyGenerator: async (request) => {
      const authentication = await app.authenticationOf(request)
      return authentication.kind === 'authenticated' ? rateLimitKeyOf(authentication.principal) : `ip:${request.ip}`
    },
    errorResponseBuilder: (_request, context) => new RateLimitedError(Math.max(1, Math.ceil(context.ttl / 1000)))
  })
  const windowSeconds = Math.ceil(app.config.RATE_LIMIT_WINDOW_MS / 1000)
  app.addHook('onSend', (_request, reply, payload, done) => {
    setRateLimitFields(reply, windowSeconds)
    // Nothing this service answers may be stored by a cache, except what a route marks cacheable (a product read).
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
    done(null, payload)
  })

  // CORS: off unless the operator lists origins. Bearer keys travel in a header, never in cookies: no credentials.
  const origins = new Set(corsOrigins(app.config.CORS_ORIGINS))
  // @fastify/cors routes `OPTIONS *` to itself: preflights need no key, and any other OPTIONS goes on to the
  // not-found handlers (204 + Allow on a known path, 404 elsewhere), whatever its body (a body error is no answer to OPTIONS).
  app.addHook('onRoute', (route) => {
    if (route.url !== '*' || route.method !== 'OPTIONS') return
    route.config = { ...route.config, auth: 'public' }
    route.errorHandler = (_error, _request, reply) => { reply.callNotFound() }
  })
  await app.register(cors, {
    origin: (origin, callback) => { callback(null, origin !== undefined && origins.has(origin) ? origin : false) },
    methods: ['GET', 'HEAD', 'PUT', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match', 'X-Request-Id', 'Api-Version'],
    exposedHeaders: ['Location', 'ETag', 'Retry-After', 'X-Request-Id', 'Idempotent-Replayed', 'RateLimit', 'RateLimit-Policy', 'Api-Version', 'Deprecation', 'Sunset'],
    credentials: false,
    strictPreflight: false,
    maxAge: 600
  })
}, { name: 'security', dependencies: ['config', 'redis', 'auth'], fastify: '5.x' })
