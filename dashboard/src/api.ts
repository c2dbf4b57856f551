// The one way the dashboard talks to the service: the JSON API, through the dashboard session
// (HttpOnly cookie + X-CSRF-Token header). No business rule lives here: the API decides, the page shows it.

export type Principal = { kind: 'admin' } | { kind: 'merchant', merchantId: string }

export interface Session {
  principal: Principal
  csrfToken: string
  expiresAt: string
}

/** An RFC 9457 problem document (or the products area's `{ error, code }` envelope). */
export interface Problem {
  type?: string
  title?: string
  detail?: string
  error?: string
  errors?: Record<string, string[] | string>
}

export class ApiError extends Error {
  constructor (readonly status: number, readonly problem: Problem, readonly retryAfter: string | null) {
    super(plainWords(status, problem, retryAfter))
  }
}

let csrfToken: string | null = null
let onSessionLost: () => void = () => {}

export function useSessionToken (token: string | null): void { csrfToken = token }
export function whenSessionLost (callback: () => void): void { onSessionLost = callback }

/** The API's answer in words a merchant understands, with the API's own detail. */
export function plainWords (status: number, problem: Problem, retryAfter: string | null): string {
  const detail = problem.detail ?? problem.error ?? problem.title ?? ''
  const fields = problem.errors === undefined
    ? ''
    : ' ' + Object.entries(problem.errors).map(([field, messages]) => `${field}: ${[messages].flat().join(', ')}`).join('; ')
  const later = retryAfter === null ? '' : ` Try again in ${retryAfter} s.`
  const why: Record<number, string> = {
    400: 'The service refused the request as sent.',
    401: 'You are not signed in (or the session ended). Sign in again.',
    402: 'Declined: the payment provider refused it (no money moved).',
    403: 'Not allowed for this key.',
    404: 'Not found (or it belongs to another merchant).',
    409: 'Conflict: the object is not in a state that allows this, or it changed meanwhile.',
    412: 'It changed meanwhile: reload and try again.',
    429: 'Too many requests.',
    503: 'The payment provider or the database is unavailable right now; nothing was lost.'
  }
  const head = why[status] ?? (status >= 500 ? 'The service failed unexpectedly.' : `The service answered ${status}.`)
  return `${head}${detail === '' ? '' : ` ${detail}`}${fields}${later} (HTTP ${status})`
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  body?: unknown
  query?: Record<string, string | number | undefined>
  /** Money-moving calls: one key per confirmed action, so a retry can never act twice. */
  idempotencyKey?: string
  contentType?: string
}

export async function api<T> (path: string, options: CallOptions = {}): Promise<T> {
  const url = new URL(path, window.location.origin)
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined && value !== '') url.searchParams.set(name, String(value))
  }
  const headers: Record<string, string> = { accept: 'application/json' }
  if (csrfToken !== null) headers['X-CSRF-Token'] = csrfToken
  if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json'
  if (options.idempotencyKey !== undefined) headers['Idempotency-Key'] = options.idempotencyKey
  const response = await fetch(url, {
    method: options.method ?? 'GET',
    credentials: 'same-origin',
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })
  if (response.status === 204) return undefined as T
  const text = await response.text()
  const body: unknown = text === '' ? {} : JSON.parse(text)
  if (!response.ok) {
    if (response.status === 401 && !path.startsWith('/dashboard/session')) onSessionLost()
    throw new ApiError(response.status, body as Problem, response.headers.get('retry-after'))
  }
  return body as T
}

/**
 * Saves what a GET answers as a file (the CSV exports): read with the session's CSRF header, which a plain link
 * cannot send, then handed to the browser's download. Resolves with the file's name.
 */
export async function download (path: string, query: Record<string, string | number | undefined>, fallbackName: string): Promise<string> {
  const url = new URL(path, window.location.origin)
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') url.searchParams.set(name, String(value))
  }
  const headers: Record<string, string> = { accept: 'text/csv, application/problem+json' }
  if (csrfToken !== null) headers['X-CSRF-Token'] = csrfToken
  const response = await fetch(url, { credentials: 'same-origin', headers })
  if (!response.ok) {
    const text = await response.text()
    if (response.status === 401) onSessionLost()
    throw new ApiError(response.status, (text === '' ? {} : JSON.parse(text)) as Problem, response.headers.get('retry-after'))
  }
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName
  const file = URL.createObjectURL(await response.blob())
  const link = document.createElement('a')
  link.href = file
  link.download = name
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => { URL.revokeObjectURL(file) }, 10_000)
  return name
}

