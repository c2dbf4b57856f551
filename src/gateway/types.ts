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

export type GatewayFailureKind = 'unavailable' | 'timeout'

/** The charge's outcome is unknown: the gateway could not be reached or did not answer in time. */
export class GatewayError extends Error {
  constructor (readonly kind: GatewayFailureKind, message: string) {
    super(message)
    this.name = 'GatewayError'
  }
}

export interface PaymentGateway {
  charge: (request: ChargeRequest) => Promise<ChargeResult>
}
