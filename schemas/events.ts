import { Type, type Static } from '@sinclair/typebox'
import { EVENT_RETENTION_DAYS, EVENT_TYPES, type DomainEvent, type EventResourceType } from '../src/domain/events'
import type { EndpointSnapshot, PaymentSnapshot } from '../src/domain/event-factory'
import type { Refund } from '../src/domain/refunds'
import type { Dispute } from '../src/domain/disputes'
import type { Merchant } from '../src/domain/merchants'
import { eventResource } from '../src/domain/api-versions'
import { toPublicPayment } from './payments'
import { toPublicRefund } from './refunds'
import { toPublicDispute } from './disputes'
import { toMerchantResource } from './merchants'
import { toEndpointResource } from './webhooks'
import { pageOf, pageQueryProperties } from './listing'
import { MAX_PARAM_LENGTH } from './patterns'
import { succeededPaymentExample } from './captures'

export const exampleEvent = {
  id: '019aa9f1-2b3c-7d4e-8f50-6172839a4b5c',
  type: 'payment.succeeded',
  createdAt: '2026-01-15T09:30:01.000Z',
  sequence: 1,
  resource: { type: 'payment', id: '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f' },
  data: succeededPaymentExample
}

export const EventTypeSchema = Type.Unsafe<typeof EVENT_TYPES[number]>({
  type: 'string',
  enum: [...EVENT_TYPES],
  description: 'payment.authorized (manual capture: requires_capture), payment.succeeded (also when an authorization is captured), ' +
    'payment.declined, payment.pending (the gateway\'s outcome is unknown), payment.requires_action (a customer-present payment waits for its ' +
    'shopper\'s authentication: `nextAction`), payment.failed, payment.canceled (also a voided or expired authorization), ' +
    'payment.capture_failed (a capture the PSP had confirmed failed later: the payment requires capture again), ' +
    'refund.succeeded, refund.failed, dispute.created, dispute.updated, dispute.closed (it became won, lost or accepted), merchant.updated, webhook_endpoint.disabled, ' +
    'webhook_endpoint.test (sent only when asked for, POST /merchants/{id}/webhook-endpoints/{endpointId}/test, to the endpoint tested: `data` is that endpoint).',
  examples: ['payment.succeeded']
})

export const Event = Type.Object({
  id: Type.String({ maxLength: 64, format: 'uuid', description: 'The event id; also the `webhook-id` of its deliveries (the same on every attempt).' }),
  type: EventTypeSchema,
  createdAt: Type.String({ maxLength: 64, format: 'date-time', description: 'When the change was committed.' }),
  sequence: Type.Integer({ format: 'int32', minimum: 1, maximum: 2147483647, description: '1, 2, 3 … per resource in commit order: order the events of one payment by it.' }),
  resource: Type.Object({
    type: Type.String({ enum: ['payment', 'refund', 'dispute', 'merchant', 'webhook_endpoint'], description: 'The kind of resource.' }),
    id: Type.String({ maxLength: 64, description: 'Its id.' })
  }, { additionalProperties: false, description: 'The resource the event is about.' }),
  data: Type.Object({}, { additionalProperties: true, description: 'The resource as the API returns it, at the time of the event.' })
}, { $id: 'Event', title: 'Event', additionalProperties: false, examples: [exampleEvent] })

export type EventType = Static<typeof Event>

/** The representation of each kind of resource, from the snapshot an event stores (JSON: no Dates in these objects to revive). */
const snapshotRenderers: Record<EventResourceType, (snapshot: Record<string, unknown>) => object> = {
  payment: (snapshot) => toPublicPayment(snapshot as unknown as PaymentSnapshot),
  refund: (snapshot) => toPublicRefund(snapshot as unknown as Refund),
  dispute: (snapshot) => toPublicDispute(snapshot as unknown as Dispute),
  merchant: (snapshot) => toMerchantResource(snapshot as unknown as Merchant),
  webhook_endpoint: (snapshot) => toEndpointResource(snapshot as unknown as EndpointSnapshot)
}

/**
 * An event's `data` as the API lists and delivers it: its resource's representation at the time of the event, rendered
 * from the stored snapshot; events written before snapshots hold the representation itself and are shown as stored.
 */
