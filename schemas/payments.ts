import { METADATA_KEY_MAX_LENGTH, METADATA_VALUE_MAX_LENGTH } from '../src/domain/metadata'
import { MAX_PARAM_LENGTH } from './patterns'
import { amountInput } from './amounts'
import { Type, type Static } from '@sinclair/typebox'
import {
  ATTEMPT_OUTCOMES, PAYMENT_METHOD_KEY, CANCELLATION_REASONS, CAPTURE_METHODS, capturableMinor, MAX_PAYMENT_AMOUNT, PAYMENT_STATUSES, RETURN_URL_MAX_LENGTH
} from '../src/domain/payments'
import type { PaymentSnapshot } from '../src/domain/event-factory'
import { ConnectorType } from './connector-types'
import { exponentOf } from '../src/domain/currencies'
import { fromMinorUnits } from '../src/domain/money'
import { problemResponse } from './common'
import { CUSTOMER_EMAIL_MAX_LENGTH, CUSTOMER_NAME_MAX_LENGTH, CUSTOMER_REFERENCE_MAX_LENGTH } from '../src/domain/customers'
import { DECIMAL_STRING_PATTERN } from '../src/domain/money'
import { Metadata, metadataMember, pageOf, pageQueryProperties } from './listing'
import { authorizedPaymentExample, capturedPaymentExample, requiresActionPaymentExample, routedExample, succeededPaymentExample, voidedPaymentExample } from './captures'
export { IdempotencyHeaders } from './common'

export const PaymentId = Type.String({
  format: 'uuid',
  maxLength: 36,
  description: 'Payment identifier: a GUID assigned by the service, time-ordered (UUIDv7, RFC 9562: its first 48 bits are ' +
    'the creation time in milliseconds, the rest random). Treat it as opaque.',
  examples: ['019aa9f2-3c41-7e2b-9d5a-4f0c6b2e8a17']
})

export const PaymentStatus = Type.Unsafe<typeof PAYMENT_STATUSES[number]>({
  type: 'string',
  enum: [...PAYMENT_STATUSES],
  description: '`pending` until the gateway answers, then `succeeded` or `declined` — or, with `captureMethod: manual`, ' +
    '`requires_capture` (authorized; the money is held until POST /api/payments/{id}/capture moves it to `succeeded`, ' +
    'or a cancel or the expiry at `captureBefore` moves it to `canceled`). A pending payment ends `failed` when the ' +
    'recovery worker gives up on it (after PENDING_PAYMENT_MAX_AGE, `failureCode` says why) or `canceled` when the merchant ' +
    'cancels it. A customer-present payment (with `returnUrl`) whose connector asks for the shopper (3-D Secure, a bank\'s page) is ' +
    '`requires_action` until the shopper comes back (or the connector tells us): then `succeeded` (`requires_capture` for a manual ' +
    'capture), `declined` (`authentication_failed`), or `canceled` (a cancel: `requested`; never finished within ACTION_TTL_SECONDS: `abandoned`). ' +
    'Refunds move a payment `succeeded` → `partially_refunded` → `refunded`. ' +
    '`declined`, `failed`, `canceled` and `refunded` are terminal.'
})

export const CaptureMethod = Type.Unsafe<typeof CAPTURE_METHODS[number]>({
  type: 'string',
  enum: [...CAPTURE_METHODS],
  description: '`automatic` (default): charged at once. `manual`: only authorized (`requires_capture`); capture it later with ' +
    'POST /api/payments/{id}/capture, before `captureBefore`.',
  examples: ['manual']
})

