import { Type } from '@sinclair/typebox'
import { MAX_PARAM_LENGTH } from './patterns'
import { ProblemDetails, problemResponse } from './common'

/** Where connector accounts' PSP webhooks arrive. */
export const CONNECTORS_PATH = '/connectors'

const exampleConnectorId = '019ab0c2-5d1e-7f20-8a31-b4c5d6e7f809'

export const ConnectorEventParams = Type.Object({
  connectorId: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The connector account id (from `POST /merchants/{id}/connectors`).', examples: [exampleConnectorId] })
})

export const StripeSignatureHeaders = Type.Object({
  'stripe-signature': Type.Optional(Type.String({
    maxLength: 4096,
    description: 'Stripe\'s signature of the raw body (`t=<unix time>,v1=<HMAC-SHA256 hex>`), made with the webhook endpoint\'s signing secret. ' +
      'Required: without it, or when it does not match or is older than 5 minutes, the answer is 400.',
    examples: ['t=1767225600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd']
  }))
})

const exampleEvent = {
  id: 'evt_3QxEXAMPLE0001',
  object: 'event',
  api_version: '2026-10-28.endive',
  created: 1767225600,
  type: 'payment_intent.succeeded',
  livemode: false,
  data: {
    object: {
      id: 'pi_3QxEXAMPLE0001',
      object: 'payment_intent',
      amount: 1999,
      currency: 'usd',
      status: 'succeeded',
      metadata: { payment_id: '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f' }
    }
  }
}

export const StripeEventBody = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 255, description: 'Stripe\'s event id (`evt_…`): a redelivery carries the same id and is acted on once.' }),
  type: Type.String({ minLength: 1, maxLength: 255, description: 'The event type, e.g. `payment_intent.succeeded`, `refund.failed`.' })
}, {
  $id: 'StripeEvent',
  title: 'Stripe event',
  description: 'A Stripe Event object, exactly as Stripe sends it (other members are accepted as they are; the signature covers the raw bytes).',
  additionalProperties: true,
  examples: [exampleEvent]
})

export const StripeEventReceived = Type.Object({
  received: Type.Literal(true)
}, { $id: 'StripeEventReceived', title: 'Stripe event received', additionalProperties: false, examples: [{ received: true }] })

export const stripeEventUnverified = {
  ...problemResponse('The event was not verified, so nothing was recorded or changed: no such connector account, not a stripe account, ' +
    'no `webhookSecret` in its credentials, or a `Stripe-Signature` that is missing, does not match the raw body, or is older than 5 minutes ' +
    '(`type` urn:problem-type:connector-event-unverified). Also a body that is not a JSON object with `id` and `type`.'),
  content: {
    'application/problem+json': {
      schema: Type.Ref(ProblemDetails),
      example: {
        type: 'urn:problem-type:connector-event-unverified',
        title: 'The connector event could not be verified.',
        status: 400,
        detail: 'The event could not be verified: unknown connector account, no webhookSecret in its credentials, or a Stripe-Signature that is ' +
          'missing, does not match the body, or is older than 5 minutes. Nothing was recorded.',
        instance: `/connectors/${exampleConnectorId}/stripe-events`,
        traceId: '0f8fad5b-d9cb-469f-a165-70867728950e'
      }
    }
  }
}

export const stripeEventUnavailable = {
  ...problemResponse('Not acted on now; Stripe sends the event again (it retries what is not answered 2xx). The database is unavailable ' +
    '(`type` urn:problem-type:service-unavailable), or a dispute event names a payment whose charge, capture or refunds are not all recorded here yet ' +
    '(an answer lost, a refund in flight; `type` urn:problem-type:connector-event-not-matched): the recovery worker records it, and the event applies ' +
    'when it comes again. `Retry-After` says when.'),
  content: {
    'application/problem+json': {
      schema: Type.Ref(ProblemDetails),
      example: {
        type: 'urn:problem-type:connector-event-not-matched',
        title: 'The connector event names a payment not matched yet.',
        status: 503,
        detail: 'The event names a payment whose charge or capture is not recorded yet; nothing was applied. Send it again later.',
        instance: `/connectors/${exampleConnectorId}/stripe-events`,
        traceId: '0f8fad5b-d9cb-469f-a165-70867728950e'
      }
    }
  }
}

