import { Type, type Static } from '@sinclair/typebox'
import { EVENT_TYPES } from '../src/domain/events'
import { TEST_EVENT_TYPE, ATTEMPT_LOG_MAX, MAX_ENDPOINTS_PER_MERCHANT, REPLAY_BATCH_EVENTS, RESPONSE_BODY_KEPT, ROTATION_OVERLAP_DEFAULT_SECONDS, ROTATION_OVERLAP_MAX_SECONDS, WEBHOOK_URL_MAX_LENGTH, type WebhookDelivery as StoredDelivery } from '../src/domain/webhooks'
import type { EndpointSnapshot } from '../src/domain/event-factory'
import { MerchantParams } from './merchants'
import { pageOf, pageQueryProperties } from './listing'
import { MAX_PARAM_LENGTH } from './patterns'
import { apiVersionField, apiVersionInput } from './api-versions'

const exampleEndpointId = '019aa9f3-0c1d-7e2f-9a3b-4c5d6e7f8091'
const exampleDeliveryId = '019aa9f5-2f3e-7d4c-9b5a-6e7f8091a2b3'
const exampleSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

/** The types an endpoint subscribes to: every type but the test event's, which is sent only when asked for. */
const SUBSCRIBABLE = EVENT_TYPES.filter((type) => type !== TEST_EVENT_TYPE)
const eventTypeOrAll = Type.Unsafe<'*' | typeof EVENT_TYPES[number]>({ type: 'string', enum: ['*', ...SUBSCRIBABLE] })

const exampleEndpoint = {
  id: exampleEndpointId,
  url: 'https://shop.example/webhooks/payments',
  description: 'order fulfilment',
  enabledEvents: ['payment.succeeded', 'refund.succeeded'],
  disabled: false,
  apiVersion: '2026-11-25',
  createdAt: '2026-01-15T09:00:00.000Z',
  updatedAt: '2026-01-15T09:00:00.000Z'
}

const endpointFields = {
  id: Type.String({ maxLength: 64, format: 'uuid', description: 'The endpoint id.' }),
  url: Type.String({ maxLength: WEBHOOK_URL_MAX_LENGTH, description: 'Where deliveries are POSTed (https).' }),
  description: Type.Optional(Type.String({ maxLength: 200, description: 'Your label.' })),
  enabledEvents: Type.Array(eventTypeOrAll, { maxItems: SUBSCRIBABLE.length + 1, description: 'The event types sent here; `["*"]`: every type.' }),
  disabled: Type.Boolean({ description: 'A disabled endpoint receives nothing; deliveries due meanwhile end `failed` (replay them once re-enabled).' }),
  disabledReason: Type.Optional(Type.String({ enum: ['manual', 'gone', 'failing'], description: '`manual` (PATCH), `gone` (the receiver answered 410), `failing` (every attempt of a whole retry schedule failed).' })),
  secretRotatingUntil: Type.Optional(Type.String({ maxLength: 64, format: 'date-time', description: 'Until then the previous secret signs too (a second signature in `webhook-signature`).' })),
  apiVersion: apiVersionField('The API version deliveries to this endpoint are rendered in (receivers cannot send `Api-Version`): since 2026-11-25 the body is the Event resource, before it `{type, timestamp, data, sequence}`. Set from the merchant\'s version at creation; PATCH it to upgrade.'),
  createdAt: Type.String({ maxLength: 64, format: 'date-time' }),
  updatedAt: Type.String({ maxLength: 64, format: 'date-time' })
}

export const WebhookEndpoint = Type.Object(endpointFields, { $id: 'WebhookEndpoint', title: 'Webhook endpoint', description: 'A webhook endpoint (never its secret).', additionalProperties: false, examples: [exampleEndpoint] })
export type WebhookEndpointType = Static<typeof WebhookEndpoint>

/** An endpoint as the API shows it (responses, event data): never its secrets. */
export function toEndpointResource (endpoint: EndpointSnapshot): WebhookEndpointType {
  return {
    id: endpoint.id,
    url: endpoint.url,
    ...(endpoint.description !== null ? { description: endpoint.description } : {}),
    enabledEvents: endpoint.enabledEvents ?? ['*'],
    disabled: endpoint.disabled,
    ...(endpoint.disabledReason !== null ? { disabledReason: endpoint.disabledReason } : {}),
    ...(endpoint.previousSecretExpiresAt !== null ? { secretRotatingUntil: endpoint.previousSecretExpiresAt } : {}),
    apiVersion: endpoint.apiVersion,
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt
  }
}

