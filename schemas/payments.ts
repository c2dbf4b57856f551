import { METADATA_KEY_MAX_LENGTH, METADATA_VALUE_MAX_LENGTH } from '../src/domain/metadata'
import { MAX_PARAM_LENGTH } from './patterns'
import { amountInput } from './amounts'
import { Type, type Static } from '@sinclair/typebox'
import { ATTEMPT_OUTCOMES, PAYMENT_METHOD_KEY, CANCELLATION_REASONS, CAPTURE_METHODS, capturableMinor, MAX_PAYMENT_AMOUNT, PAYMENT_STATUSES, type Payment as StoredPayment } from '../src/domain/payments'
import { CONNECTOR_TYPES } from '../src/domain/routing'
import { exponentOf } from '../src/domain/currencies'
import { fromMinorUnits } from '../src/domain/money'
import { problemResponse } from './common'
import { Metadata, metadataMember, pageOf, pageQueryProperties } from './listing'
import { authorizedPaymentExample, capturedPaymentExample, routedExample, succeededPaymentExample, voidedPaymentExample } from './captures'
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
    'cancels it. Refunds move a payment `succeeded` → `partially_refunded` → `refunded`. ' +
    '`declined`, `failed`, `canceled` and `refunded` are terminal.'
})

export const CaptureMethod = Type.Unsafe<typeof CAPTURE_METHODS[number]>({
  type: 'string',
  enum: [...CAPTURE_METHODS],
  description: '`automatic` (default): charged at once. `manual`: only authorized (`requires_capture`); capture it later with ' +
    'POST /api/payments/{id}/capture, before `captureBefore`.',
  examples: ['manual']
})

const ConnectorType = Type.Unsafe<typeof CONNECTOR_TYPES[number]>({ type: 'string', enum: [...CONNECTOR_TYPES], description: 'The PSP.', examples: ['stripe'] })

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
  description: 'The connector the payment is on: chosen by routing when it is created, moved to the next one only after an attempt that certainly charged nothing.',
  examples: [{ id: '019aa9f2-1b20-7c3d-8e4f-5a6b7c8d9e0f', type: 'stripe' }]
})

export const PaymentAttempt = Type.Object({
  connectorId: Type.Union([Type.String({ format: 'uuid', maxLength: 36 }), Type.Null()]),
  connectorType: ConnectorType,
  outcome: Type.Unsafe<typeof ATTEMPT_OUTCOMES[number]>({
    type: 'string',
    enum: [...ATTEMPT_OUTCOMES],
    description: '`succeeded`, `authorized` or `declined`: the connector answered. `not_processed`: it certainly did nothing (refused ' +
      'connection, credentials refused, rate limited), so the next connector was tried. `unknown`: no answer (time-out, 5xx, dropped ' +
      'connection); the payment stays on this connector and is resumed there under the same idempotency key. `pending`: being asked.'
  }),
  code: Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { description: 'The decline code, or why the attempt failed (connection_refused, authentication_failed, rate_limited, timeout, server_error, …).' }),
  at: Type.String({ format: 'date-time', maxLength: 64 })
}, { title: 'Payment attempt', additionalProperties: false, examples: [{ connectorId: '019aa9f2-1b20-7c3d-8e4f-5a6b7c8d9e0f', connectorType: 'stripe', outcome: 'not_processed', code: 'connection_refused', at: '2026-01-15T09:30:00.000Z' }] })

export const Payment = Type.Object({
  id: PaymentId,
  status: PaymentStatus,
  amount: Type.Number({ description: 'The amount exactly as sent, in major units of `currency`.', examples: [10.1] }),
  currency: Type.String({ maxLength: 3, pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code.', examples: ['USD'] }),
  amountRefunded: Type.Number({ description: 'How much of `amountCaptured` succeeded refunds gave back, in major units (0 when none).', examples: [0] }),
  captureMethod: CaptureMethod,
  amountCaptured: Type.Number({ description: 'How much the gateway captured, in major units: `amount` for an automatic success, the captured part of a manual one, else 0. Refunds are bounded by it.', examples: [10.1] }),
  amountCapturable: Type.Number({ description: 'How much a capture may still take, in major units: `amount` while `requires_capture`, else 0 (a capture releases what it does not take).', examples: [0] }),
  amountCapturePending: Type.Optional(Type.Number({ description: 'Present while a capture of this amount awaits the connector\'s outcome (major units): an outage (503, resumed under the same key) or a connector that answers later (Adyen, 202).', examples: [7.5] })),
  captureBefore: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Manual capture: when the authorization expires (creation + AUTHORIZATION_TTL_SECONDS); the recovery worker then voids it.', examples: ['2026-01-22T09:30:00.000Z'] })),
  cancellationReason: Type.Optional(Type.Unsafe<typeof CANCELLATION_REASONS[number]>({ type: 'string', enum: [...CANCELLATION_REASONS], description: 'Present when `status` is `canceled`: `requested` (a cancel) or `authorization_expired` (not captured before `captureBefore`).', examples: ['requested'] })),
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
    createdAt: '2026-01-15T09:30:00.000Z',
    updatedAt: '2026-01-15T09:35:00.000Z'
  }, authorizedPaymentExample, capturedPaymentExample, voidedPaymentExample]
})
export type PaymentType = Static<typeof Payment>

