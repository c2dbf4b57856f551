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

/** `aborted`: this service gave up waiting (shutdown); the charge may or may not have been made. */
export type GatewayFailureKind = 'unavailable' | 'timeout' | 'aborted'

/** The charge's outcome is unknown: the gateway could not be reached or did not answer in time. */
export class GatewayError extends Error {
  constructor (readonly kind: GatewayFailureKind, message: string) {
    super(message)
    this.name = 'GatewayError'
  }
}

export interface PaymentGateway {
  /** With `signal`: when it aborts, the charge is abandoned (GatewayError 'aborted'); retrying under the same key is safe. */
  charge: (request: ChargeRequest, options?: { signal?: AbortSignal }) => Promise<ChargeResult>
}
