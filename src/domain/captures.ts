import { ConflictError, DomainError, ValidationError, type FieldErrors } from './errors'
import { formatMinorUnits } from './money'
import { amountInMinorUnits } from './amounts'
import { capturableMinor, transition, type Payment, type PaymentStatus } from './payments'

/**
 * Manual capture (issue 24): an authorization (`requires_capture`) is captured once, in full or
 * in part; a partial capture releases the rest. While the gateway is asked, the capture is
 * reserved on the payment (capturePendingMinor), so a second capture is refused until the first
 * is recorded, and a retry or the recovery worker resumes it under the same downstream key.
 */

/** Why a capture is refused as a conflict with the payment's state. */
export type NotCapturableReason = 'status' | 'capture_in_flight' | 'void_in_flight' | 'expired'

export class PaymentNotCapturableError extends ConflictError {
  override readonly code = 'PAYMENT_NOT_CAPTURABLE'
  constructor (readonly paymentId: string, readonly status: PaymentStatus, reason: NotCapturableReason = 'status') {
    super(notCapturableMessage(status, reason))
    Object.assign(this.extensions, { paymentId, paymentStatus: status })
  }
}

function notCapturableMessage (status: PaymentStatus, reason: NotCapturableReason): string {
  switch (reason) {
    case 'capture_in_flight': return 'A capture of this payment is already in progress; an authorization is captured once.'
    case 'void_in_flight': return 'This authorization is being canceled; it can no longer be captured.'
    case 'expired': return 'This authorization passed its captureBefore time and can no longer be captured.'
    default: return status === 'succeeded' || status === 'partially_refunded' || status === 'refunded'
      ? `This payment is already captured (${status}); an authorization is captured once.`
      : `Only payments that require capture (status requires_capture) can be captured; this payment is ${status}.`
  }
}

/** The gateway refused the capture: the payment stays `requires_capture` (another capture may be tried before captureBefore). */
export class CaptureFailedError extends DomainError {
  readonly kind = 'payment_refused'
  readonly code = 'CAPTURE_FAILED'
  constructor (readonly paymentId: string, readonly failureCode: string) {
    super(`The gateway refused the capture (${failureCode}); the payment still requires capture.`)
    Object.assign(this.extensions, { paymentId, failureCode })
  }
}

/**
 * The capture amount in minor units, or the field errors of the requested one: no amount means
 * all that is capturable; an amount must be positive, have no more decimals than the currency
 * allows and be at most `amountCapturable` (400, not 409: an authorization's capturable amount
 * is its amount until its one capture, so a larger one is a mistake of the request, not a race).
 */
export function captureAmountMinor (payment: Payment, amount: number | undefined, writtenDecimalPlaces = 0): { amountMinor: number } | { errors: FieldErrors } {
  const capturable = capturableMinor(payment)
  if (amount === undefined) return { amountMinor: capturable }
  const parsed = amountInMinorUnits(payment.currency, amount, writtenDecimalPlaces)
  if ('errors' in parsed) return parsed
  const { amountMinor, exponent } = parsed
  if (amountMinor > capturable) {
    return { errors: { amount: [`The amount field must be at most the capturable amount (${formatMinorUnits(capturable, exponent)} ${payment.currency}).`] } }
  }
  return { amountMinor }
}

/**
 * Reserves a capture of `amount` (major units; undefined: all) on an authorization, under the
 * payment's lock: the payment with the capture in flight and its attempt counted. Throws
 * PaymentNotCapturableError (409) or ValidationError (400, `amount`).
 */
export function reserveCapture (payment: Payment, request: { amount?: number | undefined, writtenDecimalPlaces?: number | undefined, voidInFlight: boolean, now: number }, at: string): Payment {
  if (payment.status !== 'requires_capture') throw new PaymentNotCapturableError(payment.id, payment.status)
  if (payment.capturePendingMinor !== null) throw new PaymentNotCapturableError(payment.id, payment.status, 'capture_in_flight')
  if (request.voidInFlight) throw new PaymentNotCapturableError(payment.id, payment.status, 'void_in_flight')
  if (payment.captureBefore !== null && Date.parse(payment.captureBefore) <= request.now) throw new PaymentNotCapturableError(payment.id, payment.status, 'expired')
  const amount = captureAmountMinor(payment, request.amount, request.writtenDecimalPlaces)
  if ('errors' in amount) throw new ValidationError(amount.errors)
  return { ...payment, capturePendingMinor: amount.amountMinor, captureAttempts: payment.captureAttempts + 1, updatedAt: at }
}

/** The gateway captured `amountMinor`: the payment is `succeeded`; the rest of the authorization is released. */
export function applyCapture (payment: Payment, amountMinor: number, at: string): Payment {
  return transition({ ...payment, amountCapturedMinor: amountMinor, capturePendingMinor: null }, 'succeeded', at)
}

/**
 * A capture the PSP had confirmed failed later (Adyen's CAPTURE_FAILED after CAPTURE): the money was not taken after all.
 * The payment requires capture again (while its authorization lasts); undefined when money already went out of it
 * (refunds, disputes): that is for a person to resolve with the PSP.
 */
export function revertCapture (payment: Payment, at: string): Payment | undefined {
  if (payment.status !== 'succeeded' || payment.captureMethod !== 'manual' || payment.capturePendingMinor !== null) return undefined
  if (payment.amountRefundedMinor > 0 || payment.refundPendingMinor > 0 || (payment.amountDisputedMinor ?? 0) > 0) return undefined
  return transition({ ...payment, amountCapturedMinor: 0 }, 'requires_capture', at)
}

/** The gateway refused the capture: the reservation is released, the payment still requires capture. */
export function releaseCapture (payment: Payment, at: string): Payment {
  return { ...payment, capturePendingMinor: null, updatedAt: at }
}

/** The downstream key of a payment's n-th capture: the same on every retry of that capture, new for the next after a refusal. */
export function captureDownstreamKey (paymentId: string, attempt: number): string {
  return `payment-${paymentId}-capture-${attempt}`
}

/** Whether `reference` is one of this payment's capture keys (the reference Adyen's notifications name our captures by). */
export function isCaptureKeyOf (paymentId: string, reference: string): boolean {
  return reference.startsWith(`payment-${paymentId}-capture-`) && /^\d+$/.test(reference.slice(`payment-${paymentId}-capture-`.length))
}

/** What an Idempotency-Key of a capture request records as its resource: the payment's n-th capture. */
export function captureResourceId (paymentId: string, attempt: number): string {
  return `${paymentId}:capture-${attempt}`
}

/** A capture's outcome as its connector reported it by itself. */
export type ConnectorCaptureOutcome = ({ captured: true, amountMinor: number } | { captured: false, failureCode: string }) & {
  /** The reference the capture was made under when the report gives one (Adyen's merchantReference: ours are our capture keys). */
  reference?: string
}
