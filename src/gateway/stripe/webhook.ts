import { Type } from '@sinclair/typebox'
import type { InboundWebhook } from '../inbound'

/** Stripe's webhook, as the connector routes serve and document it: POST /connectors/{connectorId}/stripe-events. */

const StripeSignatureHeaders = Type.Object({
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

const StripeEventBody = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 255, description: 'Stripe\'s event id (`evt_…`): a redelivery carries the same id and is acted on once.' }),
  type: Type.String({ minLength: 1, maxLength: 255, description: 'The event type, e.g. `payment_intent.succeeded`, `refund.failed`.' })
}, {
  $id: 'StripeEvent',
  title: 'Stripe event',
  description: 'A Stripe Event object, exactly as Stripe sends it (other members are accepted as they are; the signature covers the raw bytes).',
  additionalProperties: true,
  examples: [exampleEvent]
})

const StripeEventReceived = Type.Object({
  received: Type.Literal(true)
}, { $id: 'StripeEventReceived', title: 'Stripe event received', additionalProperties: false, examples: [{ received: true }] })

export const stripeWebhook: InboundWebhook = {
  path: 'stripe-events',
  operationId: 'receiveStripeEvent',
  summary: 'Receive a Stripe event (Stripe\'s webhook)',
  description: 'Register this URL, with the connector account\'s id, as a webhook endpoint in the Stripe dashboard of that account, ' +
    'and put the endpoint\'s signing secret (`whsec_…`) in the account\'s `credentials.webhookSecret`. ' +
    '**No API key**: the `Stripe-Signature` header is the authentication. It is verified on the raw body with that secret and a ' +
    'tolerance of 5 minutes; an unverified event is 400 and nothing is recorded or changed. ' +
    'A verified event is recorded by its Stripe event id before it is acted on, and acted on once (a redelivery answers 200 and does nothing). ' +
    'It settles only what is still pending with us on this account: a payment, pending or waiting for its shopper (`requires_action`) (`payment_intent.succeeded`, ' +
    '`payment_intent.amount_capturable_updated` → `requires_capture`, `payment_intent.payment_failed` → `declined`, ' +
    '`payment_intent.canceled` → `declined` with `payment_voided`) and a refund (`refund.updated`, `refund.failed`, `charge.refund.updated`). ' +
    'Other events are recorded and ignored. Any 2xx tells Stripe the event arrived; anything else makes Stripe retry it.',
  headers: StripeSignatureHeaders,
  body: StripeEventBody,
  answer: { description: 'The event is verified and recorded (and acted on, once).', mediaType: 'application/json', schema: StripeEventReceived, body: { received: true } },
  refusals: {
    400: {
      description: 'The event was not verified, so nothing was recorded or changed: no such connector account, not a stripe account, ' +
        'no `webhookSecret` in its credentials, or a `Stripe-Signature` that is missing, does not match the raw body, or is older than 5 minutes ' +
        '(`type` urn:problem-type:connector-event-unverified). Also a body that is not a JSON object with `id` and `type`.',
      example: {
        type: 'urn:problem-type:connector-event-unverified',
        title: 'The connector event could not be verified.',
        detail: 'The event could not be verified: unknown connector account, no webhookSecret in its credentials, or a Stripe-Signature that is ' +
          'missing, does not match the body, or is older than 5 minutes. Nothing was recorded.'
      }
    },
    503: {
      description: 'Not acted on now; Stripe sends the event again (it retries what is not answered 2xx). The database is unavailable ' +
        '(`type` urn:problem-type:service-unavailable), or a dispute event names a payment whose charge, capture or refunds are not all recorded here yet ' +
        '(an answer lost, a refund in flight; `type` urn:problem-type:connector-event-not-matched): the recovery worker records it, and the event applies ' +
        'when it comes again. `Retry-After` says when.',
      example: {
        type: 'urn:problem-type:connector-event-not-matched',
        title: 'The connector event names a payment not matched yet.',
        detail: 'The event names a payment whose charge or capture is not recorded yet; nothing was applied. Send it again later.'
      }
    }
  }
}
