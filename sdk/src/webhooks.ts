import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import type { Event, LegacyWebhookEvent } from './types.js'

export { WebhookVerificationError }

/** The request's headers: a Fetch `Headers`, or Node's `IncomingHttpHeaders` (names in lower case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

export interface VerifyOptions<Version> {
  /** The endpoint's `apiVersion`: it decides the body (default the current version, 2026-11-25). */
  apiVersion?: Version
}

/**
 * Checks a delivery's Standard Webhooks signature (`webhook-id`, `webhook-timestamp` within five
 * minutes, `webhook-signature` under the endpoint's `whsec_…` secret) over the raw body, exactly as
 * received, and returns the event it carries, typed by the endpoint's API version: the Event resource
 * (2026-11-25), or `{ type, timestamp, data, sequence }` (2026-11-01). Throws `WebhookVerificationError`
 * otherwise; answer it with a 400 and never act on the body. Narrow on `type`; new event types may
 * arrive without a new version, so keep a default branch.
 */
export function verifyWebhook (payload: string, headers: WebhookHeaders, secret: string, options?: VerifyOptions<'2026-11-25'>): Event
export function verifyWebhook (payload: string, headers: WebhookHeaders, secret: string, options: VerifyOptions<'2026-11-01'>): LegacyWebhookEvent
export function verifyWebhook (payload: string, headers: WebhookHeaders, secret: string, options: VerifyOptions<string> = {}): Event | LegacyWebhookEvent {
  const body = new Webhook(secret).verify(payload, signatureHeaders(headers))
  if (options.apiVersion === '2026-11-01') {
    if (isLegacyEvent(body)) return body
  } else if (isEvent(body)) {
    return body
  }
  throw new WebhookVerificationError(`the body is not an event of API version ${options.apiVersion ?? '2026-11-25'}: check the endpoint's apiVersion`)
}

function signatureHeaders (headers: WebhookHeaders): Record<string, string> {
  const names = ['webhook-id', 'webhook-timestamp', 'webhook-signature']
  const valueOf = (name: string): string => {
    const value = headers instanceof Headers ? headers.get(name) : headers[name]
    return (Array.isArray(value) ? value.join(' ') : value) ?? ''
  }
  return Object.fromEntries(names.map((name) => [name, valueOf(name)]))
}

function isEventLike (body: unknown): body is { type: string, sequence: number, data: object } {
  return typeof body === 'object' && body !== null &&
    'type' in body && typeof body.type === 'string' &&
    'sequence' in body && typeof body.sequence === 'number' &&
    'data' in body && typeof body.data === 'object' && body.data !== null
}

function isEvent (body: unknown): body is Event {
  return isEventLike(body) && 'id' in body && typeof body.id === 'string' &&
    'resource' in body && typeof body.resource === 'object' && body.resource !== null
}

function isLegacyEvent (body: unknown): body is LegacyWebhookEvent {
  return isEventLike(body) && 'timestamp' in body && typeof body.timestamp === 'string'
}
