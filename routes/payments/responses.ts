import { PaymentDeclinedError } from '../../src/domain/errors'
import { fromMinorUnits } from '../../src/domain/money'
import { capturableMinor, PaymentFailedError, type Payment } from '../../src/domain/payments'
import type { CaptureFailedError } from '../../src/domain/captures'
import { RefundFailedError, type Refund } from '../../src/domain/refunds'
import type { Metadata } from '../../src/domain/metadata'
import type { Page } from '../../src/domain/pagination'
import type { RefundType } from '../../schemas/refunds'
import { exponentOf, type ResponseOrigin } from '../../src/services/payments'
import type { StoredResponse } from '../../src/store/types'
import type { PaymentType } from '../../schemas/payments'
import { classifyError } from '../../plugins/http/errors/classify-error'
import { JSON_CONTENT_TYPE } from '../../plugins/http/errors/envelope'
import { buildProblem, PROBLEM_CONTENT_TYPE } from '../../plugins/http/errors/problem'

export function toPublicPayment (payment: Payment): PaymentType {
  const publicPayment: PaymentType = {
    id: payment.id,
    status: payment.status,
    amount: fromMinorUnits(payment.amountMinor, exponentOf(payment.currency)),
    currency: payment.currency,
    amountRefunded: fromMinorUnits(payment.amountRefundedMinor, exponentOf(payment.currency)),
    captureMethod: payment.captureMethod,
    amountCaptured: fromMinorUnits(payment.amountCapturedMinor, exponentOf(payment.currency)),
    amountCapturable: fromMinorUnits(capturableMinor(payment), exponentOf(payment.currency)),
    createdAt: payment.createdAt,
    updatedAt: payment.updatedAt
  }
  if (payment.captureBefore !== null) publicPayment.captureBefore = payment.captureBefore
  if (payment.cancellationReason !== null) publicPayment.cancellationReason = payment.cancellationReason
  if (payment.declineCode !== null) publicPayment.declineCode = payment.declineCode
  if (payment.failureCode !== null) publicPayment.failureCode = payment.failureCode
  const metadata = nonEmpty(payment.metadata)
  if (metadata !== undefined) publicPayment.metadata = metadata
  return publicPayment
}

function nonEmpty (metadata: Metadata): Metadata | undefined {
  return Object.keys(metadata).length === 0 ? undefined : metadata
}

export function toPublicRefund (refund: Refund): RefundType {
  const exponent = exponentOf(refund.currency)
  return {
    id: refund.id,
    paymentId: refund.paymentId,
    amount: fromMinorUnits(refund.amountMinor, exponent),
    currency: refund.currency,
    status: refund.status,
    ...(refund.reason !== null ? { reason: refund.reason } : {}),
    ...(refund.failureCode !== null ? { failureCode: refund.failureCode } : {}),
    ...(nonEmpty(refund.metadata) !== undefined ? { metadata: refund.metadata } : {}),
    createdAt: refund.createdAt,
    updatedAt: refund.updatedAt
  }
}

export function toPage<T, R> (page: Page<T>, render: (item: T) => R): { data: R[], hasMore: boolean } {
  return { data: page.data.map(render), hasMore: page.hasMore }
}

function problemResponse (error: PaymentDeclinedError | PaymentFailedError | RefundFailedError | CaptureFailedError, origin: ResponseOrigin): StoredResponse {
  const failure = classifyError(error)
  const problem = buildProblem(failure, { instance: origin.path, traceId: origin.traceId })
  return { statusCode: failure.statusCode, headers: { 'content-type': PROBLEM_CONTENT_TYPE }, body: JSON.stringify(problem) }
}

/**
 * The response a settled refund answers with, exactly as stored for replays: 201 with the refund
 * and its Location, or the 402 refund-failed problem. `origin.path` is the refunds collection of
 * the payment (`…/{paymentId}/refunds`); the Location is built from the refund's own ids.
 */
export function renderRefund (refund: Refund, origin: ResponseOrigin): StoredResponse {
  // origin.path may be the route pattern (`…/:id/refunds`, what idempotency keys store): the
  // payment's segment is rebuilt from the refund itself.
  const refunds = `${origin.path.split('/').slice(0, -2).join('/')}/${refund.paymentId}/refunds`
  if (refund.status === 'failed') return problemResponse(new RefundFailedError(refund), { ...origin, path: refunds })
  return {
    statusCode: 201,
    headers: { 'content-type': JSON_CONTENT_TYPE, location: `${refunds}/${refund.id}` },
    body: JSON.stringify(toPublicRefund(refund))
  }
}

/**
 * The response a settled payment answers with, exactly as it is stored for replays: 201 with the
 * payment and its Location (the collection path it was posted to, plus its id), or the 402 problem.
 * The route and the recovery worker (through the payments service) both render with this.
 */
export function renderSettled (payment: Payment, origin: ResponseOrigin): StoredResponse {
  if (payment.status === 'declined') return problemResponse(new PaymentDeclinedError(payment.id, payment.declineCode ?? 'declined'), origin)
  if (payment.status === 'failed') return problemResponse(new PaymentFailedError(payment.id, payment.failureCode ?? 'failed'), origin)
  return {
    statusCode: 201,
    headers: { 'content-type': JSON_CONTENT_TYPE, location: `${origin.path}/${payment.id}` },
    body: JSON.stringify(toPublicPayment(payment))
  }
}

/** The response a capture answers with, exactly as stored for replays: 200 with the captured payment, or the 402 capture-failed problem. */
export function renderCapture (outcome: Payment | CaptureFailedError, origin: ResponseOrigin): StoredResponse {
  if (outcome instanceof Error) return problemResponse(outcome, origin)
  return { statusCode: 200, headers: { 'content-type': JSON_CONTENT_TYPE }, body: JSON.stringify(toPublicPayment(outcome)) }
}
