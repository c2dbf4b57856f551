import { Type } from '@sinclair/typebox'
import type { InboundWebhook } from '../inbound'
import { ADYEN_NOTIFICATION_UNVERIFIED } from './notifications'

/** Adyen's standard webhook (notifications), as the connector routes serve and document it: POST /connectors/{connectorId}/adyen-notifications. */

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

const AdyenNotificationBody = Type.Object({
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
const ACCEPTED = '[accepted]'

export const adyenWebhook: InboundWebhook = {
  path: 'adyen-notifications',
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
  body: AdyenNotificationBody,
  answer: {
    description: 'Every item verified and recorded (and acted on, once): the body `[accepted]` that Adyen expects. ' +
      'Items naming nothing of ours (an unknown `pspReference` or `merchantReference`) are accepted too, and logged.',
    mediaType: 'text/plain',
    schema: Type.Literal(ACCEPTED),
    body: ACCEPTED
  },
  refusals: {
    400: {
      description: 'The body is not an Adyen notification batch (no `notificationItems` array of 1-100 items ' +
        'with a `NotificationRequestItem` each); also invalid JSON or an empty body. Nothing was recorded.'
    },
    401: {
      description: 'The notification was not verified, so nothing was recorded or changed: no such connector account, not an adyen account, ' +
        'no `hmacKey` in its credentials, an item that lacks a signed field, or an item whose `additionalData.hmacSignature` is missing or ' +
        'does not match (`type` urn:problem-type:adyen-notification-unverified). Adyen retries it.',
      example: {
        type: 'urn:problem-type:adyen-notification-unverified',
        title: 'The Adyen notification could not be verified.',
        detail: 'The notification could not be verified: unknown connector account, or an item whose HMAC signature is missing or does not match. ' +
          'Nothing was recorded.'
      }
    }
  },
  problemTypes: [{
    code: ADYEN_NOTIFICATION_UNVERIFIED,
    type: 'urn:problem-type:adyen-notification-unverified',
    title: 'The Adyen notification could not be verified.',
    component: 'AdyenNotificationUnverifiedProblem',
    description: 'An Adyen notification that could not be verified (401); nothing was recorded.'
  }]
}
