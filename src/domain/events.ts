/**
 * Events (issue 14): what happened to a merchant's resources, written in the same
 * database transaction as the change itself (a transactional outbox), so an
 * acknowledged change never lacks its event and a rolled-back change never has one.
 */
import type { Merchant } from './merchants'
import type { Payment } from './payments'
import type { Refund } from './refunds'
import type { Dispute } from './disputes'
import type { WebhookEndpoint } from './webhooks'
import type { EventType } from './event-types'
export { EVENT_TYPES, isEventType, type EventType } from './event-types'

export type EventResourceType = 'payment' | 'refund' | 'dispute' | 'merchant' | 'webhook_endpoint'

/** Days events (and their deliveries) are kept; the reaper deletes older ones. */
export const EVENT_RETENTION_DAYS = 30

export interface DomainEvent {
  id: string
  merchantId: string
  type: EventType
  resourceType: EventResourceType
  resourceId: string
  /**
   * 1, 2, 3, … per resource, in commit order: a receiver orders the events of one
   * payment (or refund, merchant, endpoint) by it, whatever order they arrive in.
   */
  sequence: number
  /** The resource as the API returns it, at the time of the event. */
  data: Record<string, unknown>
  createdAt: string
}

/** An event before the store numbers it. */
export type NewEvent = Omit<DomainEvent, 'sequence'>

/** Builds the event of a change from its stored resource; the store calls it inside the change's transaction. */
export type EventOf<T> = (stored: T) => NewEvent | undefined

/**
 * The event of each kind of change, which the stores write inside the change's transaction. Its
 * `data` is the resource's public representation, so the factory is made at the edge
 * (schemas/events.ts), beside the representations, and handed to the services.
 */
export interface EventFactory {
  /** payment.succeeded / declined / failed / canceled / pending, from the payment's status; none for payments without a merchant. */
  payment: EventOf<Payment>
  /** payment.capture_failed: a capture the PSP had confirmed failed later (Adyen's CAPTURE_FAILED); the payment requires capture again. */
  captureFailed: EventOf<Payment>
  /** refund.succeeded / refund.failed. */
  refund: EventOf<{ refund: Refund, payment: Payment }>
  /** dispute.created / dispute.updated / dispute.closed (issue 40); `previous` undefined: the change created it. */
  dispute: EventOf<{ dispute: Dispute, previous: Dispute | undefined }>
  merchant: EventOf<Merchant>
  endpointDisabled: EventOf<WebhookEndpoint>
  /** webhook_endpoint.test: the event a test delivery sends, `data` the endpoint (never its secret). */
  endpointTest: (endpoint: WebhookEndpoint) => NewEvent
}

/** The event type of a payment that reached `status`; undefined for states that have no event of their own. */
export function paymentEventType (status: string): EventType | undefined {
  switch (status) {
    case 'requires_capture': return 'payment.authorized'
    case 'requires_action': return 'payment.requires_action'
    case 'succeeded': return 'payment.succeeded'
    case 'declined': return 'payment.declined'
    case 'pending': return 'payment.pending'
    case 'failed': return 'payment.failed'
    case 'canceled': return 'payment.canceled'
    default: return undefined
  }
}
