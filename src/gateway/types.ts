export interface ChargeRequest {
  /** Downstream idempotency key: the same key never charges twice. */
  idempotencyKey: string
  amountMinor: number
  /** The amount as an exact decimal string, e.g. "10.10". */
  amount: string
  currency: string
}

export type ChargeResult =
  | { outcome: 'succeeded', chargeId: string }
  | { outcome: 'declined', chargeId: string, declineCode: string }

export interface RefundRequest {
  /** Downstream idempotency key of the refund (derived from the refund id): the same key never refunds twice. */
  idempotencyKey: string
  /** The downstream key the refunded charge was made under. */
  chargeIdempotencyKey: string
  amountMinor: number
  amount: string
  currency: string
}

export type RefundResult =
  | { outcome: 'succeeded', gatewayRefundId: string }
  | { outcome: 'failed', gatewayRefundId: string, failureCode: string }

export interface VoidRequest {
  /** The downstream key the charge was (or would have been) made under. */
  chargeIdempotencyKey: string
}

/**
 * voided: no charge exists under the key, and none will be made under it from now on;
 * charged: a charge went through before the void arrived (it must be refunded to give the money back);
 * declined: the charge was declined, nothing to give back.
 */
export type VoidResult =
  | { outcome: 'voided' }
  | { outcome: 'charged', chargeId: string }
  | { outcome: 'declined', chargeId: string, declineCode: string }

/** `aborted`: this service gave up waiting (shutdown); the charge may or may not have been made. */
export type GatewayFailureKind = 'unavailable' | 'timeout' | 'aborted'

/** The operation's outcome is unknown: the gateway could not be reached or did not answer in time. */
export class GatewayError extends Error {
  constructor (readonly kind: GatewayFailureKind, message: string) {
    super(message)
    this.name = 'GatewayError'
  }
}

export interface PaymentGateway {
  /** With `signal`: when it aborts, the charge is abandoned (GatewayError 'aborted'); retrying under the same key is safe. */
  charge: (request: ChargeRequest, options?: { signal?: AbortSignal }) => Promise<ChargeResult>
  /** Refunds (part of) a charge; repeating it under the same key returns the first result. */
  refund: (request: RefundRequest) => Promise<RefundResult>
  /** Cancels a charge that may or may not have been made; idempotent. */
  void: (request: VoidRequest) => Promise<VoidResult>
}
