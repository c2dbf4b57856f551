import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { GatewayUnavailableError, PaymentDeclinedError } from '../domain/errors'
import { transition, type Payment } from '../domain/payments'
import { formatMinorUnits, fromMinorUnits, toMinorUnits } from '../domain/money'
import { minorUnitsOf } from '../domain/currencies'
import { GatewayError, type PaymentGateway } from '../gateway/types'
import type { Database, IdempotencyKeyRef, StoredResponse } from '../store/types'
import { classifyError } from '../http/classify-error'
import { JSON_CONTENT_TYPE } from '../http/envelope'
import { buildProblem, PROBLEM_CONTENT_TYPE, type ProblemContext } from '../http/problem'
import type { PaymentType } from '../../schemas/payments'

/** Seconds a client should wait before retrying after the gateway was unavailable. */
export const GATEWAY_RETRY_AFTER_SECONDS = 5

export interface PaymentDeps {
  db: Database
  gateway: PaymentGateway
  clock: () => number
  log: FastifyBaseLogger
}

/** A key the request owns, and the payment a previous attempt created under it (if any). */
export interface PaymentKey {
  ref: IdempotencyKeyRef
  resourceId: string | null
}

function exponentOf (currency: string): number {
  return minorUnitsOf(currency) ?? 2
}

export function toPublicPayment (payment: Payment): PaymentType {
  const publicPayment: PaymentType = {
    id: payment.id,
    status: payment.status,
    amount: fromMinorUnits(payment.amountMinor, exponentOf(payment.currency)),
    currency: payment.currency,
    createdAt: payment.createdAt,
    updatedAt: payment.updatedAt
  }
  if (payment.declineCode !== null) publicPayment.declineCode = payment.declineCode
  return publicPayment
}

export function paymentLocation (id: string): string {
  return `/api/payments/${id}`
}

/** The response a settled payment answers with, exactly as it is stored for replays. */
export function settledResponse (payment: Payment, context: ProblemContext): StoredResponse {
  if (payment.status === 'declined') {
    const problem = buildProblem(classifyError(new PaymentDeclinedError(payment.id, payment.declineCode ?? 'declined')), context)
    return { statusCode: 402, headers: { 'content-type': PROBLEM_CONTENT_TYPE }, body: JSON.stringify(problem) }
  }
  return {
    statusCode: 201,
    headers: { 'content-type': JSON_CONTENT_TYPE, location: paymentLocation(payment.id) },
    body: JSON.stringify(toPublicPayment(payment))
  }
}

export function downstreamKeyFor (paymentId: string): string {
  return `payment-${paymentId}`
}

/**
 * Creates a payment (or resumes the one an earlier attempt under the same key
 * created) and settles it with the gateway. The pending payment and the key's
 * recovery point are written in one transaction before the gateway is called.
 */
export async function createPayment (
  deps: PaymentDeps,
  input: { amount: number, currency: string },
  context: ProblemContext,
  key?: PaymentKey
): Promise<StoredResponse> {
  if (key?.resourceId != null) {
    const existing = await deps.db.payments.get(key.resourceId)
    if (existing !== undefined) return await settlePayment(deps, existing, context, key.ref)
  }
  const now = new Date(deps.clock()).toISOString()
  const payment: Payment = {
    id: randomUUID(),
    amountMinor: toMinorUnits(input.amount, exponentOf(input.currency)),
    currency: input.currency,
    status: 'pending',
    declineCode: null,
    createdAt: now,
    updatedAt: now
  }
  await deps.db.payments.create(payment, key?.ref)
  return await settlePayment(deps, payment, context, key?.ref)
}

/**
 * Charges a pending payment under its downstream key and records the outcome
 * (with the key's response, in one transaction). A settled payment just
 * answers its response. When the gateway's answer is unknown the payment stays
 * pending, the key is unlocked for a retry, and a 503 is thrown.
 */
export async function settlePayment (
  deps: PaymentDeps,
  payment: Payment,
  context: ProblemContext,
  keyRef?: IdempotencyKeyRef
): Promise<StoredResponse> {
  if (payment.status !== 'pending') {
    const response = settledResponse(payment, context)
    if (keyRef !== undefined) await deps.db.idempotency.finish(keyRef, response)
    return response
  }
  const exponent = exponentOf(payment.currency)
  let result
  try {
    result = await deps.gateway.charge({
      idempotencyKey: downstreamKeyFor(payment.id),
      amountMinor: payment.amountMinor,
      amount: formatMinorUnits(payment.amountMinor, exponent),
      currency: payment.currency
    })
  } catch (err) {
    if (keyRef !== undefined) await deps.db.idempotency.release(keyRef)
    if (err instanceof GatewayError) {
      deps.log.warn({ paymentId: payment.id, gatewayFailure: err.kind }, 'gateway failed; payment left pending')
      throw new GatewayUnavailableError(
        err.kind === 'timeout'
          ? 'The payment gateway did not answer in time; the payment is pending. Retry with the same Idempotency-Key to resume it.'
          : 'The payment gateway is unavailable; the payment is pending. Retry with the same Idempotency-Key to resume it.',
        payment.id,
        GATEWAY_RETRY_AFTER_SECONDS
      )
    }
    throw err
  }
  const at = new Date(deps.clock()).toISOString()
  const final = result.outcome === 'succeeded'
    ? transition(payment, 'succeeded', at)
    : transition(payment, 'declined', at, result.declineCode)
  const response = settledResponse(final, context)
  const stored = await deps.db.payments.complete(final, keyRef === undefined ? undefined : { ref: keyRef, response })
  return stored.status === final.status ? response : settledResponse(stored, context)
}
