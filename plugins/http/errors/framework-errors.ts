import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { NotFoundError, type DomainError } from '../../../src/domain/errors'
import { envelopeErrorHandler } from './envelope'
import { problemErrorHandler } from './problem'
import { isApiVersion, LATEST_API_VERSION, type ApiVersion } from '../../../src/domain/api-versions'
import { REQUEST_ID_HEADER } from '../../request-id'

/** The error shape of an area: the `{ error, code }` envelope or RFC 9457 problem documents. */
export type ErrorShape = 'envelope' | 'problem'

/** What the framework-level handlers need to know of an area (one row of the area table in app/app.ts). */
export interface AreaErrors {
  prefix: string
  errorShape: ErrorShape
  /** The area's own answer to a request the router could not route, given the path inside the area (undefined: a plain 404). */
  unroutable?: (method: string, pathInArea: string) => DomainError | undefined
  /**
   * The area's own answer to a request no route of it serves, given the path inside the area (undefined: 204/405 +
   * Allow on a known path, else 404, in the area's shape; area-handlers.ts).
   */
  notFound?: (request: FastifyRequest, reply: FastifyReply, pathInArea: string) => FastifyReply
}

export const errorHandlers: Record<ErrorShape, (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply> = {
  envelope: envelopeErrorHandler,
  problem: problemErrorHandler
}

/** The area a raw path belongs to: the longest prefix that is the path or a parent of it. */
export function areaOf<A extends AreaErrors> (areas: readonly A[], path: string): A | undefined {
  let found: A | undefined
  for (const area of areas) {
    const inside = path === area.prefix || path.startsWith(`${area.prefix}/`)
    if (inside && (found === undefined || area.prefix.length > found.prefix.length)) found = area
  }
  return found
}

/** The path of a request target, without the query; never decoded. */
function rawPathOf (request: FastifyRequest): string {
  const [path = '/'] = (request.raw.url ?? '/').split('?')
  return path
}

/**
 * What a request the router could not even route means in its area: a path whose percent-encoding
 * is broken (`%zz`, an encoded lone surrogate) names no resource. The area may say more (products:
 * 405 or 400); otherwise problem areas answer 404 naming the request, others 404 route not found.
 */
function domainErrorFor (area: AreaErrors | undefined, request: FastifyRequest, path: string): DomainError {
  const own = area?.unroutable?.(request.method, path.slice(area.prefix.length))
  if (own !== undefined) return own
  if (area?.errorShape === 'problem') return new NotFoundError(`No resource matches ${request.method} ${path.length <= 80 ? path : `${path.slice(0, 80)}…`}.`)
  return new NotFoundError('route not found')
}

/**
 * Fastify's `frameworkErrors` for the given areas: errors raised before a request reaches any route
 * (a URL that cannot be percent-decoded, a path parameter over maxParamLength). Without it Fastify
 * answers with its own JSON (`{"error":"Bad Request","code":"FST_ERR_BAD_URL",…}`), which is in no
 * area's shape, is not documented, and echoes the raw URL. The onRequest hooks did not run, so the
 * request id and the security headers are set here.
 */
/** The version an answer before any route is rendered in: the `Api-Version` sent when it is one, else the current one (no merchant is known yet). */
function versionAsked (request: FastifyRequest): ApiVersion {
  const asked = request.headers['api-version']
  return typeof asked === 'string' && isApiVersion(asked) ? asked : LATEST_API_VERSION
}

export function frameworkErrorHandler (areas: readonly AreaErrors[]) {
  return function onFrameworkError (_error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    request.server.applySecurityHeaders?.(reply)
    reply.header(REQUEST_ID_HEADER, request.id).header('cache-control', 'no-store').header('api-version', versionAsked(request))
    const path = rawPathOf(request)
    const area = areaOf(areas, path)
    const error = domainErrorFor(area, request, path) as unknown as FastifyError
    errorHandlers[area?.errorShape ?? 'envelope'](error, request, reply)
  }
}