export const PaymentMethods = Type.Unsafe<Record<string, string>>({
  type: 'object',
  propertyNames: { pattern: PAYMENT_METHOD_KEY.source, maxLength: 36 },
  additionalProperties: { type: 'string', minLength: 1, maxLength: 255 },
  maxProperties: 10,
  description: 'Payment method tokens per connector, for a payment that may fail over between PSPs (a Stripe `pm_…` means nothing ' +
    'at Adyen): keys are connector types (`stripe`, `adyen`) or connector account ids. For a connector, its id\'s entry is used, ' +
    'else its type\'s, else `paymentMethod`; routing skips a connector that has none (attempt `skipped`, `no_payment_method`). ' +
    'Never card numbers.',
  examples: [{ stripe: 'pm_card_visa', adyen: '8415718415172204' }]
})

export const PaymentConnector = Type.Object({
  id: Type.Union([Type.String({ format: 'uuid', maxLength: 36 }), Type.Null()], {
    description: "The connector account (GET /merchants/{id}/connectors/{connectorId}); null: the service's default gateway (GATEWAY), used when the merchant has no connector account."
  }),
  type: ConnectorType
}, {
  title: 'Payment connector',
  additionalProperties: false,
  description: 'The connector the payment is on: chosen by routing when it is created, moved to the next one only after an attempt that certainly charged nothing, and never after an unknown outcome there unless that connector said it holds nothing (attempt `not_found`).',
  examples: [{ id: '019aa9f2-1b20-7c3d-8e4f-5a6b7c8d9e0f', type: 'stripe' }]
})

export const PaymentAttempt = Type.Object({
  connectorId: Type.Union([Type.String({ format: 'uuid', maxLength: 36 }), Type.Null()]),
  connectorType: ConnectorType,
  outcome: Type.Unsafe<typeof ATTEMPT_OUTCOMES[number]>({
    type: 'string',
    enum: [...ATTEMPT_OUTCOMES],
    description: '`succeeded`, `authorized` or `declined`: the connector answered. `not_processed`: it certainly did nothing (no byte of ' +
      'the request can have reached it: refused connection; or it said so: credentials refused, rate limited), so the next connector may be ' +
      'tried. `unknown`: no answer (time-out, 5xx, dropped connection): from then on the payment stays on this connector, whatever later ' +
      'attempts answer, and is resumed there under the same idempotency key. `not_found`: a lookup at that connector found nothing under ' +
      'the payment\'s key (code `lookup_none` or `lookup_voided`): only this frees the payment for another connector. `held`: the connector ' +
      'reported money for an attempt the payment had left (or for a canceled, declined or failed payment), being given back (a later `held` of ' +
      'the same charge coded `captured`, with `amountMinor`: the connector reports that authorization captured in its dashboard, and what it took ' +
      'is refunded instead); `released`: ' +
      'given back (code `refunded`, `voided`, `release_received` when the connector confirms later, or `refunded_at_connector` when refunds ' +
      'made at the connector itself, such as in its dashboard, took all of it; a release refunds only what those left); `release_refused`: the connector ' +
      'refused to give it back (code: its reason, such as `charge_disputed`), asked again later under a new key. `pending`: being asked. ' +
      '`skipped`: not asked (no payment method for it). `cancel_requested`: the payment was canceled while its outcome was unknown and ' +
      'the connector reports the cancel later (Adyen); should it find the charge captured, the charge is refunded in full.'
  }),
  code: Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { description: 'The decline code, or why the attempt failed (connection_refused, authentication_failed, rate_limited, timeout, server_error, …).' }),
  at: Type.String({ format: 'date-time', maxLength: 64 }),
  connectorReference: Type.Optional(Type.String({ maxLength: 255, description: 'The connector\'s id of the charge a `held`, `released` or `release_refused` attempt is about.' })),
  amountMinor: Type.Optional(Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, examples: [1620], description: 'On a `held` attempt coded `captured`: what the connector reports it captured of the held authorization, in minor units.' }))
}, { title: 'Payment attempt', additionalProperties: false, examples: [{ connectorId: '019aa9f2-1b20-7c3d-8e4f-5a6b7c8d9e0f', connectorType: 'stripe', outcome: 'not_processed', code: 'connection_refused', at: '2026-01-15T09:30:00.000Z' }] })

