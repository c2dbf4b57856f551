import type { FieldErrors } from './errors'
import { decimalPlaces } from './money'
import { invalidCurrencyMessage, minorUnitsOf } from './currencies'

export const PAYMENT_STATUSES = ['pending', 'succeeded', 'declined'] as const
export type PaymentStatus = typeof PAYMENT_STATUSES[number]

/** The upper bound on an amount, in major units of any currency. */
export const MAX_PAYMENT_AMOUNT = 1_000_000_000

export interface Payment {
  id: string
  /**
   * The merchant whose key created the payment. Null only for payments created before
   * authentication existed: those belong to no merchant, so no merchant key can read them.
   */
  merchantId: string | null
  /** Integer minor units (cents for USD, yen for JPY, fils for BHD). */
  amountMinor: number
  currency: string
  status: PaymentStatus
  declineCode: string | null
  createdAt: string
  updatedAt: string
}

/** The only moves a payment may make: pending → succeeded | declined. Both are terminal. */
const allowedMoves: Record<PaymentStatus, readonly PaymentStatus[]> = {
  pending: ['succeeded', 'declined'],
  succeeded: [],
  declined: []
}

export class IllegalTransitionError extends Error {
  override name = 'IllegalTransitionError'
  constructor (readonly from: PaymentStatus, readonly to: PaymentStatus) {
    super(`a payment cannot move from ${from} to ${to}`)
  }
}

export function canTransition (from: PaymentStatus, to: PaymentStatus): boolean {
  return allowedMoves[from].includes(to)
}

/** The one function through which a payment changes status. */
export function transition (payment: Payment, to: PaymentStatus, at: string, declineCode: string | null = null): Payment {
  if (!canTransition(payment.status, to)) throw new IllegalTransitionError(payment.status, to)
  return { ...payment, status: to, declineCode: to === 'declined' ? declineCode : null, updatedAt: at }
}

/**
 * Checks what the JSON schema cannot: the currency is an active ISO 4217 code
 * and the amount has no more decimals than that currency's minor unit.
 * `writtenDecimalPlaces`: the decimals of the amount as the client wrote it, when the transport
 * knows them (a JSON literal can carry more digits than the double it is parsed into).
 */
export function validatePaymentInput (input: { amount: number, currency: string }, writtenDecimalPlaces = 0): FieldErrors {
  const errors: FieldErrors = {}
  const exponent = minorUnitsOf(input.currency)
  if (exponent === undefined) {
    errors.currency = [invalidCurrencyMessage('currency', input.currency)]
  } else if (Math.max(decimalPlaces(input.amount), writtenDecimalPlaces) > exponent) {
    errors.amount = [exponent === 0
      ? `The amount field must be a whole number for ${input.currency}, which has no minor unit.`
      : `The amount field must have at most ${exponent} decimal places for ${input.currency}.`]
  }
  return errors
}
