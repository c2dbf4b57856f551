import { PaymentDeclinedError } from '../src/domain/errors'
import { PaymentFailedError, type Payment } from '../src/domain/payments'
import { RefundFailedError, type Refund } from '../src/domain/refunds'
import type { CaptureFailedError } from '../src/domain/captures'
import { merchantEtag, type Merchant } from '../src/domain/merchants'
import type { ResponseOrigin } from '../src/services/keys'
import type { StoredResponse } from '../src/store/types'
import { toPublicPayment } from '../schemas/payments'
import { toPublicRefund } from '../schemas/refunds'
import { MERCHANTS_PATH, toMerchantResource } from '../schemas/merchants'
import { classifyError } from './http/errors/classify-error'
import { JSON_CONTENT_TYPE } from './http/errors/envelope'
import { buildProblem, PROBLEM_CONTENT_TYPE } from './http/errors/problem'

/*
 * The responses of the creates that an Idempotency-Key replays, exactly as sent and stored: the
 * routes send them and hand them to the services with the request's key (src/services/keys.ts);
 * the recovery worker hands them over for the keys it finishes.
 */

function problemResponse (error: PaymentDeclinedError | PaymentFailedError | RefundFailedError | CaptureFailedError, origin: ResponseOrigin): StoredResponse {
  const failure = classifyError(error)
  const problem = buildProblem(failure, { instance: origin.path, traceId: origin.traceId })
  return { statusCode: failure.statusCode, headers: { 'content-type': PROBLEM_CONTENT_TYPE }, body: JSON.stringify(problem) }
}

/**
 * A settled payment: 201 with the payment and its Location (the collection path it was posted to,
 * plus its id), or the 402 problem.
 */
export function paymentResponse (payment: Payment, origin: ResponseOrigin): StoredResponse {
  if (payment.status === 'declined') return problemResponse(new PaymentDeclinedError(payment.id, payment.declineCode ?? 'declined'), origin)
  if (payment.status === 'failed') return problemResponse(new PaymentFailedError(payment.id, payment.failureCode ?? 'failed'), origin)
  return {
    statusCode: 201,
    headers: { 'content-type': JSON_CONTENT_TYPE, location: `${origin.path}/${payment.id}` },
    body: JSON.stringify(toPublicPayment(payment))
  }
}

/**
 * A settled refund: 201 with the refund and its Location, or the 402 refund-failed problem.
 * `origin.path` is the refunds collection of the payment (`…/{paymentId}/refunds`), possibly as
 * the route pattern (`…/:id/refunds`, what keys store): the payment's segment is rebuilt from the refund.
 */
export function refundResponse (refund: Refund, origin: ResponseOrigin): StoredResponse {
  const refunds = `${origin.path.split('/').slice(0, -2).join('/')}/${refund.paymentId}/refunds`
  if (refund.status === 'failed') return problemResponse(new RefundFailedError(refund), { ...origin, path: refunds })
  return {
    // 202: the connector accepted the refund and tells its outcome later (Adyen); events report it.
    statusCode: refund.status === 'pending' ? 202 : 201,
    headers: { 'content-type': JSON_CONTENT_TYPE, location: `${refunds}/${refund.id}` },
    body: JSON.stringify(toPublicRefund(refund))
  }
}

/** A capture's answer, exactly as stored for replays: 200 with the captured payment, or the 402 capture-failed problem. */
export function captureResponse (outcome: Payment | CaptureFailedError, origin: ResponseOrigin): StoredResponse {
  if (outcome instanceof Error) return problemResponse(outcome, origin)
  // 202: the connector accepted the capture and tells its outcome later (Adyen); payment.succeeded reports it.
  return { statusCode: outcome.capturePendingMinor === null ? 200 : 202, headers: { 'content-type': JSON_CONTENT_TYPE }, body: JSON.stringify(toPublicPayment(outcome)) }
}

/** A new merchant: 201 with the merchant, its Location and its ETag. */
export function merchantCreatedResponse (merchant: Merchant): StoredResponse {
  return {
    statusCode: 201,
    headers: {
      'content-type': JSON_CONTENT_TYPE,
      location: `${MERCHANTS_PATH}/${merchant.id}`,
      etag: merchantEtag(merchant)
    },
    body: JSON.stringify(toMerchantResource(merchant))
  }
}
