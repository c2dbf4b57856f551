/**
 * The event factory's contract, apart from the events themselves: it names the resources whose changes make
 * events, so events.ts stays a leaf that the resources' own modules (webhooks.ts, api-versions.ts) may import.
 */
import type { Merchant } from './merchants'
import type { Payment } from './payments'
import type { Refund } from './refunds'
import type { Dispute } from './disputes'
import type { WebhookEndpoint } from './webhooks'
import type { EventOf, NewEvent } from './events'

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