export function renderEventData (event: DomainEvent): Record<string, unknown> {
  if (event.dataFormat === 'rendered') return event.data
  return snapshotRenderers[event.resourceType](event.data) as Record<string, unknown>
}

/** An event as the API lists it and delivers it: its resource's representation at the time is its `data`. */
export function toEventResource (event: DomainEvent): EventType {
  // One rendering for the events API and the webhook body of the current version (src/domain/api-versions.ts).
  return eventResource(event, renderEventData) as EventType
}

export const EventList = pageOf(Event, 'Event list', exampleEvent)

export const EventListQuery = Type.Object({
  ...pageQueryProperties,
  type: Type.Optional(EventTypeSchema),
  createdGte: Type.Optional(Type.String({ maxLength: 64, format: 'date-time', description: 'Only events created at or after this instant (ISO 8601).', examples: ['2026-01-01T00:00:00Z'] })),
  createdLt: Type.Optional(Type.String({ maxLength: 64, format: 'date-time', description: 'Only events created before this instant (ISO 8601).', examples: ['2026-02-01T00:00:00Z'] })),
  paymentId: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only the events about this payment and its refunds (any letter case).', examples: ['3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f'] }))
}, { additionalProperties: false })

export const EventParams = Type.Object({
  id: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The event id.', examples: [exampleEvent.id] })
})

export const eventsDescription = `Events are kept ${EVENT_RETENTION_DAYS} days by default (EVENT_RETENTION_DAYS), then deleted with their deliveries.`

/** Each kind of resource an event is about: its component (the event's `data`) and the event types about it. */
export const eventResources = [
  { variant: 'PaymentEvent', resource: 'payment', data: 'Payment', prefix: 'payment.' },
  { variant: 'RefundEvent', resource: 'refund', data: 'Refund', prefix: 'refund.' },
  { variant: 'DisputeEvent', resource: 'dispute', data: 'Dispute', prefix: 'dispute.' },
  { variant: 'MerchantEvent', resource: 'merchant', data: 'Merchant', prefix: 'merchant.' },
  { variant: 'WebhookEndpointEvent', resource: 'webhook_endpoint', data: 'WebhookEndpoint', prefix: 'webhook_endpoint.' }
]

/**
 * The document's `Event`: a `oneOf` of one variant per kind of resource, discriminated by `type`, whose `data` is that
 * resource's component, so a generated client narrows `data` on `type`. Document only: the routes serialize events with
 * `Event` (its `data` any object, as stored).
 */
export function typedEventComponents (): { components: Record<string, unknown>, union: Record<string, unknown> } {
  const ref = (name: string) => `#/components/schemas/${name}`
  const base = JSON.parse(JSON.stringify(Event)) as { properties: Record<string, Record<string, unknown>>, examples?: unknown, $id?: string }
  delete base.$id
  delete base.examples
  const components: Record<string, unknown> = {}
  const mapping: Record<string, string> = {}
  for (const { variant, resource, data, prefix } of eventResources) {
    const types = EVENT_TYPES.filter((type) => type.startsWith(prefix))
    for (const type of types) mapping[type] = ref(variant)
    const resourceSchema = base.properties.resource as { properties: Record<string, Record<string, unknown>> }
    // A copy each: shared objects would become YAML anchors and aliases.
    components[variant] = JSON.parse(JSON.stringify({
      ...base,
      title: variant,
      description: `An event about a ${resource.replace('_', ' ')}: \`data\` is the ${data} at the time of the event.`,
      properties: {
        ...base.properties,
        type: { ...base.properties.type, enum: types, examples: [types[0]] },
        resource: {
          ...resourceSchema,
          properties: { ...resourceSchema.properties, type: { type: 'string', const: resource, description: 'The kind of resource.' } }
        },
        data: { $ref: ref(data) }
      }
    }))
  }
  return {
    components,
    union: {
      title: 'Event',
      description: 'A change to one of your resources: narrow on `type` (or `resource.type`) and `data` is that resource as the API returns it, at the time of the event.',
      oneOf: eventResources.map(({ variant }) => ({ $ref: ref(variant) })),
      discriminator: { propertyName: 'type', mapping },
      examples: [exampleEvent]
    }
  }
}