export const PaymentCustomer = Type.Object({
  email: Type.String({ format: 'email', minLength: 3, maxLength: CUSTOMER_EMAIL_MAX_LENGTH, description: 'The customer\'s email address, as sent; the list\'s `customerEmail` finds it case-insensitively.', examples: ['jane.doe@example.com'] }),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: CUSTOMER_NAME_MAX_LENGTH, description: 'The customer\'s name.', examples: ['Jane Doe'] })),
  reference: Type.Optional(Type.String({ minLength: 1, maxLength: CUSTOMER_REFERENCE_MAX_LENGTH, description: 'Your own id of the customer.', examples: ['cus-8812'] }))
}, {
  title: 'Payment customer',
  additionalProperties: false,
  description: 'Who pays, as you name them: kept with the payment and searchable, never sent to the connector.',
  examples: [{ email: 'jane.doe@example.com', name: 'Jane Doe', reference: 'cus-8812' }]
})

export const PaymentMethodDetails = Type.Object({
  type: Type.String({ maxLength: 64, pattern: '^[a-z0-9_]+$', description: '`card`, or the connector\'s name of the method.', examples: ['card'] }),
  card: Type.Optional(Type.Object({
    brand: Type.String({ maxLength: 64, pattern: '^[a-z0-9_]+$', description: 'The card network, as the connector names it (visa, mastercard, mc, amex, …).', examples: ['visa'] }),
    last4: Type.String({ maxLength: 4, pattern: '^[0-9]{4}$', description: 'The card number\'s last 4 digits (the list\'s `last4` finds it).', examples: ['4242'] }),
    expMonth: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 12, examples: [12] })),
    expYear: Type.Optional(Type.Integer({ format: 'int32', minimum: 2000, maximum: 2100, examples: [2030] })),
    country: Type.Optional(Type.String({ maxLength: 2, pattern: '^[A-Z]{2}$', description: 'The issuer\'s country (ISO 3166-1 alpha-2), when the connector says.', examples: ['US'] }))
  }, { additionalProperties: false, description: 'Present for cards: what the connector\'s answer says of the card, never more (no number, no CVC, no holder).' }))
}, {
  title: 'Payment method details',
  additionalProperties: false,
  description: 'What the connector\'s answer said of the payment method, once it answered: Stripe\'s charge `payment_method_details`, ' +
    'Adyen\'s `paymentMethod` and `additionalData` (cardSummary, expiryDate, cardIssuingCountry), the simulated gateway\'s test card. ' +
    'Absent while pending and when the connector said nothing of it.',
  examples: [{ type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030, country: 'US' } }]
})

export const NextAction = Type.Object({
  type: Type.Literal('redirect', { description: 'Send the shopper\'s browser to `url`.' }),
  url: Type.String({ format: 'uri', maxLength: 4096, description: 'Where the shopper authenticates (the PSP\'s or the bank\'s page).', examples: ['https://hooks.stripe.com/3d_secure_2/hosted?merchant=acct_1&payment_intent=pi_3QJk2b'] }),
  method: Type.Union([Type.Literal('GET'), Type.Literal('POST')], { description: '`GET`: redirect the browser to `url`. `POST`: submit a form to `url` with `data` as its fields (Adyen may ask for one).', examples: ['GET'] }),
  data: Type.Optional(Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 16384 }), { maxProperties: 50, description: 'The form fields of a `POST`.', examples: [{ PaReq: 'BQABAgA…', MD: 'M2RzMi4…' }] }))
}, {
  title: 'Next action',
  additionalProperties: false,
  description: 'Present while `status` is `requires_action`: where your checkout page sends the shopper to authenticate. The PSP then sends the ' +
    'shopper back to this service, which asks the PSP for the outcome and redirects (303) to your `returnUrl` with `paymentId` and `status` added.',
  examples: [{ type: 'redirect', url: 'https://pay.example.com/simulated-bank?key=payment-019aa9f2', method: 'GET' }]
})

