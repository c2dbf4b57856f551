import {
  AUTH_REALM, DomainError, MethodNotAllowedError, UnauthenticatedError, UnsupportedMediaTypeError, ValidationError,
  type DomainErrorKind, type FieldErrors
} from '../../../src/domain/errors'
import { fieldErrorsFromSchema, type SchemaIssue } from './field-messages'

/**
 * The one place domain errors become HTTP: the status of each kind of domain error, and the
 * headers its facts turn into (Allow, Accept-Patch, WWW-Authenticate here; Retry-After for any
 * error that says when to retry).
 */
const httpByKind: { [K in DomainErrorKind]: { statusCode: number, headers?: (error: DomainError) => Record<string, string> } } = {
  validation: { statusCode: 400 },
  unauthenticated: {
    statusCode: 401,
    headers: (error) => ({ 'www-authenticate': bearerChallenge(error instanceof UnauthenticatedError && error.tokenSent) })
  },
  payment_refused: { statusCode: 402 },
  forbidden: { statusCode: 403 },
  not_found: { statusCode: 404 },
  method_not_allowed: {
    statusCode: 405,
    headers: (error): Record<string, string> => error instanceof MethodNotAllowedError ? { allow: error.allowed.join(', ') } : {}
  },
  conflict: { statusCode: 409 },
  precondition_failed: { statusCode: 412 },
  unsupported_media_type: {
    statusCode: 415,
    headers: (error): Record<string, string> => {
      if (!(error instanceof UnsupportedMediaTypeError)) return {}
      const headers: Record<string, string> = {}
      if (error.acceptPatch !== undefined) headers['accept-patch'] = error.acceptPatch
      // A refused Content-Encoding (plugins/http/request-hygiene.ts) names the codings that are accepted.
      const codings = (error as { acceptedCodings?: readonly string[] }).acceptedCodings
      if (codings !== undefined) headers['accept-encoding'] = codings.join(', ')
      return headers
    }
  },
  rate_limited: { statusCode: 429 },
  unavailable: { statusCode: 503 }
}

/** The HTTP status of a domain error. */
export function statusOf (error: DomainError): number {
  return httpByKind[error.kind].statusCode
}

/** The response headers a domain error's facts call for. */
export function headersOf (error: DomainError): Record<string, string> {
  const headers = httpByKind[error.kind].headers?.(error) ?? {}
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds)
  return headers
}

/** The RFC 6750 challenge: `error="invalid_token"` when a credential was sent and refused. */
export function bearerChallenge (tokenSent: boolean): string {
  return tokenSent
    ? `Bearer realm="${AUTH_REALM}", error="invalid_token", error_description="The API key is unknown, revoked or expired."`
    : `Bearer realm="${AUTH_REALM}"`
}

/** What every error handler needs to know about an error, whatever its shape. */
export interface ClassifiedError {
  statusCode: number
  code: string
  message: string
  headers: Record<string, string>
  fieldErrors?: FieldErrors
  /** The original error, when it is a domain error (for shape-specific extensions). */
  domain?: DomainError
  /** True when the failure is ours: log it, and tell the client nothing about it. */
  internal: boolean
}

interface FrameworkError extends Error {
  code?: string
  statusCode?: number
  validation?: SchemaIssue[]
  validationContext?: string
}

const invalidJson = { statusCode: 400, code: 'INVALID_JSON', message: 'invalid JSON' }

const frameworkErrors: Record<string, { statusCode: number, code: string, message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: invalidJson,
  FST_ERR_CTP_EMPTY_JSON_BODY: { statusCode: 400, code: 'EMPTY_BODY', message: 'request body is empty; send a JSON object' },
  FST_ERR_CTP_BODY_TOO_LARGE: { statusCode: 413, code: 'PAYLOAD_TOO_LARGE', message: 'request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'unsupported media type; send application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { statusCode: 400, code: 'INVALID_CONTENT_LENGTH', message: 'Content-Length does not match the body' },
  FST_ERR_CTP_INVALID_TYPE: { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'unsupported media type; send application/json' }
}

/**
 * True for a request that no route serves (Fastify's 404 route) failing on its headers or body
 * (unparseable JSON, an unknown or missing Content-Type, a body over the limit): the missing route
 * is the answer then, not the body. Domain errors (the rate limit) keep their status.
 */
export function isUnroutedRequestError (error: FrameworkError, request: { is404?: boolean }): boolean {
  if (request.is404 !== true || error instanceof DomainError) return false
  const status = error.statusCode
  return status !== undefined && status >= 400 && status < 500
}

export function classifyError (error: FrameworkError): ClassifiedError {
  if (error instanceof DomainError) {
    return {
      statusCode: statusOf(error),
      code: error.code,
      message: error.message,
      headers: headersOf(error),
      ...(error instanceof ValidationError ? { fieldErrors: error.errors } : {}),
      domain: error,
      internal: false
    }
  }
  if (Array.isArray(error.validation)) {
    const fieldErrors = fieldErrorsFromSchema(error.validation, error.validationContext)
    return classifyError(new ValidationError(fieldErrors))
  }
  const known = error.code !== undefined ? frameworkErrors[error.code] : undefined
  if (known !== undefined) return { ...known, headers: {}, internal: false }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return { ...invalidJson, headers: {}, internal: false }
  }
  const status = error.statusCode
  if (status !== undefined && status >= 400 && status < 500) {
    return { statusCode: status, code: 'BAD_REQUEST', message: 'the request could not be processed', headers: {}, internal: false }
  }
  return { statusCode: 500, code: 'INTERNAL', message: 'internal server error', headers: {}, internal: true }
}
