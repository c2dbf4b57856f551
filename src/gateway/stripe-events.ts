import type Stripe from 'stripe'
import type * as StripeConnector from './stripe'
import { fromStripeAmount } from './stripe-amounts'
import type { ChargeResult, RefundResult } from './types'

const stripeConnector = (): typeof StripeConnector => require('./stripe') as typeof StripeConnector

/** How old a signed event may be (Stripe's own default): an older one is refused as a possible replay. */
export const STRIPE_SIGNATURE_TOLERANCE_SECONDS = 300

/** The PaymentIntent events whose intent settles a payment still pending with us. */
const CHARGE_EVENTS = new Set(['payment_intent.succeeded', 'payment_intent.amount_capturable_updated', 'payment_intent.payment_failed', 'payment_intent.canceled'])
/** The events whose object is a Refund (charge.refund.updated carries the refund too). */
const REFUND_EVENTS = new Set(['refund.updated', 'refund.failed', 'charge.refund.updated'])

/** What a verified event says about our records, in connector-neutral words. */
export type StripeEventEffect =
  /** A PaymentIntent reached an outcome: the same outcome the connector would answer when it resumed the charge. */
  | { kind: 'charge', reference: string, paymentId: string | undefined, amountMinor: number, currency: string, result: ChargeResult }
  /** A refund reached an outcome; `refundId`/`paymentId` from its metadata (refunds made before they were sent have none). */
  | { kind: 'refund', gatewayRefundId: string, refundId: string | undefined, paymentId: string | undefined, result: RefundResult }
  | { kind: 'none' }

export interface VerifiedStripeEvent {
  id: string
  type: string
  effect: StripeEventEffect
}

/** The signature is missing, malformed, not by this secret, or too old; or the signed body is not an event. */
export class StripeEventVerificationError extends Error {
  override name = 'StripeEventVerificationError'
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const stringOr = (value: unknown): string | undefined => typeof value === 'string' && value !== '' ? value : undefined

/**
 * Verifies a Stripe webhook delivery on its raw bytes (Stripe signs the exact body) with the endpoint's
 * signing secret, at `nowMs` (the tolerance is counted from our clock), and reads what it says.
 */
export function verifyStripeEvent (rawBody: Buffer, signature: string | undefined, secret: string, nowMs: number): VerifiedStripeEvent {
  let event: unknown
  try {
    // Stripe's SDK is loaded by the first event, not at start-up (see connectors.ts).
    event = (require('stripe') as typeof Stripe).webhooks.constructEvent(rawBody, signature ?? '', secret, STRIPE_SIGNATURE_TOLERANCE_SECONDS, undefined, nowMs)
  } catch (error) {
    // The SDK's message says which check failed; it never contains the secret.
    throw new StripeEventVerificationError(error instanceof Error ? error.message.split('\n')[0] ?? 'invalid signature' : 'invalid signature')
  }
  if (!isRecord(event) || stringOr(event.id) === undefined || stringOr(event.type) === undefined) {
    throw new StripeEventVerificationError('the signed body is not a Stripe event (no id or type)')
  }
  const id = event.id as string
  const type = event.type as string
  const object = isRecord(event.data) && isRecord(event.data.object) ? event.data.object : undefined
  return { id, type, effect: object === undefined ? { kind: 'none' } : effectOf(type, object) }
}

function effectOf (type: string, object: Record<string, unknown>): StripeEventEffect {
  if (CHARGE_EVENTS.has(type) && object.object === 'payment_intent') return chargeEffect(object as unknown as Stripe.PaymentIntent)
  if (REFUND_EVENTS.has(type) && object.object === 'refund') return refundEffect(object as unknown as Stripe.Refund)
  return { kind: 'none' }
}

function chargeEffect (intent: Stripe.PaymentIntent): StripeEventEffect {
  if (stringOr(intent.id) === undefined || typeof intent.amount !== 'number' || typeof intent.currency !== 'string') return { kind: 'none' }
  let result: ChargeResult
  let amountMinor: number
  try {
    result = stripeConnector().chargeResultOf(intent)
    amountMinor = fromStripeAmount(intent.amount, intent.currency)
  } catch {
    // Still processing (or any state that is not an outcome), or a currency we do not know: nothing to settle.
    return { kind: 'none' }
  }
  const metadata = isRecord(intent.metadata) ? intent.metadata : {}
  return { kind: 'charge', reference: intent.id, paymentId: stringOr(metadata.payment_id), amountMinor, currency: intent.currency.toUpperCase(), result }
}

function refundEffect (refund: Stripe.Refund): StripeEventEffect {
  if (stringOr(refund.id) === undefined) return { kind: 'none' }
  let result: RefundResult
  try {
    result = stripeConnector().refundResultOf(refund)
  } catch {
    // pending or requires_action: not an outcome yet.
    return { kind: 'none' }
  }
  const metadata = isRecord(refund.metadata) ? refund.metadata : {}
  return { kind: 'refund', gatewayRefundId: refund.id, refundId: stringOr(metadata.refund_id), paymentId: stringOr(metadata.payment_id), result }
}