/**
 * A payment method object from the shopper's browser, for a connector with the `paymentMethodObject` capability (Adyen's
 * Web Components' state.data.paymentMethod): its card fields are encrypted for that PSP alone.
 */
const PaymentMethodObject = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 64, description: 'Adyen\'s payment method type, e.g. `scheme` for cards.' })
}, {
  additionalProperties: true,
  maxProperties: 32,
  title: 'Adyen payment method',
  description: 'The `paymentMethod` object Adyen\'s Web Components produce (`state.data.paymentMethod`), passed to Adyen unchanged. Customer-present ' +
    'payments (with `returnUrl`) only. Its card fields are encrypted for Adyen (`encryptedCardNumber`, …): a card number in clear (a `number` member, or ' +
    'any value passing the card-number check) is refused with 400 and never logged. Kept only until Adyen answers, never shown.',
  examples: [{ type: 'scheme', encryptedCardNumber: 'adyenjs_0_1_25$…', encryptedExpiryMonth: 'adyenjs_0_1_25$…', encryptedExpiryYear: 'adyenjs_0_1_25$…', encryptedSecurityCode: 'adyenjs_0_1_25$…' }]
})

export const ReturnUrl = Type.String({
  minLength: 1,
  maxLength: RETURN_URL_MAX_LENGTH,
  description: 'Makes the payment **customer-present**: the shopper is at your checkout, so the connector may ask them to authenticate ' +
    '(3-D Secure, a bank redirect; Stripe: confirmed with `return_url`, never `off_session`). An absolute `https://` URL of your page ' +
    '(`http://` only for localhost, 127.0.0.1 and [::1]), at most 2,048 characters, no credentials. When the connector needs the shopper, ' +
    'the answer is 201 `requires_action` with `nextAction`; once done, the shopper lands here with `paymentId` and `status` added to the ' +
    'query (yours kept). Needs the service\'s PUBLIC_BASE_URL (else 409 public-base-url-required). Part of the Idempotency-Key fingerprint. ' +
    'Without it the payment is charged off-session, as always.',
  examples: ['https://shop.example.com/checkout/complete?order=A-1042']
})

