import fp from 'fastify-plugin'
import type { FastifyReply } from 'fastify'
import helmet from '@fastify/helmet'
import helmetMiddleware from 'helmet'
import rateLimit from '@fastify/rate-limit'
import sensible from '@fastify/sensible'
import { RateLimitedError } from '../src/domain/errors'
import { redisRateLimitStore } from './http/redis-rate-limit-store'

import { rateLimitKeyOf } from '../src/domain/api-keys'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Sets the security headers of every response on `reply`, for answers sent before any hook
     * runs (frameworkErrors); routed responses get them from @fastify/helmet.
     */
    applySecurityHeaders: (reply: FastifyReply) => void
  }
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
}, { name: 'security', dependencies: ['config', 'redis', 'auth'], fastify: '5.x' })
