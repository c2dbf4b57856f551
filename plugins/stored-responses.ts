import { PaymentDeclinedError } from '../src/domain/errors'
import { PaymentFailedError, type Payment } from '../src/domain/payments'
import { RefundFailedError, type Refund } from '../src/domain/refunds'
import type { CaptureFailedError } from '../src/domain/captures'
import { merchantEtag, type Merchant } from '../src/domain/merchants'
import type { ResponseOrigin } from '../src/services/keys'
import type { StoredResponse } from '../src/store/types'
import type { CreatedApiKey } from '../src/services/api-keys'
import { toApiKeyResource } from '../schemas/api-keys'
import type { EndpointWithSecret } from '../src/services/webhooks'
import type { WebhookDelivery } from '../src/domain/webhooks'
import type { ReplayBatch } from '../src/store/types'
import { toDeliveryResource, toEndpointResource } from '../schemas/webhooks'
import type { ConnectorAccount } from '../src/domain/connectors'
import { toPublicConnector } from '../schemas/connectors'
import { toPublicPayment } from '../schemas/payments'
import { toPublicRefund } from '../schemas/refunds'
import type { Dispute } from '../src/domain/disputes'
import { toPublicDispute } from '../schemas/disputes'
import { MERCHANTS_PATH, toMerchantResource } from '../schemas/merchants'
import { classifyError } from './http/errors/classify-error'
import { JSON_CONTENT_TYPE } from './http/errors/envelope'
import { buildProblem, PROBLEM_CONTENT_TYPE } from './http/errors/problem'
import { INVITE_PATH, toUserResource } from '../schemas/users'
import type { InvitedUser } from '../src/services/users'

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

/** A new API key: 201 with its secret, which no cache may keep (the stored copy for replays is sealed). */
export function apiKeyCreatedResponse ({ key, secret }: CreatedApiKey): StoredResponse {
  return {
    statusCode: 201,
    headers: { 'content-type': JSON_CONTENT_TYPE, 'cache-control': 'no-store' },
    body: JSON.stringify({ ...toApiKeyResource(key), secret })
  }
}

/** An invited user with the invite link: 201 with its Location; no cache may keep it (the link is a secret). */
export function invitedUserResponse ({ user, token }: InvitedUser): StoredResponse {
  return {
    statusCode: 201,
    headers: { 'content-type': JSON_CONTENT_TYPE, 'cache-control': 'no-store', location: `${MERCHANTS_PATH}/${user.merchantId}/users/${user.id}` },
    body: JSON.stringify({ user: toUserResource(user), invite: { url: INVITE_PATH + token, expiresAt: user.inviteExpiresAt ?? '' } })
  }
}

/** A webhook endpoint with its signing secret: 201 with its Location on creation, 200 on rotation; no cache may keep it. */
export function endpointWithSecretResponse (statusCode: 200 | 201): (created: EndpointWithSecret) => StoredResponse {
  return ({ endpoint, secret }) => ({
    statusCode,
    headers: {
      'content-type': JSON_CONTENT_TYPE,
      'cache-control': 'no-store',
      ...(statusCode === 201 ? { location: `${MERCHANTS_PATH}/${endpoint.merchantId}/webhook-endpoints/${endpoint.id}` } : {})
    },
    body: JSON.stringify({ ...toEndpointResource(endpoint), secret })
  })
}

/** A delivery made due again: 202 with the delivery. */
export function deliveryRetriedResponse (delivery: WebhookDelivery): StoredResponse {
  return { statusCode: 202, headers: { 'content-type': JSON_CONTENT_TYPE }, body: JSON.stringify(toDeliveryResource(delivery)) }
}

/** A replay batch: 202 with how many deliveries it scheduled and where the next batch starts. */
export function replayBatchResponse (batch: ReplayBatch): StoredResponse {
  const body = { replayed: batch.replayed, hasMore: batch.next !== undefined, ...(batch.next !== undefined ? { nextStartingAfter: batch.next } : {}) }
  return { statusCode: 202, headers: { 'content-type': JSON_CONTENT_TYPE }, body: JSON.stringify(body) }
}

/** A new connector account: 201 with the account (credentials never; `credentialsHint` only) and its Location. */
export function connectorCreatedResponse (account: ConnectorAccount): StoredResponse {
  return {
    statusCode: 201,
    headers: { 'content-type': JSON_CONTENT_TYPE, location: `${MERCHANTS_PATH}/${account.merchantId}/connectors/${account.id}` },
    body: JSON.stringify(toPublicConnector(account))
  }
}

/** An accepted dispute: 200 with the dispute. */
export function disputeAcceptedResponse (dispute: Dispute): StoredResponse {
  return { statusCode: 200, headers: { 'content-type': JSON_CONTENT_TYPE }, body: JSON.stringify(toPublicDispute(dispute)) }
}

/** A cancel's answer: 200 with the payment, or 202 while the connector settles it (still pending or authorized). */
export function cancelResponse (payment: Payment): StoredResponse {
  const settling = payment.status === 'pending' || payment.status === 'requires_capture'
  return { statusCode: settling ? 202 : 200, headers: { 'content-type': JSON_CONTENT_TYPE }, body: JSON.stringify(toPublicPayment(payment)) }
}