const exampleNotificationItem = {
  NotificationRequestItem: {
    eventCode: 'CAPTURE',
    success: 'true',
    pspReference: 'QFQTPCQ8HXSKGK82',
    originalReference: 'JHNB9KXM6ZSV5S22',
    merchantReference: '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f',
    merchantAccountCode: 'ExampleShopECOM',
    eventDate: '2026-01-01T12:00:00+01:00',
    amount: { value: 1999, currency: 'EUR' },
    reason: '',
    additionalData: { hmacSignature: 'kK3xm0Vq1VD0i4m9ZvGS0Dv0QF0vL5m0Bq8Pq5oVjWk=' }
  }
}

export const AdyenNotificationBody = Type.Object({
  live: Type.Optional(Type.String({ maxLength: 5, description: '`true` from Adyen\'s live platform, `false` from its test platform.', examples: ['false'] })),
  notificationItems: Type.Array(Type.Object({
    NotificationRequestItem: Type.Object({}, {
      additionalProperties: true,
      description: 'One notification: `eventCode`, `success`, `pspReference`, `originalReference` (modifications), `merchantReference`, ' +
        '`merchantAccountCode`, `amount { value, currency }`, `reason`, and `additionalData.hmacSignature` (its HMAC-SHA256 with the account\'s `hmacKey`).'
    })
  }, { additionalProperties: true }), {
    minItems: 1,
    maxItems: 100,
    description: 'The batch\'s items, each signed on its own; every one must verify, or none is recorded.'
  })
}, {
  $id: 'AdyenNotification',
  title: 'Adyen notification',
  description: 'Adyen\'s standard webhook (notification) body, exactly as Adyen sends it (other members are accepted as they are).',
  additionalProperties: true,
  examples: [{ live: 'false', notificationItems: [exampleNotificationItem] }]
})

/** What Adyen expects back from a notification endpoint: 200 with the body `[accepted]`. */
export const ADYEN_ACCEPTED = '[accepted]'

export const adyenNotificationAccepted = {
  description: 'Every item verified and recorded (and acted on, once): the body `[accepted]` that Adyen expects. ' +
    'Items naming nothing of ours (an unknown `pspReference` or `merchantReference`) are accepted too, and logged.',
  content: { 'text/plain': { schema: Type.Literal(ADYEN_ACCEPTED), example: ADYEN_ACCEPTED } }
}

export const adyenNotificationUnverified = {
  ...problemResponse('The notification was not verified, so nothing was recorded or changed: no such connector account, not an adyen account, ' +
    'no `hmacKey` in its credentials, an item that lacks a signed field, or an item whose `additionalData.hmacSignature` is missing or ' +
    'does not match (`type` urn:problem-type:adyen-notification-unverified). Adyen retries it.'),
  content: {
    'application/problem+json': {
      schema: Type.Ref(ProblemDetails),
      example: {
        type: 'urn:problem-type:adyen-notification-unverified',
        title: 'The Adyen notification could not be verified.',
        status: 401,
        detail: 'The notification could not be verified: unknown connector account, or an item whose HMAC signature is missing or does not match. ' +
          'Nothing was recorded.',
        instance: `/connectors/${exampleConnectorId}/adyen-notifications`,
        traceId: '0f8fad5b-d9cb-469f-a165-70867728950e'
      }
    }
  }
}

export const adyenNotificationInvalid = problemResponse('The body is not an Adyen notification batch (no `notificationItems` array of 1-100 items ' +
  'with a `NotificationRequestItem` each); also invalid JSON or an empty body. Nothing was recorded.')
