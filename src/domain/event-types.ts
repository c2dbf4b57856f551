/** The kinds of events (issue 14), on their own so that the webhook endpoints that subscribe to them need nothing else of events. */
export const EVENT_TYPES = [
  'payment.authorized',
  'payment.succeeded',
  'payment.declined',
  'payment.pending',
  'payment.requires_action',
  'payment.failed',
  'payment.canceled',
  'payment.capture_failed',
  'refund.succeeded',
  'refund.failed',
  'dispute.created',
  'dispute.updated',
  'dispute.closed',
  'merchant.updated',
  'webhook_endpoint.disabled',
  /** Sent only on request, to the one endpoint tested (POST …/webhook-endpoints/{endpointId}/test): never fanned out nor replayed. */
  'webhook_endpoint.test'
] as const
export type EventType = typeof EVENT_TYPES[number]

export function isEventType (value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value)
}