export function messageOf (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

// The resources the pages show (the API's public shapes, only the members used).
export interface Page<T> { data: T[], hasMore: boolean }

export interface Attempt { connectorId: string | null, connectorType: string, outcome: string, code: string | null, at: string }

export interface Payment {
  id: string
  status: string
  amount: number
  currency: string
  amountRefunded: number
  amountCaptured: number
  amountCapturable: number
  amountCapturePending?: number
  /** Present once the payment had a dispute: the money the PSP took back and has not reinstated. */
  amountDisputed?: number
  captureMethod?: string
  declineCode?: string
  failureCode?: string
  cancellationReason?: string
  connector: { id: string | null, type: string }
  connectorReference?: string
  attempts: Attempt[]
  metadata?: Record<string, string>
  customer?: { email: string, name?: string, reference?: string }
  paymentMethodDetails?: { type: string, card?: { brand: string, last4: string, expMonth?: number, expYear?: number, country?: string } }
  /** A customer-present payment's: where the shopper lands after authenticating (the merchant's page). */
  returnUrl?: string
  /** While `requires_action`: where the merchant's checkout sends the shopper to authenticate (3-D Secure, a bank's page). */
  nextAction?: { type: 'redirect', url: string, method: 'GET' | 'POST', data?: Record<string, string> }
  createdAt: string
  updatedAt: string
}

export interface Refund {
  id: string
  paymentId: string
  amount: number
  currency: string
  status: string
  reason?: string
  failureCode?: string
  createdAt: string
}

export type DisputeStatus = 'needs_response' | 'under_review' | 'won' | 'lost' | 'accepted'

/** A dispute a PSP reported on one of the merchant's payments (GET /api/disputes). */
export interface Dispute {
  id: string
  paymentId: string
  amount: number
  currency: string
  /** The PSP's reason as given (Stripe's `reason`, Adyen's chargeback reason code); absent when it gave none. */
  reason?: string
  status: DisputeStatus
  fundsWithdrawn: boolean
  evidenceDueBy?: string
  connector: { id: string, type: string }
  connectorReference: string
  createdAt: string
  updatedAt: string
}

export interface ApiEvent {
  id: string
  type: string
  sequence: number
  createdAt: string
  resource: { type: string, id: string }
  /** The resource as the API showed it then (a refund's names its `paymentId`). */
  data: Record<string, unknown>
}

export interface Merchant { id: string, name: string, email: string, status: 'active' | 'suspended', createdAt: string }

export interface ApiKey { id: string, name: string, prefix: string, last4: string, createdAt: string, expiresAt?: string | null }

export interface Connector {
  id: string
  type: string
  priority: number
  status: 'enabled' | 'disabled'
  description?: string
  credentialsHint?: string
  createdAt: string
  updatedAt: string
}

/** One connector's charge calls over a range (GET /merchants/{id}/connectors/stats). */
export interface ConnectorStatsEntry {
  id: string | null
  type: string
  description?: string
  deleted: boolean
  attempts: number
  succeeded: number
  authorized: number
  requiresAction: number
  declined: number
  notProcessed: number
  unknown: number
  successRate: number | null
  latency: { p50Ms: number | null, p95Ms: number | null }
}
export interface ConnectorStats { createdGte: string, createdLt: string, data: ConnectorStatsEntry[] }

export interface WebhookEndpoint {
  id: string
  url: string
  description?: string
  enabledEvents: string[]
  disabled: boolean
  disabledReason?: string
  createdAt: string
}

export interface DeliveryAttempt { attempt: number, at: string, statusCode: number | null, durationMs: number, error: string | null, responseBody?: string | null }

export interface Delivery {
  id: string
  eventId: string
  eventType: string
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  nextAttemptAt?: string
  attemptLog: DeliveryAttempt[]
  createdAt: string
}

export interface Outcome { count: number, amount: number }
export interface SummaryDay { date: string, succeeded: Outcome, declined: Outcome, refunded: Outcome }
export interface Summary {
  from: string
  to: string
  currencies: Array<{
    currency: string
    days: SummaryDay[]
    totals: { succeeded: Outcome, declined: Outcome, refunded: Outcome, successRate: number | null }
  }>
}
