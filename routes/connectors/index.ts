import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { InboundReceiver } from '../../src/gateway/inbound'
import { utf8JsonParser } from '../../plugins/http/json-body'
import { publicOperation } from '../../schemas/auth'
import { jsonResponse } from '../../schemas/common'
import { merchantErrors } from '../../schemas/merchants'
import {
  ADYEN_ACCEPTED, AdyenNotificationBody, adyenNotificationAccepted, adyenNotificationInvalid, adyenNotificationUnverified,
  ConnectorEventParams, StripeEventBody, StripeEventReceived, StripeSignatureHeaders, stripeEventUnavailable, stripeEventUnverified
} from '../../schemas/connector-events'

/**
 * /connectors: the PSPs' own webhooks for connector accounts (problem documents). No API key: the PSP
 * signs each delivery, and the signature over the raw body is the authentication.
 */
const connectorEvents: FastifyPluginAsyncTypebox = async (app) => {
  // Stripe signs the exact bytes it sent: they are kept beside the parsed body (which the schema and body guard still check).
  const rawBodies = new WeakMap<FastifyRequest, Buffer>()
  const parseJson = utf8JsonParser(app)
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    rawBodies.set(request, typeof body === 'string' ? Buffer.from(body) : body)
    parseJson(request, body, done)
  })

  const receiverOf = (type: string): InboundReceiver => {
    const receiver = app.connectorEvents.get(type)
    if (receiver === undefined) throw new Error(`this instance has no ${type} connector module`)
    return receiver
  }

  app.post('/:connectorId/stripe-events', {
    config: { auth: 'public' },
    schema: {
      tags: ['connectors'],
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
      security: publicOperation,
      params: ConnectorEventParams,
      headers: StripeSignatureHeaders,
      body: Type.Ref(StripeEventBody),
      response: {
        200: jsonResponse('The event is verified and recorded (and acted on, once).', Type.Ref(StripeEventReceived)),
        400: stripeEventUnverified,
        413: merchantErrors.tooLarge,
        415: merchantErrors.createUnsupportedMediaType,
        429: merchantErrors.rateLimited,
        500: merchantErrors.internal,
        503: stripeEventUnavailable
      }
    }
  }, async (request) => {
    await receiverOf('stripe').receive(request.params.connectorId, { rawBody: rawBodies.get(request) ?? Buffer.alloc(0), body: request.body, headers: request.headers })
    return { received: true as const }
  })

  app.post('/:connectorId/adyen-notifications', {
    config: { auth: 'public' },
    schema: {
      tags: ['connectors'],
      operationId: 'receiveAdyenNotification',
      summary: 'Receive Adyen notifications (Adyen\'s standard webhook)',
      description: 'In the Adyen Customer Area, add a standard webhook (JSON) with this URL, with the connector account\'s id, and put its HMAC key ' +
        '(hex) in the account\'s `credentials.hmacKey`. **No API key**: each item\'s `additionalData.hmacSignature` is the authentication, ' +
        'verified with that key (Adyen\'s library). When any item of the batch fails, the answer is 401 and nothing is recorded or changed. ' +
        'Verified items are all recorded (by `pspReference:eventCode:success`, as Adyen repeats notifications) before any is acted on, and each is ' +
        'acted on once. They settle what is still waiting on this account: `AUTHORISATION` a pending payment (`succeeded`, or `requires_capture` ' +
        'for a manual capture; `success: false` → `declined`), `CAPTURE` the capture in progress (`succeeded`, `payment.succeeded`) and `CAPTURE_FAILED` ' +
        'its release (still `requires_capture`), `REFUND`/`REFUND_FAILED` a pending refund (`refund.succeeded`/`refund.failed`), `CANCELLATION` ' +
        '(and `CANCEL_OR_REFUND` of an uncaptured payment) an authorization or pending payment (`canceled`). Other event codes, and items naming ' +
        'nothing of ours, are recorded and ignored. The answer is `[accepted]`, which Adyen requires; anything else makes Adyen retry.',
      security: publicOperation,
      params: ConnectorEventParams,
      body: Type.Ref(AdyenNotificationBody),
      response: {
        200: adyenNotificationAccepted,
        400: adyenNotificationInvalid,
        401: adyenNotificationUnverified,
        413: merchantErrors.tooLarge,
        415: merchantErrors.createUnsupportedMediaType,
        429: merchantErrors.rateLimited,
        500: merchantErrors.internal,
        503: merchantErrors.unavailable
      }
    }
  }, async (request, reply) => {
    await receiverOf('adyen').receive(request.params.connectorId, { rawBody: rawBodies.get(request) ?? Buffer.alloc(0), body: request.body, headers: request.headers })
    return await reply.type('text/plain; charset=utf-8').send(ADYEN_ACCEPTED)
  })
}

export default connectorEvents
