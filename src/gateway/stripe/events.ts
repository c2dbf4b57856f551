import type Stripe from 'stripe'
import type * as StripeConnector from './connector'
import { fromStripeAmount } from './amounts'
import type { ChargeResult, RefundResult } from '../types'
import type { DisputeReport, DisputeStatus } from '../../domain/disputes'

const stripeConnector = (): typeof StripeConnector => require('./connector') as typeof StripeConnector

/** How old a signed event may be (Stripe's own default): an older one is refused as a possible replay. */
export const STRIPE_SIGNATURE_TOLERANCE_SECONDS = 300

/** The PaymentIntent events whose intent settles a payment still pending with us. */
const CHARGE_EVENTS = new Set(['payment_intent.succeeded', 'payment_intent.amount_capturable_updated', 'payment_intent.payment_failed', 'payment_intent.canceled'])
/** The events whose object is a Refund (charge.refund.updated carries the refund too). */
const REFUND_EVENTS = new Set(['refund.created', 'refund.updated', 'refund.failed', 'charge.refund.updated'])

/** The events whose object is a Dispute (issue 40). */
const DISPUTE_EVENTS = new Set(['charge.dispute.created', 'charge.dispute.updated', 'charge.dispute.closed', 'charge.dispute.funds_withdrawn', 'charge.dispute.funds_reinstated'])

/**
 * Stripe's dispute statuses as ours, with their stage in a dispute's life (a later stage wins whatever the order of
 * arrival): an inquiry (`warning_*`) or a chargeback needs a response, then is under review, then is closed. An inquiry
 * closed without a chargeback (`warning_closed`) cost the merchant nothing: won.
 */
export const STRIPE_DISPUTE_STATUSES: Readonly<Record<string, { status: DisputeStatus, stage: number }>> = {
  warning_needs_response: { status: 'needs_response', stage: 1 },
  needs_response: { status: 'needs_response', stage: 1 },
  warning_under_review: { status: 'under_review', stage: 2 },
  under_review: { status: 'under_review', stage: 2 },
  warning_closed: { status: 'won', stage: 3 },
  won: { status: 'won', stage: 3 },
  lost: { status: 'lost', stage: 3 }
}

/** What a verified event says about our records, in connector-neutral words. */
export type StripeEventEffect =
  /** A PaymentIntent reached an outcome: the same outcome the connector would answer when it resumed the charge. */
  /** `amountReceivedMinor`: what Stripe took of it (a capture, made here or in Stripe's Dashboard, may take less than `amountMinor`). */
  | { kind: 'charge', reference: string, paymentId: string | undefined, amountMinor: number, amountReceivedMinor: number, currency: string, result: ChargeResult }
  /** A refund reached an outcome; `refundId`/`paymentId` from its metadata (refunds made before they were sent have none). */
  | {
    kind: 'refund'
    gatewayRefundId: string
    refundId: string | undefined
    paymentId: string | undefined
    result: RefundResult
    /** The refund's PaymentIntent, amount and currency: what records a refund made at Stripe (issue 40). */
    paymentIntent: string | undefined
    amountMinor: number | undefined
    currency: string | undefined
  }
  /**
   * A charge was refunded, in full or in part (charge.refunded): what Stripe took back in all (`amountRefundedMinor`), and
   * the refunds the charge carries (API versions before 2022-11-15 list them; later ones send each as refund.* events).
   */
  | { kind: 'charge_refunded', paymentIntent: string | undefined, amountRefundedMinor: number, currency: string, refunds: Array<Extract<StripeEventEffect, { kind: 'refund' }>> }
  /** A dispute of the charge of PaymentIntent `paymentIntent` changed (charge.dispute.*). */
  | { kind: 'dispute', paymentIntent: string | undefined, report: DisputeReport }
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
  if (DISPUTE_EVENTS.has(type) && object.object === 'dispute') return disputeEffect(type, object as unknown as Stripe.Dispute)
  if (type === 'charge.refunded' && object.object === 'charge') return chargeRefundedEffect(object as unknown as Stripe.Charge)
  return { kind: 'none' }
}

