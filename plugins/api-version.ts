import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import { isApiVersion, LATEST_API_VERSION, parseSunsets, retirementHeaders, UnknownApiVersionError, type ApiVersion } from '../src/domain/api-versions'
import { checkHook } from './http/checks'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The API version the response is rendered in: the `Api-Version` header, else the calling
     * merchant's pinned version, else the current one. Echoed in the response's `Api-Version`.
     */
    apiVersion: ApiVersion
  }
}

export const API_VERSION_HEADER = 'api-version'

function headerVersion (request: FastifyRequest): string | undefined {
  const value = request.headers[API_VERSION_HEADER]
  return Array.isArray(value) ? value.join(', ') : value
}

/**
 * Resolves each request's API version without a database read: the header is checked first
 * (an unknown version is a 400 listing the supported ones, before authentication), the merchant's
 * pinned version comes with the authenticated principal (cached with the API key lookup).
 * Responses in a version listed in API_VERSION_SUNSETS carry `Deprecation` and `Sunset`.
 */
export default fp(async (app) => {
  const sunsets = parseSunsets(app.config.API_VERSION_SUNSETS) ?? new Map<ApiVersion, Date>()
  app.decorateRequest('apiVersion', LATEST_API_VERSION)

  // Callback hooks, not async ones: every request runs them, and a promise per hook is measurable (bench/RESULTS.md).
  app.addHook('onRequest', checkHook((request) => {
    const asked = headerVersion(request)
    if (asked === undefined) return
    if (!isApiVersion(asked)) throw new UnknownApiVersionError('Api-Version', asked)
    request.apiVersion = asked
  }))
  // After auth's preParsing hook (registered before this plugin), which sets the principal.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    if (headerVersion(request) === undefined && request.principal?.kind === 'merchant') request.apiVersion = request.principal.apiVersion
    done(null, payload)
  })
  app.addHook('onSend', (request, reply, payload, done) => {
    // A replayed Idempotency-Key response carries the version it was stored in: its bytes were rendered in that one.
    const stored = reply.getHeader(API_VERSION_HEADER)
    const version = isApiVersion(stored) ? stored : request.apiVersion
    reply.header(API_VERSION_HEADER, version)
    const sunset = sunsets.get(version)
    if (sunset !== undefined) reply.headers(retirementHeaders(version, sunset))
    done(null, payload)
  })
}, { name: 'api-version', dependencies: ['config', 'auth'], fastify: '5.x' })