export const WebhookEndpointWithSecret = Type.Object({
  ...endpointFields,
  secret: Type.String({ maxLength: 100, description: 'The signing secret, `whsec_` + base64 of 32 random bytes. Shown only in this response: store it now.', examples: [exampleSecret] })
}, { $id: 'WebhookEndpointWithSecret', title: 'Webhook endpoint with its secret', additionalProperties: false, examples: [{ ...exampleEndpoint, secret: exampleSecret }] })

export const WebhookEndpointList = Type.Object({
  data: Type.Array(Type.Ref(WebhookEndpoint), { maxItems: MAX_ENDPOINTS_PER_MERCHANT, description: 'The merchant\'s endpoints, oldest first.' })
}, { $id: 'WebhookEndpointCollection', title: 'Webhook endpoints', additionalProperties: false, examples: [{ data: [exampleEndpoint] }] })

const url = Type.String({ minLength: 1, maxLength: WEBHOOK_URL_MAX_LENGTH, description: 'An https URL that resolves to public addresses only (private, loopback and link-local addresses are refused, also at delivery time).', examples: ['https://shop.example/webhooks/payments'] })
const enabledEvents = Type.Array(eventTypeOrAll, { minItems: 1, maxItems: SUBSCRIBABLE.length + 1, description: 'Event types to receive; omitted or `["*"]`: all.', examples: [['payment.succeeded', 'refund.succeeded']] })

export const CreateWebhookEndpointBody = Type.Object({
  url,
  enabledEvents: Type.Optional(enabledEvents),
  description: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A label.', examples: ['order fulfilment'] })),
  apiVersion: Type.Optional(apiVersionInput('The API version deliveries are rendered in; default the merchant\'s version.'))
}, {
  $id: 'CreateWebhookEndpointRequest',
  title: 'Webhook endpoint request',
  additionalProperties: false,
  examples: [{ url: 'https://shop.example/webhooks/payments', enabledEvents: ['payment.succeeded', 'refund.succeeded'], description: 'order fulfilment' }]
})

export const UpdateWebhookEndpointBody = Type.Object({
  url: Type.Optional(url),
  enabledEvents: Type.Optional(enabledEvents),
  description: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], { description: 'A label; null removes it.' })),
  disabled: Type.Optional(Type.Boolean({ description: 'true disables the endpoint; false enables it again (also after an automatic disable).' })),
  apiVersion: Type.Optional(apiVersionInput('Moves the endpoint\'s deliveries (also retries of earlier events) to this version.'))
}, { $id: 'UpdateWebhookEndpointRequest', title: 'Webhook endpoint changes', additionalProperties: false, examples: [{ disabled: false }] })

export const RotateSecretBody = Type.Object({
  overlapSeconds: Type.Optional(Type.Integer({
    format: 'int32',
    minimum: 0,
    maximum: ROTATION_OVERLAP_MAX_SECONDS,
    description: `How long the previous secret keeps signing next to the new one (default ${ROTATION_OVERLAP_DEFAULT_SECONDS}; 0: at once retired).`,
    examples: [3600]
  }))
}, { $id: 'RotateWebhookSecretRequest', title: 'Secret rotation', additionalProperties: false, examples: [{ overlapSeconds: 3600 }] })

export const ReplayBody = Type.Object({
  from: Type.String({ maxLength: 64, format: 'date-time', description: 'Events created at or after this instant.', examples: ['2026-01-15T00:00:00Z'] }),
  to: Type.String({ maxLength: 64, format: 'date-time', description: 'Events created before this instant.', examples: ['2026-01-16T00:00:00Z'] }),
  startingAfter: Type.Optional(Type.String({
    maxLength: MAX_PARAM_LENGTH,
    description: 'Continue a replay: the `nextStartingAfter` of the previous answer (with the same `from` and `to`).',
    examples: ['019aa9f1-2b3c-7d4e-8f50-6172839a4b5c']
  }))
}, { $id: 'ReplayWebhookEventsRequest', title: 'Replay range', additionalProperties: false, examples: [{ from: '2026-01-15T00:00:00Z', to: '2026-01-16T00:00:00Z' }] })