export const Payment = Type.Object({
  id: PaymentId,
  status: PaymentStatus,
  amount: Type.Number({ description: 'The amount exactly as sent, in major units of `currency`.', examples: [10.1] }),
  currency: Type.String({ maxLength: 3, pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code.', examples: ['USD'] }),
  amountRefunded: Type.Number({ description: 'How much of `amountCaptured` succeeded refunds gave back, in major units (0 when none).', examples: [0] }),
  captureMethod: CaptureMethod,
  amountCaptured: Type.Number({ description: 'How much the gateway captured, in major units: `amount` for an automatic success, the captured part of a manual one, else 0. Refunds are bounded by it.', examples: [10.1] }),
  amountCapturable: Type.Number({ description: 'How much a capture may still take, in major units: `amount` while `requires_capture`, else 0 (a capture releases what it does not take).', examples: [0] }),
  amountDisputed: Type.Optional(Type.Number({ description: 'Present once the payment has a dispute (GET /api/disputes?paymentId=…): the money the PSP took back for its disputes and has not reinstated, in major units. `amountRefunded + amountDisputed` never exceeds `amountCaptured`; while a dispute is not `won` a refund is 409 `payment-disputed`.', examples: [10.1] })),
  amountCapturePending: Type.Optional(Type.Number({ description: 'Present while a capture of this amount awaits the connector\'s outcome (major units): an outage (503, resumed under the same key) or a connector that answers later (Adyen, 202).', examples: [7.5] })),
  captureBefore: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Manual capture: when the authorization expires (creation + AUTHORIZATION_TTL_SECONDS); the recovery worker then voids it.', examples: ['2026-01-22T09:30:00.000Z'] })),
  cancellationReason: Type.Optional(Type.Unsafe<typeof CANCELLATION_REASONS[number]>({
    type: 'string',
    enum: [...CANCELLATION_REASONS],
    description: 'Present when `status` is `canceled`: `requested` (a cancel), `authorization_expired` (not captured before `captureBefore`), ' +
    '`abandoned` (the shopper never finished authenticating) or `connector` (canceled at the PSP: Stripe\'s Dashboard, Adyen\'s Customer Area).',
    examples: ['requested']
  })),
  declineCode: Type.Optional(Type.String({ maxLength: 64, pattern: '^[a-z0-9_]+$', description: 'Present when `status` is `declined`.', examples: ['card_declined'] })),
  failureCode: Type.Optional(Type.String({
    maxLength: 64,
    pattern: '^[a-z0-9_]+$',
    description: 'Present when `status` is `failed`: `pending_expired` (no charge was made; the payment stayed pending past ' +
      'PENDING_PAYMENT_MAX_AGE) or `gateway_unreachable` (the gateway could not be asked).',
    examples: ['pending_expired']
  })),
  paymentMethod: Type.Optional(Type.String({ maxLength: 255, description: 'The payment method token the connector charged (Stripe: a PaymentMethod id).', examples: ['pm_card_visa'] })),
  paymentMethods: Type.Optional(PaymentMethods),
  shopperReference: Type.Optional(Type.String({ maxLength: 256, description: 'The shopper whose stored payment method is charged (Adyen: shopperReference).', examples: ['shopper-8812'] })),
  connector: PaymentConnector,
  connectorReference: Type.Optional(Type.String({ maxLength: 255, description: "The connector's id of the charge (Stripe: the PaymentIntent id), once it answered.", examples: ['pi_3QJk2bLkdIwHu7ix0f7V2x9A'] })),
  attempts: Type.Array(PaymentAttempt, { maxItems: 1000, description: 'What each connector asked answered, oldest first (failover shows here).' }),
  metadata: Type.Optional(Metadata),
  customer: Type.Optional(PaymentCustomer),
  paymentMethodDetails: Type.Optional(PaymentMethodDetails),
  returnUrl: Type.Optional(ReturnUrl),
  nextAction: Type.Optional(NextAction),
  createdAt: Type.String({ format: 'date-time', maxLength: 64 }),
  updatedAt: Type.String({ format: 'date-time', maxLength: 64 })
}, {
  $id: 'Payment',
  title: 'Payment',
  additionalProperties: false,
  examples: [{
    id: '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f',
    status: 'partially_refunded',
    amount: 10.1,
    currency: 'USD',
    amountRefunded: 2.5,
    captureMethod: 'automatic',
    amountCaptured: 10.1,
    amountCapturable: 0,
    ...routedExample,
    metadata: { orderId: 'A-1042' },
    customer: { email: 'jane.doe@example.com', name: 'Jane Doe', reference: 'cus-8812' },
    paymentMethodDetails: { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030, country: 'US' } },
    createdAt: '2026-01-15T09:30:00.000Z',
    updatedAt: '2026-01-15T09:35:00.000Z'
  }, authorizedPaymentExample, capturedPaymentExample, voidedPaymentExample, requiresActionPaymentExample]
})
export type PaymentType = Static<typeof Payment>

/** A payment as the API shows it (responses, stored replays, event data): amounts in major units, unset codes and empty metadata omitted. */
export function toPublicPayment (payment: PaymentSnapshot): PaymentType {
  const exponent = exponentOf(payment.currency)
  return {
    id: payment.id,
    status: payment.status,
    amount: fromMinorUnits(payment.amountMinor, exponent),
    currency: payment.currency,
    amountRefunded: fromMinorUnits(payment.amountRefundedMinor, exponent),
    captureMethod: payment.captureMethod,
    amountCaptured: fromMinorUnits(payment.amountCapturedMinor, exponent),
    amountCapturable: fromMinorUnits(capturableMinor(payment), exponent),
    ...(payment.amountDisputedMinor !== undefined ? { amountDisputed: fromMinorUnits(payment.amountDisputedMinor, exponent) } : {}),
    ...(payment.capturePendingMinor !== null ? { amountCapturePending: fromMinorUnits(payment.capturePendingMinor, exponent) } : {}),
    createdAt: payment.createdAt,
    updatedAt: payment.updatedAt,
    ...(payment.captureBefore !== null ? { captureBefore: payment.captureBefore } : {}),
    ...(payment.cancellationReason !== null ? { cancellationReason: payment.cancellationReason } : {}),
    ...(payment.declineCode !== null ? { declineCode: payment.declineCode } : {}),
    ...(payment.failureCode !== null ? { failureCode: payment.failureCode } : {}),
    ...(payment.paymentMethod !== null ? { paymentMethod: payment.paymentMethod } : {}),
    ...(Object.keys(payment.paymentMethods).length > 0 ? { paymentMethods: { ...payment.paymentMethods } } : {}),
    ...(payment.shopperReference !== null ? { shopperReference: payment.shopperReference } : {}),
    connector: { id: payment.connector.id, type: payment.connector.type },
    ...(payment.connectorReference !== null ? { connectorReference: payment.connectorReference } : {}),
    attempts: payment.attempts.map((attempt) => ({ ...attempt })),
    ...metadataMember(payment.metadata),
    ...(payment.customer !== undefined ? { customer: { ...payment.customer } } : {}),
    ...(payment.paymentMethodDetails !== undefined
      ? { paymentMethodDetails: { ...payment.paymentMethodDetails, ...(payment.paymentMethodDetails.card !== undefined ? { card: { ...payment.paymentMethodDetails.card } } : {}) } }
      : {}),
    ...(payment.returnUrl !== null ? { returnUrl: payment.returnUrl } : {}),
    ...(payment.status === 'requires_action' && payment.nextAction !== null
      ? { nextAction: { ...payment.nextAction, ...(payment.nextAction.data !== undefined ? { data: { ...payment.nextAction.data } } : {}) } }
      : {})
  }
}

export const CreatePaymentBody = Type.Object({
  amount: amountInput(`Greater than 0 and at most ${MAX_PAYMENT_AMOUNT}, with no more decimal places than the currency's minor unit ` +
    '(USD 2, JPY 0, BHD 3, …). Simulated gateway: 2000.00–2999.99 are declined, 5001.00 is unavailable, 5002.00 times out, ' +
    '6001.00 asks for the shopper\'s authentication (with `returnUrl`: `requires_action`; without: declined `authentication_required`).', { number: 10.1, string: '10.10' }),
  captureMethod: Type.Optional(CaptureMethod),
  paymentMethod: Type.Optional(Type.Union([Type.String({
    minLength: 1,
    maxLength: 255,
    description: 'An id the connector understands for the payment method (Stripe: a PaymentMethod `pm_…`, e.g. `pm_card_visa` in test mode). ' +
      'Never a card number: something that looks like one (13-19 digits passing the Luhn check) is refused with 400 and not logged. ' +
      'Optional for the simulated gateway.',
    examples: ['pm_card_visa']
  }), PaymentMethodObject], {
    description: 'A token the connector understands (Stripe: a PaymentMethod `pm_…`), or, for a customer-present Adyen payment, the ' +
      '`paymentMethod` object Adyen\'s Web Components produce (the payment then goes to an Adyen connector only).'
  })),
  paymentMethods: Type.Optional(PaymentMethods),
  shopperReference: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 256,
    description: 'The shopper whose stored payment methods are charged: Adyen needs it with a storedPaymentMethodId (`paymentMethods.adyen`).',
    examples: ['shopper-8812']
  })),
  currency: Type.String({
    minLength: 1,
    maxLength: 16,
    description: 'An active ISO 4217 code in upper case, e.g. USD, EUR, JPY, BHD.',
    examples: ['USD']
  }),
  metadata: Type.Optional(Metadata),
  customer: Type.Optional(PaymentCustomer),
  returnUrl: Type.Optional(ReturnUrl),
  browserInfo: Type.Optional(Type.Object({}, {
    additionalProperties: true,
    maxProperties: 32,
    description: 'Customer-present Adyen payments: the shopper\'s `browserInfo` as Adyen\'s Web Components give it (for 3-D Secure 2), passed on unchanged.',
    examples: [{ userAgent: 'Mozilla/5.0', acceptHeader: 'text/html', language: 'en-US', colorDepth: 24, screenHeight: 1080, screenWidth: 1920, timeZoneOffset: 0, javaEnabled: false }]
  })),
  origin: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 256,
    description: 'Customer-present Adyen payments: the origin of the page the shopper pays on (scheme, host, port), passed on as Adyen\'s `origin`.',
    examples: ['https://shop.example']
  }))
}, {
  $id: 'CreatePaymentRequest',
  title: 'Payment request',
  additionalProperties: false,
  examples: [{ amount: 10.1, currency: 'USD', metadata: { orderId: 'A-1042' }, customer: { email: 'jane.doe@example.com', name: 'Jane Doe' } }]
})
export type CreatePaymentBodyType = Static<typeof CreatePaymentBody>