function chargeRefundedEffect (charge: Stripe.Charge): StripeEventEffect {
  if (typeof charge.amount_refunded !== 'number' || typeof charge.currency !== 'string') return { kind: 'none' }
  let amountRefundedMinor: number
  try {
    amountRefundedMinor = fromStripeAmount(charge.amount_refunded, charge.currency)
  } catch {
    return { kind: 'none' }
  }
  const intent = typeof charge.payment_intent === 'string' ? charge.payment_intent : isRecord(charge.payment_intent) ? stringOr(charge.payment_intent.id) : undefined
  const listed = isRecord(charge.refunds) && Array.isArray(charge.refunds.data) ? charge.refunds.data as unknown[] : []
  // A listed refund belongs to this charge: its PaymentIntent is the charge's when the refund does not say.
  const refunds = listed.filter(isRecord).map((refund) => refundEffect(refund as unknown as Stripe.Refund))
    .filter((effect): effect is Extract<StripeEventEffect, { kind: 'refund' }> => effect.kind === 'refund')
    .map((effect) => ({ ...effect, paymentIntent: effect.paymentIntent ?? intent }))
  return { kind: 'charge_refunded', paymentIntent: intent, amountRefundedMinor, currency: charge.currency.toUpperCase(), refunds }
}

function chargeEffect (intent: Stripe.PaymentIntent): StripeEventEffect {
  if (stringOr(intent.id) === undefined || typeof intent.amount !== 'number' || typeof intent.currency !== 'string') return { kind: 'none' }
  let result: ChargeResult
  let amountMinor: number
  let amountReceivedMinor: number
  try {
    result = stripeConnector().chargeResultOf(intent)
    amountMinor = fromStripeAmount(intent.amount, intent.currency)
    amountReceivedMinor = typeof intent.amount_received === 'number' ? fromStripeAmount(intent.amount_received, intent.currency) : 0
  } catch {
    // Still processing (or any state that is not an outcome), or a currency we do not know: nothing to settle.
    return { kind: 'none' }
  }
  const metadata = isRecord(intent.metadata) ? intent.metadata : {}
  return { kind: 'charge', reference: intent.id, paymentId: stringOr(metadata.payment_id), amountMinor, amountReceivedMinor, currency: intent.currency.toUpperCase(), result }
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
  let amountMinor: number | undefined
  try {
    amountMinor = typeof refund.amount === 'number' && typeof refund.currency === 'string' ? fromStripeAmount(refund.amount, refund.currency) : undefined
  } catch {
    amountMinor = undefined
  }
  const intent = typeof refund.payment_intent === 'string' ? refund.payment_intent : isRecord(refund.payment_intent) ? stringOr(refund.payment_intent.id) : undefined
  return {
    kind: 'refund',
    gatewayRefundId: refund.id,
    refundId: stringOr(metadata.refund_id),
    paymentId: stringOr(metadata.payment_id),
    result,
    paymentIntent: intent,
    amountMinor,
    currency: typeof refund.currency === 'string' ? refund.currency.toUpperCase() : undefined
  }
}

/**
 * A Dispute as a report. Its money movements: `balance_transactions` lists the withdrawal and then the reinstatement
 * (0, 1 or 2 entries), and charge.dispute.funds_withdrawn / funds_reinstated say the same of themselves.
 */
function disputeEffect (type: string, dispute: Stripe.Dispute): StripeEventEffect {
  const mapped = STRIPE_DISPUTE_STATUSES[dispute.status]
  if (stringOr(dispute.id) === undefined || mapped === undefined || typeof dispute.amount !== 'number' || typeof dispute.currency !== 'string') return { kind: 'none' }
  let amountMinor: number
  try {
    amountMinor = fromStripeAmount(dispute.amount, dispute.currency)
  } catch {
    return { kind: 'none' }
  }
  const movements = Array.isArray(dispute.balance_transactions) ? Math.min(dispute.balance_transactions.length, 2) : 0
  const announced = type === 'charge.dispute.funds_withdrawn' ? 1 : type === 'charge.dispute.funds_reinstated' ? 2 : 0
  const dueBy = isRecord(dispute.evidence_details) && typeof dispute.evidence_details.due_by === 'number' ? new Date(dispute.evidence_details.due_by * 1000).toISOString() : null
  const intent = typeof dispute.payment_intent === 'string' ? dispute.payment_intent : isRecord(dispute.payment_intent) ? stringOr(dispute.payment_intent.id) : undefined
  return {
    kind: 'dispute',
    paymentIntent: intent,
    report: {
      connectorReference: dispute.id,
      amountMinor,
      currency: dispute.currency.toUpperCase(),
      reason: stringOr(dispute.reason) ?? null,
      status: mapped.status,
      stage: mapped.stage,
      fundsStage: Math.max(movements, announced),
      evidenceDueBy: dueBy
    }
  }
}
