/**
 * Events (issue 14): what happened to a merchant's resources, written in the same
 * database transaction as the change itself (a transactional outbox), so an
 * acknowledged change never lacks its event and a rolled-back change never has one.
 */
import type { EventType } from './event-types'
export { EVENT_TYPES, isEventType, type EventType } from './event-types'

export type EventResourceType = 'payment' | 'refund' | 'dispute' | 'merchant' | 'webhook_endpoint'

/** Days events (and their deliveries) are kept; the reaper deletes older ones. */
export const EVENT_RETENTION_DAYS = 30

/**
 * What an event's `data` holds: `snapshot`, the domain object (its secrets left out), rendered as the API shows it
 * when the event is listed or delivered; `rendered`, the representation itself, as events written before snapshots hold.
 */
export type EventDataFormat = 'rendered' | 'snapshot'

/** An event's `data` as the API shows it (the edge renders it: src/ holds no representations). */
export type RenderEventData = (event: DomainEvent) => Record<string, unknown>

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
  /** The resource at the time of the event, in `dataFormat`. */
  data: Record<string, unknown>
  dataFormat: EventDataFormat
  createdAt: string
}

/**
 * An event before the store numbers it. `dataJson`: `data` as JSON text, when the maker wrote it already (the store
 * writes it as it is instead of writing `data` again).
 */
export type NewEvent = Omit<DomainEvent, 'sequence'> & { dataJson?: string }

/** Builds the event of a change from its stored resource; the store calls it inside the change's transaction. */
export type EventOf<T> = (stored: T) => NewEvent | undefined

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