export const PaymentParams = Type.Object({
  id: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The payment id. Anything that is not a GUID is answered 404.' })
})

export const paymentErrors = {
  validation: problemResponse('Validation failure (`errors` names each field), invalid JSON, an empty body or a malformed Idempotency-Key.'),
  declined: problemResponse('The gateway declined the charge: `type` urn:problem-type:payment-declined, with `paymentId` and `declineCode`. The payment is stored as `declined`.'),
  notFound: problemResponse('No such payment.'),
  conflict: problemResponse('Idempotency-Key reused with a different body (urn:problem-type:idempotency-key-reused) or still in flight (urn:problem-type:idempotency-key-in-use, with Retry-After); ' +
    'on create, also no connector to charge with (urn:problem-type:no-connector: the merchant has no enabled connector account and the service runs with GATEWAY=none), ' +
    'a customer-present payment (`returnUrl`) while the service has no PUBLIC_BASE_URL (urn:problem-type:public-base-url-required) or whose connectors ' +
    'all charge off-session only (urn:problem-type:customer-present-unsupported); nothing is stored.'),
  tooLarge: problemResponse('The body is larger than BODY_LIMIT.'),
  unsupportedMediaType: problemResponse('The body is not application/json.'),
  rateLimited: problemResponse('Too many requests from this client; see Retry-After.'),
  internal: problemResponse('Unexpected failure; the body carries only a generic title and the trace id.'),
  unavailable: problemResponse('The gateway is unavailable or timed out: the payment is stored as `pending` (outcome unknown), `paymentId` names it (urn:problem-type:gateway-unavailable); or the database is unavailable (urn:problem-type:service-unavailable). Retry with the same Idempotency-Key after Retry-After to resume it.'),
  storeUnavailable: problemResponse('The database is unavailable (restarting, unreachable, timed out, busy or out of space); nothing was lost. `Retry-After` says when to retry (with the same Idempotency-Key, if any). (urn:problem-type:service-unavailable)')
}