/** A payment as the API shows it (responses, stored replays, event data): amounts in major units, unset codes and empty metadata omitted. */
export function toPublicPayment (payment: StoredPayment): PaymentType {
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
    ...metadataMember(payment.metadata)
  }
}

export const CreatePaymentBody = Type.Object({
  amount: amountInput(`Greater than 0 and at most ${MAX_PAYMENT_AMOUNT}, with no more decimal places than the currency's minor unit ` +
    '(USD 2, JPY 0, BHD 3, …). Simulated gateway: 2000.00–2999.99 are declined, 5001.00 is unavailable, 5002.00 times out.', { number: 10.1, string: '10.10' }),
  captureMethod: Type.Optional(CaptureMethod),
  paymentMethod: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 255,
    description: 'An id the connector understands for the payment method (Stripe: a PaymentMethod `pm_…`, e.g. `pm_card_visa` in test mode). ' +
      'Never a card number: something that looks like one (13-19 digits passing the Luhn check) is refused with 400 and not logged. ' +
      'Optional for the simulated gateway.',
    examples: ['pm_card_visa']
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
  metadata: Type.Optional(Metadata)
}, { $id: 'CreatePaymentRequest', title: 'Payment request', additionalProperties: false, examples: [{ amount: 10.1, currency: 'USD', metadata: { orderId: 'A-1042' } }] })
export type CreatePaymentBodyType = Static<typeof CreatePaymentBody>

export const PaymentParams = Type.Object({
  id: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The payment id. Anything that is not a GUID is answered 404.' })
})

export const paymentErrors = {
  validation: problemResponse('Validation failure (`errors` names each field), invalid JSON, an empty body or a malformed Idempotency-Key.'),
  declined: problemResponse('The gateway declined the charge: `type` urn:problem-type:payment-declined, with `paymentId` and `declineCode`. The payment is stored as `declined`.'),
  notFound: problemResponse('No such payment.'),
  conflict: problemResponse('Idempotency-Key reused with a different body (urn:problem-type:idempotency-key-reused) or still in flight (urn:problem-type:idempotency-key-in-use, with Retry-After); ' +
    'on create, also no connector to charge with (urn:problem-type:no-connector: the merchant has no enabled connector account and the service runs with GATEWAY=none).'),
  tooLarge: problemResponse('The body is larger than BODY_LIMIT.'),
  unsupportedMediaType: problemResponse('The body is not application/json.'),
  rateLimited: problemResponse('Too many requests from this client; see Retry-After.'),
  internal: problemResponse('Unexpected failure; the body carries only a generic title and the trace id.'),
  unavailable: problemResponse('The gateway is unavailable or timed out: the payment is stored as `pending` (outcome unknown), `paymentId` names it (urn:problem-type:gateway-unavailable); or the database is unavailable (urn:problem-type:service-unavailable). Retry with the same Idempotency-Key after Retry-After to resume it.'),
  storeUnavailable: problemResponse('The database is unavailable (restarting, unreachable, timed out, busy or out of space); nothing was lost. `Retry-After` says when to retry (with the same Idempotency-Key, if any). (urn:problem-type:service-unavailable)')
}

export const PaymentListQuery = Type.Object({
  ...pageQueryProperties,
  status: Type.Optional(PaymentStatus),
  createdGte: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Only payments created at or after this instant (ISO 8601).', examples: ['2026-01-01T00:00:00Z'] })),
  createdLt: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Only payments created before this instant (ISO 8601).', examples: ['2026-02-01T00:00:00Z'] })),
  metadataKey: Type.Optional(Type.String({
    minLength: 1, maxLength: METADATA_KEY_MAX_LENGTH, description: 'With `metadataValue`: only payments whose metadata has this key set to exactly that value (case-sensitive). One without the other is 400.', examples: ['orderId']
  })),
  metadataValue: Type.Optional(Type.String({
    maxLength: METADATA_VALUE_MAX_LENGTH, description: 'The value `metadataKey` must have (exact match).', examples: ['A-1042']
  }))
}, { additionalProperties: false })

export const PaymentList = pageOf(Payment, 'Payment list', succeededPaymentExample)
