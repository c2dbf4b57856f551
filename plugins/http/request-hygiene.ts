import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import { UnsupportedMediaTypeError, ValidationError } from '../../src/domain/errors'
import { ACCEPT_PATCH } from './allowed-methods'
import { checkHook } from './checks'

/** A request body in a content coding (gzip, br, …): refused, with `Accept-Encoding: identity` (RFC 9110 §15.5.16). */
export class ContentEncodingError extends UnsupportedMediaTypeError {
  /** The content codings a request body may have (plugins/http/errors/classify-error.ts sends them as Accept-Encoding). */
  readonly acceptedCodings = ['identity'] as const
  constructor (coding: string, acceptPatch?: string) {
    super(`Request bodies must not be encoded (got Content-Encoding '${coding.slice(0, 32)}'); send the body as is (identity).`, acceptPatch)
  }
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])

function hasBody (request: FastifyRequest): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0
}

/** How often a header field occurs in the request as sent (Node joins or drops repeats in `headers`). */
export function headerCount (rawHeaders: string[], name: string): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === name) count++
  return count
}

/** The `charset` parameter of a Content-Type, lower case and unquoted; undefined without one. */
export function charsetOf (contentType: string): string | undefined {
  for (const parameter of contentType.split(';').slice(1)) {
    const [name = '', ...value] = parameter.split('=')
    if (name.trim().toLowerCase() === 'charset') return value.join('=').trim().replace(/^"(.*)"$/, '$1').toLowerCase()
  }
  return undefined
}

/**
 * Root onRequest hook: what no route may accept, refused before anything else is read, in the area's
 * error shape. A request without Host, or with two (RFC 9112 §3.2: 400; which one names the target?);
 * a body in a content coding (415 with Accept-Encoding: identity; bodies are small, BODY_LIMIT, and a
 * decompressed size limit would be one more thing to get wrong); a body declared in a charset other
 * than UTF-8 (415: JSON is UTF-8, RFC 8259 §8.1). Paths no route serves are left to their 404.
 */
export function rejectUnacceptableRequest (request: FastifyRequest): void {
  if (request.is404) return
  const hosts = headerCount(request.raw.rawHeaders, 'host')
  if (hosts > 1) throw new ValidationError({ Host: ['The request has more than one Host header; send exactly one.'] })
  if (hosts === 0 && request.raw.httpVersion === '1.1') throw new ValidationError({ Host: ['The request has no Host header; HTTP/1.1 requires one.'] })
  // Only where a body is read: GET, HEAD, DELETE and OPTIONS ignore theirs.
  if (!BODY_METHODS.has(request.method) || !hasBody(request)) return
  // A 415 on PATCH says which media types PATCH takes (RFC 5789 §2.2).
  const acceptPatch = request.method === 'PATCH' ? ACCEPT_PATCH : undefined
  const coding = request.headers['content-encoding']
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') throw new ContentEncodingError(coding, acceptPatch)
  const type = request.headers['content-type']
  const charset = type === undefined ? undefined : charsetOf(type)
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new UnsupportedMediaTypeError(`Request bodies are JSON in UTF-8; charset '${charset.slice(0, 32)}' is not supported.`, acceptPatch)
  }
}

/**
 * Two Host headers, an encoded body, a charset other than UTF-8: refused before the body is read,
 * after the request id and the security headers are set (their onRequest hooks run first), so the
 * refusal carries them.
 */
export default fp(async (app) => {
  app.addHook('onRequest', checkHook(rejectUnacceptableRequest))
}, { name: 'request-hygiene', dependencies: ['errors', 'request-id', 'security'], fastify: '5.x' })
