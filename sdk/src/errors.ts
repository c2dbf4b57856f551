import type { ErrorEnvelope, Problem } from './types.js'

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

  constructor (response: Response, body: unknown) {
    const problem = isProblem(body) ? body : undefined
    const envelope = problem === undefined && isEnvelope(body) ? body : undefined
    super(problem?.detail ?? problem?.title ?? envelope?.error ?? `HTTP ${response.status}`)
    this.status = response.status
    this.problem = problem
    this.envelope = envelope
    this.body = body
    this.headers = response.headers
    this.requestId = response.headers.get('x-request-id') ?? undefined
  }
}

function isProblem (body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && 'type' in body && typeof body.type === 'string' &&
    'status' in body && typeof body.status === 'number'
}

function isEnvelope (body: unknown): body is ErrorEnvelope {
  return typeof body === 'object' && body !== null && 'error' in body && typeof body.error === 'string' &&
    'code' in body && typeof body.code === 'string'
}
