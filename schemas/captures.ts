import { Type, type Static } from '@sinclair/typebox'
import { ProblemDetails } from './common'
import { amountInput } from './amounts'

const PAYMENT_ID = '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f'
const INSTANCE = `/api/payments/${PAYMENT_ID}/capture`

export const CaptureBody = Type.Object({
  amount: Type.Optional(amountInput('How much to capture, in major units, with no more decimals than the currency allows; at most ' +
    '`amountCapturable` (else 400: an authorization is captured once, so its capturable amount is its amount until then). ' +
    'Omitted: all of it. What is not captured is released. ' +
    'Simulated gateway: 3001.00 is unavailable, 3002.00 times out (captured, the answer lost), 3003.00 is refused.', { number: 7.5, string: '7.50' }))
}, { $id: 'CaptureRequest', title: 'Capture request', additionalProperties: false, examples: [{ amount: 7.5 }] })
export type CaptureBodyType = Static<typeof CaptureBody>

/** How an example payment was routed: one Stripe connector account that answered at once. */
export const routedExample = {
  paymentMethod: 'pm_card_visa',
  connector: { id: '019aa9f2-1b20-7c3d-8e4f-5a6b7c8d9e0f', type: 'stripe' },
  connectorReference: 'pi_3QJk2bLkdIwHu7ix0f7V2x9A',
  attempts: [{ connectorId: '019aa9f2-1b20-7c3d-8e4f-5a6b7c8d9e0f', connectorType: 'stripe', outcome: 'succeeded', code: null, at: '2026-01-15T09:30:00.000Z' }]
}

/** A payment charged at once through a Stripe account, as the examples show it (the list, an event's data). */
export const succeededPaymentExample = {
  id: '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f',
  status: 'succeeded',
  amount: 10.1,
  currency: 'USD',
  amountRefunded: 0,
  captureMethod: 'automatic',
  amountCaptured: 10.1,
  amountCapturable: 0,
  ...routedExample,
  createdAt: '2026-01-15T09:30:00.000Z',
  updatedAt: '2026-01-15T09:30:01.000Z'
}

/** An authorization (201 of a manual payment) and its capture (200), as examples. */
export const authorizedPaymentExample = {
  id: PAYMENT_ID,
  status: 'requires_capture',
  amount: 10.1,
  currency: 'USD',
  amountRefunded: 0,
  captureMethod: 'manual',
  amountCaptured: 0,
  amountCapturable: 10.1,
  captureBefore: '2026-01-22T09:30:00.000Z',
  ...routedExample,
  attempts: [{ ...routedExample.attempts[0], outcome: 'authorized' }],
  createdAt: '2026-01-15T09:30:00.000Z',
  updatedAt: '2026-01-15T09:30:00.000Z'
}

export const capturedPaymentExample = {
  ...authorizedPaymentExample,
  status: 'succeeded',
  amountCaptured: 7.5,
  amountCapturable: 0,
  updatedAt: '2026-01-16T14:00:00.000Z'
}

export const voidedPaymentExample = {
  ...authorizedPaymentExample,
  status: 'canceled',
  amountCapturable: 0,
  cancellationReason: 'authorization_expired',
  updatedAt: '2026-01-22T09:30:30.000Z'
}

function problemExample (description: string, example: Record<string, unknown>) {
  return { description, content: { 'application/problem+json': { schema: Type.Ref(ProblemDetails), example: { instance: INSTANCE, traceId: 'req-7f3a', ...example } } } }
}

export const captureErrors = {
  validation: problemExample('Validation failure: `errors.amount` when the amount is ≤ 0, has more decimals than the currency allows or exceeds `amountCapturable`.', {
    type: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.1',
    title: 'One or more validation errors occurred.',
    status: 400,
    detail: 'The amount field must be at most the capturable amount (10.10 USD).',
    errors: { amount: ['The amount field must be at most the capturable amount (10.10 USD).'] }
  }),
  failed: problemExample('The gateway refused the capture: urn:problem-type:capture-failed with `failureCode`. The payment still requires capture.', {
    type: 'urn:problem-type:capture-failed',
    title: 'The capture was refused.',
    status: 402,
    detail: 'The gateway refused the capture (capture_declined); the payment still requires capture.',
    paymentId: PAYMENT_ID,
    failureCode: 'capture_declined'
  }),
  notCapturable: problemExample('The payment is not `requires_capture` (automatic, already captured, canceled, expired, declined, pending), or a ' +
    'capture or a cancel of it is in flight: urn:problem-type:payment-not-capturable with `paymentStatus`. Also the Idempotency-Key problems.', {
    type: 'urn:problem-type:payment-not-capturable',
    title: 'The payment cannot be captured.',
    status: 409,
    detail: 'This payment is already captured (succeeded); an authorization is captured once.',
    paymentId: PAYMENT_ID,
    paymentStatus: 'succeeded'
  }),
  unavailable: problemExample('The gateway did not confirm the capture: the capture stays in progress (the payment `requires_capture`). ' +
    'Retry with the same Idempotency-Key after Retry-After, or let the recovery worker finish it; it is never captured twice.', {
    type: 'urn:problem-type:gateway-unavailable',
    title: 'The payment gateway is unavailable.',
    status: 503,
    detail: 'The payment gateway did not confirm the capture; the capture is in progress and the payment still requires capture. Retry with the same Idempotency-Key to resume it.',
    paymentId: PAYMENT_ID
  })
}

/** A customer-present payment whose connector waits for the shopper (201 `requires_action`), as an example. */
export const requiresActionPaymentExample = {
  ...succeededPaymentExample,
  status: 'requires_action',
  amountCaptured: 0,
  attempts: [{ ...routedExample.attempts[0], outcome: 'requires_action' }],
  returnUrl: 'https://shop.example.com/checkout/complete?order=A-1042',
  nextAction: { type: 'redirect', url: 'https://hooks.stripe.com/3d_secure_2/hosted?merchant=acct_1&payment_intent=pi_3QJk2bLkdIwHu7ix0f7V2x9A', method: 'GET' },
  updatedAt: '2026-01-15T09:30:00.000Z'
}
