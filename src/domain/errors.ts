/**
 * Domain errors. Routes throw these; each area's error handler renders them in
 * its own shape (envelope or problem document) through one central mapping.
 */
export type FieldErrors = Record<string, string[]>

export abstract class DomainError extends Error {
  abstract readonly statusCode: number
  abstract readonly code: string
  readonly headers: Record<string, string> = {}
  /** Extra members for problem documents (RFC 9457 extensions). */
  readonly extensions: Record<string, unknown> = {}
}

export class NotFoundError extends DomainError {
  readonly statusCode = 404
  readonly code = 'NOT_FOUND'
}

export class ConflictError extends DomainError {
  readonly statusCode = 409
  readonly code: string = 'CONFLICT'
}

export class ValidationError extends DomainError {
  readonly statusCode = 400
  readonly code = 'VALIDATION'
  constructor (readonly errors: FieldErrors) {
    super(summarizeFieldErrors(errors))
  }
}

export class MethodNotAllowedError extends DomainError {
  readonly statusCode = 405
  readonly code = 'METHOD_NOT_ALLOWED'
  constructor (allowed: string[]) {
    super('method not allowed')
    this.headers.allow = allowed.join(', ')
  }
}

export class UnsupportedMediaTypeError extends DomainError {
  readonly statusCode = 415
  readonly code = 'UNSUPPORTED_MEDIA_TYPE'
  constructor (message: string, acceptPatch?: string) {
    super(message)
    if (acceptPatch !== undefined) this.headers['accept-patch'] = acceptPatch
  }
}

export class PreconditionFailedError extends DomainError {
  readonly statusCode = 412
  readonly code = 'PRECONDITION_FAILED'
}

export class PaymentDeclinedError extends DomainError {
  readonly statusCode = 402
  readonly code = 'PAYMENT_DECLINED'
  constructor (readonly paymentId: string, readonly declineCode: string) {
    super(`The payment was declined by the card issuer (${declineCode}).`)
    Object.assign(this.extensions, { paymentId, declineCode })
  }
}

export class GatewayUnavailableError extends DomainError {
  readonly statusCode = 503
  readonly code = 'GATEWAY_UNAVAILABLE'
  constructor (message: string, readonly paymentId: string | undefined, retryAfterSeconds: number) {
    super(message)
    this.headers['retry-after'] = String(retryAfterSeconds)
    if (paymentId !== undefined) this.extensions.paymentId = paymentId
  }
}

export class IdempotencyKeyReusedError extends ConflictError {
  override readonly code = 'IDEMPOTENCY_KEY_REUSED'
}

export class IdempotencyKeyInUseError extends ConflictError {
  override readonly code = 'IDEMPOTENCY_KEY_IN_USE'
  constructor (message: string, retryAfterSeconds: number) {
    super(message)
    this.headers['retry-after'] = String(retryAfterSeconds)
  }
}

export function summarizeFieldErrors (errors: FieldErrors): string {
  return Object.values(errors).flat().join(' ')
}

export class RateLimitedError extends DomainError {
  readonly statusCode = 429
  readonly code = 'RATE_LIMITED'
  constructor (retryAfterSeconds: number) {
    super(`too many requests; retry after ${retryAfterSeconds} seconds`)
    this.headers['retry-after'] = String(retryAfterSeconds)
  }
}

/**
 * The database cannot serve right now (unreachable, restarting, timed out, busy
 * or out of space). Nothing was half-written: a retry after `Retry-After`
 * seconds (with the same Idempotency-Key) resumes where the request stopped.
 */
export class StoreUnavailableError extends DomainError {
  readonly statusCode = 503
  readonly code = 'STORE_UNAVAILABLE'
  constructor (message: string, readonly reason: 'unreachable' | 'timeout' | 'busy' | 'full' | 'io', retryAfterSeconds: number, options?: { cause?: unknown }) {
    super(message, options)
    this.headers['retry-after'] = String(retryAfterSeconds)
  }
}

/** No credential, or one that is malformed, unknown, revoked or expired (RFC 6750). */
export class UnauthenticatedError extends DomainError {
  readonly statusCode = 401
  readonly code = 'UNAUTHENTICATED'
  /** `tokenSent`: a credential was presented (and refused), so the challenge says `error="invalid_token"`. */
  constructor (message: string, readonly tokenSent: boolean) {
    super(message)
    this.headers['www-authenticate'] = bearerChallenge(tokenSent)
  }
}

export const AUTH_REALM = 'product-payment-service'

export function bearerChallenge (tokenSent: boolean): string {
  return tokenSent
    ? `Bearer realm="${AUTH_REALM}", error="invalid_token", error_description="The API key is unknown, revoked or expired."`
    : `Bearer realm="${AUTH_REALM}"`
}

/** A valid credential without the right to do this (RFC 6750 insufficient_scope, without scopes). */
export class ForbiddenError extends DomainError {
  readonly statusCode = 403
  readonly code = 'FORBIDDEN'
}