/** The list's filters, shared by the list and its CSV export. */
const paymentFilterProperties = {
  status: Type.Optional(PaymentStatus),
  createdGte: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Only payments created at or after this instant (ISO 8601).', examples: ['2026-01-01T00:00:00Z'] })),
  createdLt: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Only payments created before this instant (ISO 8601).', examples: ['2026-02-01T00:00:00Z'] })),
  metadataKey: Type.Optional(Type.String({
    minLength: 1, maxLength: METADATA_KEY_MAX_LENGTH, description: 'With `metadataValue`: only payments whose metadata has this key set to exactly that value (case-sensitive). One without the other is 400.', examples: ['orderId']
  })),
  metadataValue: Type.Optional(Type.String({
    maxLength: METADATA_VALUE_MAX_LENGTH, description: 'The value `metadataKey` must have (exact match).', examples: ['A-1042']
  })),
  customerEmail: Type.Optional(Type.String({
    minLength: 1, maxLength: CUSTOMER_EMAIL_MAX_LENGTH, description: 'Only payments whose `customer.email` is this address (compared trimmed and case-insensitively).', examples: ['jane.doe@example.com']
  })),
  amount: Type.Optional(Type.String({
    maxLength: 20,
    pattern: DECIMAL_STRING_PATTERN,
    description: 'Only payments of exactly this `amount`, in major units of each payment\'s own currency (`35` finds USD 35.00, JPY 35 and BHD 35.000; ' +
      '`10.5` finds no JPY payment). Greater than 0.',
    examples: ['35.00']
  })),
  last4: Type.Optional(Type.String({
    maxLength: 4, pattern: '^[0-9]{4}$', description: 'Only payments charged to a card whose number ends in these 4 digits (`paymentMethodDetails.card.last4`).', examples: ['4242']
  }))
}

