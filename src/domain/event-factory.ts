/**
 * The events of changes, made by the core: each carries a snapshot of the changed resource (the domain object, written
 * as JSON, its secrets left out), and the edge renders the representation when the event is listed or delivered
 * (schemas/events.ts renderEventData). Apart from events.ts, so that stays a leaf the resources' own modules may import.
 */
import type { Merchant } from './merchants'
import type { Payment } from './payments'
import type { Refund } from './refunds'
import { disputeEventType, type Dispute } from './disputes'
import type { WebhookEndpoint } from './webhooks'
import { paymentEventType, type EventOf, type NewEvent } from './events'
import { newId } from './ids'

/**
 * A payment as an event keeps it: its return address's token (a bearer capability) and the checkout data (the PSP's
 * encrypted card fields) are left out; the representation shows neither.
 */
export type PaymentSnapshot = Omit<Payment, 'actionToken' | 'checkoutData'>
/** An endpoint as an event keeps it: never its signing secrets. */
export type EndpointSnapshot = Omit<WebhookEndpoint, 'secret' | 'previousSecret'>

/** The event of each kind of change, which the stores write inside the change's transaction. */
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

export function paymentSnapshot (payment: Payment): PaymentSnapshot {
  const { actionToken: _token, checkoutData: _checkout, ...kept } = payment
  return kept
}

export function endpointSnapshot (endpoint: WebhookEndpoint): EndpointSnapshot {
  const { secret: _secret, previousSecret: _previous, ...kept } = endpoint
  return kept
}

/** The events of changes, their `data` the changed resource as stored and its JSON (a snapshot, rendered at the edge). */
export function eventFactory (deps: { clock: () => number, newId?: () => string }): EventFactory {
  // The resource is written once, as JSON, and that text is what the store keeps: `data` is the (immutable) resource
  // itself, which reads as its JSON would (the edge renders both alike), so no copy is made per change.
  const make = (fields: Omit<NewEvent, 'id' | 'createdAt' | 'data' | 'dataFormat' | 'dataJson'>, resource: object): NewEvent => ({
    id: (deps.newId ?? newId)(),
    createdAt: new Date(deps.clock()).toISOString(),
    ...fields,
    data: resource as Record<string, unknown>,
    dataJson: JSON.stringify(resource),
    dataFormat: 'snapshot'
  })
  return {
    payment: (payment) => {
      const type = paymentEventType(payment.status)
      if (type === undefined || payment.merchantId === null) return undefined
      return make({ type, merchantId: payment.merchantId, resourceType: 'payment', resourceId: payment.id }, paymentSnapshot(payment))
    },
    captureFailed: (payment) => payment.merchantId === null
      ? undefined
      : make({ type: 'payment.capture_failed', merchantId: payment.merchantId, resourceType: 'payment', resourceId: payment.id }, paymentSnapshot(payment)),
    refund: ({ refund, payment }) => {
      if (payment.merchantId === null || refund.status === 'pending') return undefined
      return make({ type: refund.status === 'succeeded' ? 'refund.succeeded' : 'refund.failed', merchantId: payment.merchantId, resourceType: 'refund', resourceId: refund.id }, refund)
    },
    dispute: (change) => {
      if (change.dispute.merchantId === null) return undefined
      return make({ type: disputeEventType(change), merchantId: change.dispute.merchantId, resourceType: 'dispute', resourceId: change.dispute.id }, change.dispute)
    },
    merchant: (merchant) => make({ type: 'merchant.updated', merchantId: merchant.id, resourceType: 'merchant', resourceId: merchant.id }, merchant),
    endpointDisabled: (endpoint) => make({ type: 'webhook_endpoint.disabled', merchantId: endpoint.merchantId, resourceType: 'webhook_endpoint', resourceId: endpoint.id }, endpointSnapshot(endpoint)),
    endpointTest: (endpoint) => make({ type: 'webhook_endpoint.test', merchantId: endpoint.merchantId, resourceType: 'webhook_endpoint', resourceId: endpoint.id }, endpointSnapshot(endpoint))
  }
}
