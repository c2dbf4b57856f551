import { DomainError, type FieldErrors } from './errors'
import { amountInMinorUnits } from './amounts'
import { refundableMinor, type Payment } from './payments'
import type { Metadata } from './metadata'

/**
 * pending: the money is held on the payment and the gateway has not answered yet;
 * succeeded: the gateway refunded it; failed: the gateway refused it (the hold is released).
 */
export const REFUND_STATUSES = ['pending', 'succeeded', 'failed'] as const
export type RefundStatus = typeof REFUND_STATUSES[number]

export const REFUND_REASON_MAX_LENGTH = 500

export interface Refund {
  id: string
  paymentId: string
  amountMinor: number
  currency: string
  status: RefundStatus
  reason: string | null
  /** Why the gateway refused the refund, when `failed`. */
  failureCode: string | null
  metadata: Metadata
  /** Issue 40: 'connector' for a refund made at the PSP (its Dashboard, Customer Area) that we recorded from its report; absent: ours ('api'). */
  origin?: 'connector'
  /** The PSP's id of a refund made there (Stripe: `re_…`; Adyen: the refund's pspReference). */
  connectorReference?: string
  createdAt: string
  updatedAt: string
}

const refundMoves: Record<RefundStatus, readonly RefundStatus[]> = {
  pending: ['succeeded', 'failed'],
  succeeded: [],
  failed: []
}

export class IllegalRefundTransitionError extends Error {
  override name = 'IllegalRefundTransitionError'
  constructor (readonly from: RefundStatus, readonly to: RefundStatus) {
    super(`a refund cannot move from ${from} to ${to}`)
  }
}

/** The one function through which a refund changes status. */
export function transitionRefund (refund: Refund, to: RefundStatus, at: string, failureCode: string | null = null): Refund {
  if (!refundMoves[refund.status].includes(to)) throw new IllegalRefundTransitionError(refund.status, to)
  return { ...refund, status: to, failureCode: to === 'failed' ? failureCode : null, updatedAt: at }
}

/**
 * The refund amount in minor units, or the field errors of the requested one:
 * no amount means everything that remains; an amount must be positive and have
 * no more decimals than the payment's currency allows.
 */
export function refundAmountMinor (payment: Payment, amount: number | undefined, writtenDecimalPlaces = 0): { amountMinor: number } | { errors: FieldErrors } {
  if (amount === undefined) return { amountMinor: refundableMinor(payment) }
  const parsed = amountInMinorUnits(payment.currency, amount, writtenDecimalPlaces)
  return 'errors' in parsed ? parsed : { amountMinor: parsed.amountMinor }
}

/**
 * The gateway refused the refund (like a declined charge): the refund is
 * stored as `failed`, the payment's money was not returned and stays refundable.
 */
export class RefundFailedError extends DomainError {
  readonly kind = 'payment_refused'
  readonly code = 'REFUND_FAILED'
  constructor (readonly refund: Refund) {
    super(`The gateway refused the refund (${refund.failureCode ?? 'refund_failed'}); the amount remains refundable.`)
    Object.assign(this.extensions, { paymentId: refund.paymentId, refundId: refund.id, failureCode: refund.failureCode })
  }
}

/** A refund made at the PSP, as its report says. */
export interface ConnectorRefundReport {
  connectorReference: string
  amountMinor: number
  currency: string
}

/** A refund's outcome as its connector reported it by itself. */
export type ConnectorRefundOutcome = { status: 'succeeded' } | { status: 'failed', failureCode: string }