export const PaymentListQuery = Type.Object({
  ...pageQueryProperties,
  ...paymentFilterProperties
}, { additionalProperties: false })

export const PaymentList = pageOf(Payment, 'Payment list', succeededPaymentExample)

export const PaymentExportQuery = Type.Object(paymentFilterProperties, { additionalProperties: false })

/** The export's columns, in order (the CSV's header). */
export const PAYMENT_CSV_HEADER = [
  'id', 'created_at', 'status', 'amount', 'currency', 'amount_captured', 'amount_refunded', 'capture_method',
  'customer_email', 'customer_name', 'customer_reference', 'payment_method_type', 'card_brand', 'card_last4', 'card_exp_month', 'card_exp_year', 'card_country',
  'connector_type', 'connector_id', 'connector_reference', 'decline_code', 'failure_code', 'metadata'
] as const

/** One payment as a CSV record, in PAYMENT_CSV_HEADER's order (amounts in major units; metadata as its JSON). */
export function paymentCsvRow (payment: PaymentType): Array<string | number | undefined> {
  const card = payment.paymentMethodDetails?.card
  return [
    payment.id, payment.createdAt, payment.status, payment.amount, payment.currency, payment.amountCaptured, payment.amountRefunded, payment.captureMethod,
    payment.customer?.email, payment.customer?.name, payment.customer?.reference, payment.paymentMethodDetails?.type,
    card?.brand, card?.last4, card?.expMonth, card?.expYear, card?.country,
    payment.connector.type, payment.connector.id ?? undefined, payment.connectorReference, payment.declineCode, payment.failureCode,
    payment.metadata === undefined ? undefined : JSON.stringify(payment.metadata)
  ]
}

const exampleCsv = `${PAYMENT_CSV_HEADER.join(',')}\r\n` +
  '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f,2026-01-15T09:30:00.000Z,succeeded,10.1,USD,10.1,0,automatic,jane.doe@example.com,Jane Doe,cus-8812,' +
  'card,visa,4242,12,2030,US,stripe,019aa9f2-1b20-7c3d-8e4f-5a6b7c8d9e0f,pi_3QJk2bLkdIwHu7ix0f7V2x9A,,,"{""orderId"":""A-1042""}"\r\n'

export const paymentExportResponse = {
  description: 'The CSV (RFC 4180: CRLF, quoted fields with doubled quotes; UTF-8) of every payment the filters select, newest first, with ' +
    'a header record. Streamed as it is read, one page at a time: any number of rows in constant memory. `Content-Disposition` names ' +
    'the file. A text cell a spreadsheet would run as a formula (starting with =, +, -, @) is prefixed with a single quote.',
  headers: { 'content-disposition': { type: 'string', maxLength: 100, description: '`attachment; filename="payments-<UTC day>.csv"`.' } },
  content: { 'text/csv': { schema: Type.String({ description: 'CSV text.' }), example: exampleCsv } }
}
