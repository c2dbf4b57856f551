/**
 * Domain errors: what went wrong, in the core's words. Each carries its `kind` (the family a
 * transport maps onto its own answer: plugins/http/errors/classify-error.ts holds the one table of
 * HTTP statuses and headers), a stable `code`, a message, and the facts a client can act on:
 * the fields at fault, when to retry, which methods or formats would have been accepted,
 * whether a credential was sent. No status code, header or media type lives here.
 */
export type FieldErrors = Record<string, string[]>

export type DomainErrorKind =
  | 'validation'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'precondition_failed'
  | 'unsupported_media_type'
  | 'rate_limited'
  /** The payment (or refund) was refused or given up: a final answer, not a fault of the request. */
  | 'payment_refused'
  /** A dependency (gateway, database) cannot serve now; the same request may succeed later. */
  | 'unavailable'

export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind
  abstract readonly code: string
  /** Facts about the failure a client can act on (ids, codes, amounts), beside the message. */
  readonly extensions: Record<string, unknown> = {}
  /** When retrying the same request may succeed, after how many seconds. */
  declare readonly retryAfterSeconds?: number
}

/**
 * True for a domain error that is the request's final answer (invalid input, a refusal, a state
 * that does not allow it), false for a passing unavailability of a dependency and for anything
 * that is not a domain error. Such a request changed nothing: it may be forgotten, not retried.
 */
export function isRefusal (error: unknown): error is DomainError {
  return error instanceof DomainError && error.kind !== 'unavailable'
}

export class NotFoundError extends DomainError {
  readonly kind = 'not_found'
  readonly code = 'NOT_FOUND'
}

export class ConflictError extends DomainError {
  readonly kind = 'conflict'
  readonly code: string = 'CONFLICT'
}

export class ValidationError extends DomainError {
  readonly kind = 'validation'
  readonly code = 'VALIDATION'
  constructor (readonly errors: FieldErrors) {
    super(summarizeFieldErrors(errors))
  }
}

export class MethodNotAllowedError extends DomainError {
  readonly kind = 'method_not_allowed'
  readonly code = 'METHOD_NOT_ALLOWED'
  constructor (readonly allowed: readonly string[]) {
    super('method not allowed')
  }
}

export class UnsupportedMediaTypeError extends DomainError {
  readonly kind = 'unsupported_media_type'
  readonly code = 'UNSUPPORTED_MEDIA_TYPE'
  /** `acceptPatch`: the patch formats the resource accepts, when the request was a patch. */
  constructor (message: string, readonly acceptPatch?: string) {
    super(message)
  }
}

export class PreconditionFailedError extends DomainError {
  readonly kind = 'precondition_failed'
  readonly code = 'PRECONDITION_FAILED'
}

export class PaymentDeclinedError extends DomainError {
  readonly kind = 'payment_refused'
  readonly code = 'PAYMENT_DECLINED'
  constructor (readonly paymentId: string, readonly declineCode: string) {
    super(`The payment was declined by the card issuer (${declineCode}).`)
    Object.assign(this.extensions, { paymentId, declineCode })
  }
}

export class GatewayUnavailableError extends DomainError {
  readonly kind = 'unavailable'
  readonly code = 'GATEWAY_UNAVAILABLE'
  constructor (message: string, readonly paymentId: string | undefined, override readonly retryAfterSeconds: number) {
    super(message)
    if (paymentId !== undefined) this.extensions.paymentId = paymentId
  }
}

export class IdempotencyKeyReusedError extends ConflictError {
  override readonly code = 'IDEMPOTENCY_KEY_REUSED'
}

export class IdempotencyKeyInUseError extends ConflictError {
  override readonly code = 'IDEMPOTENCY_KEY_IN_USE'
  constructor (message: string, override readonly retryAfterSeconds: number) {
    super(message)
  }
}

export function summarizeFieldErrors (errors: FieldErrors): string {
  return Object.values(errors).flat().join(' ')
}

export class RateLimitedError extends DomainError {
  readonly kind = 'rate_limited'
  readonly code = 'RATE_LIMITED'
  constructor (override readonly retryAfterSeconds: number) {
    super(`too many requests; retry after ${retryAfterSeconds} seconds`)
  }
}

/**
 * The database cannot serve right now (unreachable, restarting, timed out, busy
 * or out of space). Nothing was half-written: a retry after `retryAfterSeconds`
 * (with the same Idempotency-Key) resumes where the request stopped.
 */
export class StoreUnavailableError extends DomainError {
  readonly kind = 'unavailable'
  readonly code = 'STORE_UNAVAILABLE'
  constructor (message: string, readonly reason: 'unreachable' | 'timeout' | 'busy' | 'full' | 'io', override readonly retryAfterSeconds: number, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** No credential, or one that is malformed, unknown, revoked or expired (RFC 6750). */
export class UnauthenticatedError extends DomainError {
  readonly kind = 'unauthenticated'
  readonly code = 'UNAUTHENTICATED'
  /** `tokenSent`: a credential was presented (and refused), not merely missing. */
  constructor (message: string, readonly tokenSent: boolean) {
    super(message)
  }
}

export const AUTH_REALM = 'product-payment-service'

/** A valid credential without the right to do this (RFC 6750 insufficient_scope, without scopes). */
export class ForbiddenError extends DomainError {
  readonly kind = 'forbidden'
  readonly code = 'FORBIDDEN'
}
