import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { ConflictError, ValidationError } from './errors'
import type { EventType } from './event-types'
import type { DomainEvent, RenderEventData } from './events'
import { eventBodyIn, type ApiVersion } from './api-versions'

/** Most events one replay call looks at (and so schedules): the work of one call stays small; a cursor continues. */
export const REPLAY_BATCH_EVENTS = 1000
/** At most this many endpoints per merchant. */
export const MAX_ENDPOINTS_PER_MERCHANT = 16
export const WEBHOOK_URL_MAX_LENGTH = 2048
/** Random bytes of a signing secret (the spec allows 24-64). */
export const SECRET_BYTES = 32
/** Default and maximum overlap of a rotated secret with its successor. */
export const ROTATION_OVERLAP_DEFAULT_SECONDS = 24 * 3600
export const ROTATION_OVERLAP_MAX_SECONDS = 7 * 24 * 3600
/** Bytes of a receiver's response body that are read (the rest is discarded) and kept in the attempt log. */
export const RESPONSE_BODY_READ_LIMIT = 64 * 1024
export const RESPONSE_BODY_KEPT = 1024
/** Attempts kept in a delivery's log (the newest). */
export const ATTEMPT_LOG_MAX = 20
/** A Retry-After longer than this is treated as this. */
export const RETRY_AFTER_MAX_MS = 24 * 3600 * 1000
/** Up to this fraction is added to every retry delay, so receivers that failed together are not retried together. */
export const RETRY_JITTER = 0.1

export interface WebhookEndpoint {
  id: string
  merchantId: string
  url: string
  description: string | null
  /** null: every event type. */
  enabledEvents: EventType[] | null
  /** `whsec_` + base64. Stored as it is: signing needs the secret itself, so it cannot be hashed. */
  secret: string
  /** The secret before the last rotation, still signing until previousSecretExpiresAt. */
  previousSecret: string | null
  previousSecretExpiresAt: string | null
  disabled: boolean
  /** Why it was disabled: `manual`, `gone` (the receiver answered 410) or `failing` (a whole retry schedule failed). */
  disabledReason: 'manual' | 'gone' | 'failing' | null
  lastSuccessAt: string | null
  /** The API version its deliveries are rendered in (receivers cannot send `Api-Version`). */
  apiVersion: ApiVersion
  createdAt: string
  updatedAt: string
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed'

export interface DeliveryAttempt {
  attempt: number
  at: string
  /** The receiver's answer (HTTP status); null when none came (time-out, connection error, refused address). */
  receiverStatus: number | null
  durationMs: number
  error: string | null
  /** The start of the receiver's response body (at most RESPONSE_BODY_KEPT characters). */
  responseBody: string | null
}

export interface WebhookDelivery {
  id: string
  endpointId: string
  eventId: string
  eventType: EventType
  merchantId: string
  status: DeliveryStatus
  attempts: number
  /** Epoch ms of the next attempt (pending deliveries). */
  nextAttemptAt: number | null
  log: DeliveryAttempt[]
  createdAt: string
  updatedAt: string
}

/** A retry asked for while an attempt of the delivery is being sent (it holds the delivery's lease). */
export class DeliveryInFlightError extends ConflictError {
  override readonly code = 'DELIVERY_IN_FLIGHT'
  constructor (override readonly retryAfterSeconds: number) {
    super('An attempt of this delivery is being sent right now; retry once it is recorded (see Retry-After).')
  }
}

export function newSecret (): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`
}

function secretKey (secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64')
}

/** Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the base64-decoded secret. */
export function signature (secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`
}

/** The `webhook-signature` header: the current secret's signature, then the previous one's during its overlap. */
export function signatureHeader (endpoint: Pick<WebhookEndpoint, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>, id: string, timestampSeconds: number, body: string, now: number): string {
  const signatures = [signature(endpoint.secret, id, timestampSeconds, body)]
  if (endpoint.previousSecret !== null && endpoint.previousSecretExpiresAt !== null && Date.parse(endpoint.previousSecretExpiresAt) > now) {
    signatures.push(signature(endpoint.previousSecret, id, timestampSeconds, body))
  }
  return signatures.join(' ')
}

