import type { ErrorEnvelope, Problem } from './types.js'
import { retryNoteOf } from './retry.js'

/**
 * An answer of 400 or above. `problem` is the RFC 9457 document (payments, merchants, keys, webhooks);
 * narrow on `problem.type` to reach its own members. The products area answers `{ error, code }` instead
 * (`envelope`).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError'
  readonly status: number
  readonly problem: Problem | undefined
  readonly envelope: ErrorEnvelope | undefined
  /** The body as received (parsed JSON when it was JSON). */
  readonly body: unknown
  /** `X-Request-Id`: quote it to the operator. */
  readonly requestId: string | undefined
  readonly headers: Headers
  /** A retryable answer (429, 503, 409 in use) the client did not retry, and why (e.g. a Retry-After over `maxRetryAfterMs`). */
  readonly retryNotAttempted: string | undefined

  /**
   * The message is the problem's detail (or title), then each field error of a 400 (`amount: must be positive;
   * currency: …`), then why a retryable answer was not retried: everything a log line needs.
   */
  constructor (response: Response, body: unknown) {
    const problem = isProblem(body) ? body : undefined
    const envelope = problem === undefined && isEnvelope(body) ? body : undefined
    const note = retryNoteOf(response)
    const fields = problem === undefined ? [] : fieldErrorsOf(problem)
    const summary = problem?.detail ?? problem?.title ?? envelope?.error ?? `HTTP ${response.status}`
    super([fields.length > 0 ? `${summary}: ${fields.join('; ')}` : summary, note].filter((part) => part !== undefined).join(' — '))
    this.status = response.status
    this.problem = problem
    this.envelope = envelope
    this.body = body
    this.headers = response.headers
    this.requestId = response.headers.get('x-request-id') ?? undefined
    this.retryNotAttempted = note
  }
}

function fieldErrorsOf (problem: Problem): string[] {
  const errors = 'errors' in problem ? problem.errors : undefined
  if (typeof errors !== 'object' || errors === null) return []
  return Object.entries(errors).map(([field, messages]) => `${field}: ${Array.isArray(messages) ? messages.join(', ') : String(messages)}`)
}

function isProblem (body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && 'type' in body && typeof body.type === 'string' &&
    'status' in body && typeof body.status === 'number'
}

function isEnvelope (body: unknown): body is ErrorEnvelope {
  return typeof body === 'object' && body !== null && 'error' in body && typeof body.error === 'string' &&
    'code' in body && typeof body.code === 'string'
}
