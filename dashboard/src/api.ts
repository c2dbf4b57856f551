// The one way the dashboard talks to the service: the JSON API, through the dashboard session
// (HttpOnly cookie + X-CSRF-Token header). No business rule lives here: the API decides, the page shows it.

import type { components } from '../../sdk/src/generated/schema'

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
  // The body of a refusal is whatever the service (or a proxy before it) sent: every member is read as optional.
  const detail = ('error' in problem ? problem.error : problem.detail ?? problem.title) ?? ''
  const errors = 'errors' in problem ? problem.errors : undefined
  const fields = errors === undefined
    ? ''
    : ' ' + Object.entries(errors).map(([field, messages]) => `${field}: ${[messages].flat().join(', ')}`).join('; ')
  const later = retryAfter === null ? '' : ` Try again in ${retryAfter} s.`
  const why: Record<number, string> = {
    400: 'The service refused the request as sent.',
    401: 'You are not signed in (or the session ended). Sign in again.',
    402: 'Declined: the payment provider refused it (no money moved).',
    403: 'Not allowed for this key, or for your role.',
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

/** Problem types are URIs; the dashboard reacts to a few by their last segment. */
export function isProblemType (error: unknown, name: string): boolean {
  if (!(error instanceof ApiError) || !('type' in error.problem)) return false
  return typeof error.problem.type === 'string' && error.problem.type.endsWith(name)
}

// The resources the pages show and the bodies they send: the API's own shapes, from the OpenAPI document through the
// SDK's generated types (sdk/src/generated/schema.ts, `npm run generate --prefix sdk`). A type-only import: esbuild
// erases it, so nothing of the SDK is bundled, and a change to a route's schema breaks the dashboard's typecheck.
type Schemas = components['schemas']

export type Payment = Schemas['Payment']
export type PaymentList = Schemas['PaymentList']
export type PaymentSummary = Schemas['PaymentSummary']
export type CaptureRequest = Schemas['CaptureRequest']
export type Refund = Schemas['Refund']
export type RefundList = Schemas['RefundList']
export type CreateRefundRequest = Schemas['CreateRefundRequest']
export type Dispute = Schemas['Dispute']
export type DisputeList = Schemas['DisputeList']
export type DisputeStatus = Dispute['status']
export type ApiEvent = Schemas['Event']
export type EventList = Schemas['EventList']
export type Merchant = Schemas['Merchant']
export type MerchantList = Schemas['MerchantList']
export type CreateMerchantRequest = Schemas['CreateMerchantRequest']
export type MerchantPatch = Schemas['MerchantPatch']
export type ApiKey = Schemas['ApiKey']
export type ApiKeyCollection = Schemas['ApiKeyCollection']
export type CreatedApiKey = Schemas['CreatedApiKey']
export type CreateApiKeyRequest = Schemas['CreateApiKeyRequest']
export type Connector = Schemas['ConnectorAccount']
export type ConnectorCollection = Schemas['ConnectorAccountCollection']
export type ConnectorStats = Schemas['ConnectorStats']
export type ConnectorStatsEntry = Schemas['ConnectorStatsEntry']
export type CreateConnectorRequest = Schemas['CreateConnectorRequest']
export type UpdateConnectorRequest = Schemas['UpdateConnectorRequest']
export type WebhookEndpoint = Schemas['WebhookEndpoint']
export type WebhookEndpointCollection = Schemas['WebhookEndpointCollection']
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret']
export type CreateWebhookEndpointRequest = Schemas['CreateWebhookEndpointRequest']
export type UpdateWebhookEndpointRequest = Schemas['UpdateWebhookEndpointRequest']
export type RotateWebhookSecretRequest = Schemas['RotateWebhookSecretRequest']
export type ReplayWebhookEventsRequest = Schemas['ReplayWebhookEventsRequest']
export type ReplayResult = Schemas['ReplayResult']
export type Delivery = Schemas['WebhookDelivery']
export type DeliveryList = Schemas['WebhookDeliveryList']
export type DeliveryAttempt = Delivery['attemptLog'][number]
export type Session = Schemas['DashboardSession']
export type SignInRequest = Schemas['DashboardSignIn']
export type Principal = Session['principal']
export type SignedInUser = NonNullable<Extract<Principal, { kind: 'merchant' }>['user']>
export type AcceptInviteRequest = Schemas['AcceptInviteRequest']
export type TotpEnrollment = Schemas['TotpEnrollment']
export type ConfirmTotpRequest = Schemas['ConfirmTotpRequest']
export type ChangePasswordRequest = Schemas['ChangePasswordRequest']
export type User = Schemas['User']
export type Role = User['role']
export type UserList = Schemas['UserList']
export type InviteUserRequest = Schemas['CreateUserRequest']
export type InvitedUser = Schemas['InvitedUser']
export type UpdateUserRequest = Schemas['UpdateUserRequest']
export type AuditEntry = Schemas['AuditEntry']
export type AuditLog = Schemas['AuditEntryList']
/** An RFC 9457 problem document of any area, or the products area's `{ error, code }` envelope. */
export type Problem = Schemas['ProblemDetails'] | Schemas['ErrorEnvelope']