/** Checks a signature header the way a receiver does (tests and documentation; receivers use the standardwebhooks library). */
export function verifiesWith (secret: string, header: string, id: string, timestampSeconds: number, body: string): boolean {
  const expected = Buffer.from(signature(secret, id, timestampSeconds, body))
  return header.split(' ').some((candidate) => {
    const given = Buffer.from(candidate)
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

function isUnit (unit: string | undefined): unit is keyof typeof UNITS {
  return unit !== undefined && Object.hasOwn(UNITS, unit)
}

/** `5s,5m,30m,2h` → milliseconds; undefined when malformed (empty, a zero or unknown unit, more than 20 entries). */
export function parseRetryDelays (text: string): number[] | undefined {
  const parts = text.split(',').map((part) => part.trim())
  if (parts.length === 0 || parts.length > 20) return undefined
  const delays: number[] = []
  for (const part of parts) {
    const [, count, unit] = /^(\d{1,7})(ms|s|m|h|d)$/.exec(part) ?? []
    if (count === undefined || !isUnit(unit)) return undefined
    const ms = Number(count) * UNITS[unit]
    if (ms <= 0 || ms > 7 * UNITS.d) return undefined
    delays.push(ms)
  }
  return delays
}

/**
 * When to try again after failed attempt number `attempt` (1-based, within the current schedule):
 * the schedule's delay plus up to RETRY_JITTER of it, and never before the receiver's Retry-After.
 * Undefined after the last scheduled retry (the delivery has failed).
 */
export function nextAttemptDelay (attempt: number, delays: readonly number[], retryAfterMs: number | undefined, random: number): number | undefined {
  const delay = delays[attempt - 1]
  if (delay === undefined) return undefined
  const scheduled = Math.round(delay * (1 + RETRY_JITTER * random))
  return retryAfterMs === undefined ? scheduled : Math.max(scheduled, Math.min(retryAfterMs, RETRY_AFTER_MAX_MS))
}

/** Retry-After: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter (value: string | undefined, now: number): number | undefined {
  if (value === undefined || value === '') return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * The delivery body in the endpoint's API version: the Event resource since 2026-11-25; before it
 * `{type, timestamp, data, sequence}` (see api-versions.ts). Signed as these exact bytes.
 */
export function deliveryBody (event: DomainEvent, version: ApiVersion, renderData: RenderEventData): string {
  return JSON.stringify(eventBodyIn(event, version, renderData))
}

/**
 * The event of a test delivery: sent only on request to the endpoint tested, whatever its `enabledEvents`, and
 * never to another endpoint (no fan-out, no replay).
 */
export const TEST_EVENT_TYPE = 'webhook_endpoint.test' satisfies EventType

/** enabledEvents: the types an endpoint receives; null means all. A test event is never received this way. */
export function receives (endpoint: Pick<WebhookEndpoint, 'enabledEvents'>, type: EventType): boolean {
  if (type === TEST_EVENT_TYPE) return false
  return endpoint.enabledEvents === null || endpoint.enabledEvents.includes(type)
}

/** A test asked of a disabled endpoint is refused (a conflict with its state): it receives nothing, test events included. */
export function endpointDisabledForTest (): ConflictError {
  return new ConflictError('The webhook endpoint is disabled: it receives nothing, test events included. Enable it first, then send the test.')
}

/** True for an endpoint change that may send more (a new URL or event types, re-enabling). */
export function widensDelivery (patch: { url?: string, enabledEvents?: unknown[], disabled?: boolean }): boolean {
  return patch.url !== undefined || patch.enabledEvents !== undefined || patch.disabled === false
}

/** A validation error on one field. */
export function fieldError (field: string, message: string): ValidationError {
  return new ValidationError({ [field]: [message] })
}