export const ReplayResult = Type.Object({
  replayed: Type.Integer({ format: 'int32', minimum: 0, maximum: REPLAY_BATCH_EVENTS, description: `New deliveries scheduled: the events of this batch (at most ${REPLAY_BATCH_EVENTS} events of the range, oldest first) that this endpoint receives.` }),
  hasMore: Type.Boolean({ description: 'true: the range holds more events; send the same request with `startingAfter` = `nextStartingAfter` to replay the next batch.' }),
  nextStartingAfter: Type.Optional(Type.String({ maxLength: 64, format: 'uuid', description: 'With `hasMore`: the last event of this batch, where the next call continues.' }))
}, { $id: 'ReplayResult', title: 'Replay result', additionalProperties: false, examples: [{ replayed: 12, hasMore: false }, { replayed: 1000, hasMore: true, nextStartingAfter: '019aa9f1-2b3c-7d4e-8f50-6172839a4b5c' }] })

const Attempt = Type.Object({
  attempt: Type.Integer({ format: 'int32', minimum: 1, maximum: 2147483647 }),
  at: Type.String({ maxLength: 64, format: 'date-time' }),
  statusCode: Type.Union([Type.Integer({ format: 'int32', minimum: 100, maximum: 599 }), Type.Null()], { description: 'The receiver\'s status; null when no response came.' }),
  durationMs: Type.Integer({ format: 'int32', minimum: 0, maximum: 2147483647 }),
  error: Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], { description: 'Time-out, connection error or refused address.' }),
  responseBody: Type.Union([Type.String({ maxLength: RESPONSE_BODY_KEPT }), Type.Null()], { description: 'The first 1,024 characters of the receiver\'s answer.' })
}, { additionalProperties: false })

const exampleDelivery = {
  id: exampleDeliveryId,
  eventId: '019aa9f1-2b3c-7d4e-8f50-6172839a4b5c',
  eventType: 'payment.succeeded',
  status: 'succeeded',
  attempts: 2,
  attemptLog: [
    { attempt: 1, at: '2026-01-15T09:30:01.020Z', statusCode: 503, durationMs: 41, error: null, responseBody: 'busy' },
    { attempt: 2, at: '2026-01-15T09:30:06.300Z', statusCode: 200, durationMs: 35, error: null, responseBody: '' }
  ],
  createdAt: '2026-01-15T09:30:01.000Z',
  updatedAt: '2026-01-15T09:30:06.340Z'
}

export const WebhookDelivery = Type.Object({
  id: Type.String({ maxLength: 64, format: 'uuid' }),
  eventId: Type.String({ maxLength: 64, format: 'uuid', description: 'The event (its `webhook-id`).' }),
  eventType: Type.String({ maxLength: 64 }),
  status: Type.String({ enum: ['pending', 'succeeded', 'failed'] }),
  attempts: Type.Integer({ format: 'int32', minimum: 0, maximum: 2147483647 }),
  nextAttemptAt: Type.Optional(Type.String({ maxLength: 64, format: 'date-time', description: 'Pending deliveries: when the next attempt is due.' })),
  attemptLog: Type.Array(Attempt, { maxItems: ATTEMPT_LOG_MAX, description: 'The attempts, oldest first (the last 20).' }),
  createdAt: Type.String({ maxLength: 64, format: 'date-time' }),
  updatedAt: Type.String({ maxLength: 64, format: 'date-time' })
}, { $id: 'WebhookDelivery', title: 'Webhook delivery', additionalProperties: false, examples: [exampleDelivery] })

export type WebhookDeliveryType = Static<typeof WebhookDelivery>

/** A delivery as the API shows it: its attempts with the receiver's status as `statusCode`. */
export function toDeliveryResource (delivery: StoredDelivery): WebhookDeliveryType {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    ...(delivery.nextAttemptAt !== null ? { nextAttemptAt: new Date(delivery.nextAttemptAt).toISOString() } : {}),
    attemptLog: delivery.log.map(({ receiverStatus, ...attempt }) => ({ ...attempt, statusCode: receiverStatus })),
    createdAt: delivery.createdAt,
    updatedAt: delivery.updatedAt
  }
}

export const WebhookDeliveryList = pageOf(WebhookDelivery, 'Webhook deliveries', exampleDelivery)
export const DeliveryListQuery = Type.Object(pageQueryProperties, { additionalProperties: false })

export const EndpointParams = Type.Object({
  id: MerchantParams.properties.id,
  endpointId: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The endpoint id.', examples: [exampleEndpointId] })
})

export const DeliveryParams = Type.Object({
  id: MerchantParams.properties.id,
  endpointId: EndpointParams.properties.endpointId,
  deliveryId: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The delivery id.', examples: [exampleDeliveryId] })
})
