import type { DomainEvent, RenderEventData } from '../domain/events'
import { deliveryBody, parseRetryAfter, signatureHeader, type WebhookEndpoint } from '../domain/webhooks'
import type { WebhookClient } from './client'

/** What one delivery attempt came to, in the delivery's terms (the HTTP details stay here). */
export interface SendOutcome {
  /** The receiver's answer (its HTTP status); null when none came. */
  receiverStatus: number | null
  /** 2xx: delivered. */
  delivered: boolean
  /** 410: the receiver wants no more deliveries to this URL. */
  gone: boolean
  /** The receiver's Retry-After, in ms from `now`. */
  retryAfterMs: number | undefined
  error: string | null
  durationMs: number
  responseBody: string | null
}

/**
 * Sends one event to one endpoint per Standard Webhooks: `webhook-id` (the event id,
 * the same on every attempt), `webhook-timestamp` (this attempt, in seconds) and
 * `webhook-signature` (v1 HMAC-SHA256 of `id.timestamp.body`, under the current
 * secret and, during a rotation, the previous one), and `webhook-api-version`, the version the
 * body is rendered in (the endpoint's), so a receiver knows how to read it without being told.
 * `renderData` renders the event's `data` (the edge's representations). Undefined when `signal` aborted it.
 */
export async function sendEvent (
  client: WebhookClient, renderData: RenderEventData, endpoint: WebhookEndpoint, event: DomainEvent, now: number, clock: () => number, signal?: AbortSignal
): Promise<SendOutcome | undefined> {
  const body = deliveryBody(event, endpoint.apiVersion, renderData)
  const timestamp = Math.floor(now / 1000)
  const response = await client.post(endpoint.url, {
    'content-type': 'application/json',
    'user-agent': 'product-payment-service-webhooks/1',
    'webhook-id': event.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(endpoint, event.id, timestamp, body, now),
    'webhook-api-version': endpoint.apiVersion
  }, body, signal)
  if (signal?.aborted === true) return undefined
  const status = response.statusCode
  return {
    receiverStatus: status,
    delivered: status !== null && status >= 200 && status < 300,
    gone: status === 410,
    retryAfterMs: parseRetryAfter(response.retryAfter, clock()),
    error: response.error,
    durationMs: response.durationMs,
    responseBody: response.body
  }
}
