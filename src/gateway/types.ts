import type { PaymentMethodDetails } from '../domain/customers'
import type { CheckoutData, NextAction } from '../domain/payments'

/**
 * A charge authorizes the amount and, with `captureMethod` automatic (the default), captures it at
 * once; manual only authorizes it (Stripe: a confirmed PaymentIntent with capture_method=manual;
 * Adyen: /payments with a manual capture delay), and `capture` takes the money later.
 */
export interface ChargeRequest {
  /** Downstream idempotency key: the same key never charges twice. */
  idempotencyKey: string
  /** Our payment's id (Stripe: metadata.payment_id; Adyen: reference). */
  paymentId: string
  /** The connector's token for the payment method (Stripe: a PaymentMethod `pm_…`; Adyen: a storedPaymentMethodId); never a card number. */
  paymentMethod?: string
  /** The shopper the stored payment method belongs to (Adyen: shopperReference). */
  shopperReference?: string
  amountMinor: number
  /** The amount as an exact decimal string, e.g. "10.10". */
  amount: string
  currency: string
  captureMethod?: 'automatic' | 'manual'
  /**
   * Customer-present (on-session) payments only: the service's return address for this payment, to which the PSP
   * sends the shopper after authentication (Stripe: `return_url`, never `off_session`). Absent: off-session, as always.
   */
  returnUrl?: string
  /** Customer-present only: what the charge sends beside a token (Adyen: the Web Components' paymentMethod object, browserInfo, origin). */
  checkout?: CheckoutData
}

/** A charge's outcome and what the connector's answer says of the payment method (when it says). */
export type ChargeResult = ChargeOutcome & { paymentMethodDetails?: PaymentMethodDetails }

/** succeeded: authorized and captured; authorized: authorized only (manual capture), the money is held until captured or voided. */
export type ChargeOutcome =
  /**
   * `amountCapturedMinor`: what the PSP took when it is less than the amount asked (a manual authorization captured
   * in part at the PSP, e.g. in its dashboard, before we heard of the authorization); absent, all of it was taken.
   */
  | { outcome: 'succeeded', chargeId: string, amountCapturedMinor?: number }
  | { outcome: 'authorized', chargeId: string }
  | { outcome: 'declined', chargeId: string, declineCode: string }
  /** Customer-present only: the PSP waits for the shopper to authenticate at `nextAction` (3-D Secure, a bank's page). */
  | { outcome: 'requires_action', chargeId: string, nextAction: NextAction }

/**
 * Captures (part of) an authorization, once: what is not captured is released (Stripe:
 * PaymentIntent capture with amount_to_capture, always sent; Adyen: /captures, whose answer
 * `received` settles later by notification, a connector's pending outcome to be added with it).
 */
export interface CaptureRequest {
  /** Downstream idempotency key of this capture: the same key never captures twice. */
  idempotencyKey: string
  /** The downstream key the authorization was made under. */
  chargeIdempotencyKey: string
  /** The connector's id of the charge when it is recorded (Stripe: the PaymentIntent `pi_…`). */
  chargeReference?: string
  amountMinor: number
  amount: string
  currency: string
}

/**
 * captured: the gateway took `amountMinor`; failed: it refused (the authorization stays as it was);
 * received: it accepted the capture and tells its outcome later (Adyen: the CAPTURE or CAPTURE_FAILED notification).
 */
export type CaptureResult =
  | { outcome: 'captured', captureId: string, amountMinor: number }
  | { outcome: 'failed', failureCode: string }
  | { outcome: 'received', captureId: string }

/** Reads what the gateway holds under a charge's key (Stripe: retrieve the PaymentIntent), for the recovery worker. */
export interface RetrieveRequest {
  chargeIdempotencyKey: string
  /** Our payment's id: how a connector finds a charge whose reference was never recorded. */
  paymentId?: string
  /** The connector's id of the charge when it is recorded (Stripe: the PaymentIntent `pi_…`). */
  chargeReference?: string
  /** What the PSP sent back with the shopper (query or form), for a PSP that needs it to finish the payment (Adyen: redirectResult). */
  returnParams?: Readonly<Record<string, string>>
  /** The payment's capture method and amount: how a connector whose answer does not say reads an authorization (Adyen's /payments/details). */
  captureMethod?: 'automatic' | 'manual'
  amountMinor?: number
}

/**
 * none: nothing was charged under the key; authorized: held, not captured; captured: `amountCapturedMinor`
 * taken (an automatic charge or a capture); voided: released (or never made, and never to be); declined.
 */
export type ChargeState = ChargeStates & { paymentMethodDetails?: PaymentMethodDetails }

type ChargeStates =
  /** `lagMs`: found by a search that may miss charges made in the last `lagMs` (Stripe's search), so it proves nothing for a younger attempt. */
  | { state: 'none', lagMs?: number }
  | { state: 'authorized', chargeId: string, amountMinor: number }
  | { state: 'captured', chargeId: string, amountCapturedMinor: number }
  | { state: 'voided' }
  | { state: 'declined', chargeId: string, declineCode: string }
  /** Still waiting for the shopper's authentication (customer-present payments). */
  | { state: 'requires_action', chargeId: string }

export interface RefundRequest {
  /** Downstream idempotency key of the refund (derived from the refund id): the same key never refunds twice. */
  idempotencyKey: string
  /** Our refund's and payment's ids (Stripe: metadata.refund_id and payment_id), how the PSP's own events name them back. */
  refundId?: string
  paymentId?: string
  /** The downstream key the refunded charge was made under. */
  chargeIdempotencyKey: string
  /** The connector's id of the charge when it is recorded (Stripe: the PaymentIntent `pi_…`). */
  chargeReference?: string
  amountMinor: number
  amount: string
  currency: string
}

/** received: accepted, its outcome comes later (Adyen: the REFUND or REFUND_FAILED notification). */
export type RefundResult =
  | { outcome: 'succeeded', gatewayRefundId: string }
  | { outcome: 'failed', gatewayRefundId: string, failureCode: string }
  | { outcome: 'received', gatewayRefundId: string }

export interface VoidRequest {
  /** The downstream key the charge was (or would have been) made under. */
  chargeIdempotencyKey: string
  /** Our payment's id: how a connector finds a charge whose reference was never recorded. */
  paymentId?: string
  /** The connector's id of the charge when it is recorded (Stripe: the PaymentIntent `pi_…`). */
  chargeReference?: string
}

/**
 * voided: no charge exists under the key, and none will be made under it from now on; or an
 * uncaptured authorization under the key is released (Stripe: cancel the PaymentIntent);
 * charged: a charge (or a capture) went through before the void arrived (it must be refunded to give the money back);
 * `amountCapturedMinor` when it took less than the amount (an authorization captured in part at the PSP);
 * declined: the charge was declined, nothing to give back.
 */
export type VoidResult =
  | { outcome: 'voided' }
  /** Accepted; its outcome comes later (Adyen: the CANCELLATION notification). */
  | { outcome: 'received' }
  | { outcome: 'charged', chargeId: string, amountCapturedMinor?: number }
  | { outcome: 'declined', chargeId: string, declineCode: string }

export interface AcceptDisputeRequest {
  /** The PSP's id of the dispute (Stripe: `dp_…`; Adyen: the dispute's pspReference). */
  disputeReference: string
  /** Derived from our dispute's id: asking again replays the first call. */
  idempotencyKey: string
}

/**
 * accepted: the PSP closed the dispute in the cardholder's favour at our request (Stripe marks it `lost`);
 * refused: the PSP will not (closed already, past its stage), with its reason.
 */
export type AcceptDisputeResult = { outcome: 'accepted' } | { outcome: 'refused', reason: string }

/**
 * unavailable, timeout, aborted: the outcome is UNKNOWN (a 5xx, a connection dropped after the
 * request was sent, no answer in time, or this service gave up waiting on shutdown): the operation
 * may have been done, so it is resumed on the same connector under the same key, never elsewhere.
 * not_processed: the connector CERTAINLY did nothing (the connection was refused or never
 * established, or the PSP answered that it did not process the request: credentials refused, rate
 * limited, an idempotency error), so another connector may be tried.
 */
export type GatewayFailureKind = 'unavailable' | 'timeout' | 'aborted' | 'not_processed'

/** The operation failed without an answer; `kind` says whether it may have been done. */
export class GatewayError extends Error {
  /** A short machine code of the cause, recorded in a payment's attempts (e.g. connection_refused, authentication_failed, rate_limited, server_error). */
  readonly code: string
  constructor (readonly kind: GatewayFailureKind, message: string, code?: string) {
    super(message)
    this.name = 'GatewayError'
    this.code = code ?? kind
  }
}

/**
 * `signal`: when it aborts (our time-out, shutdown) the call is abandoned and its request ended, never left
 * running or retried behind our back; its outcome is then unknown (GatewayError 'aborted' or 'timeout').
 */
export interface CallOptions {
  signal?: AbortSignal
}

export interface PaymentGateway {
  /** Retrying under the same key is safe: the connector never charges twice. */
  charge: (request: ChargeRequest, options?: CallOptions) => Promise<ChargeResult>
  /** Refunds (part of) a charge; repeating it under the same key returns the first result. */
  refund: (request: RefundRequest, options?: CallOptions) => Promise<RefundResult>
  /** Cancels a charge that may or may not have been made, or releases an uncaptured authorization; idempotent. */
  void: (request: VoidRequest, options?: CallOptions) => Promise<VoidResult>
  /** Captures an authorization (manual capture); repeating it under the same key returns the first result. */
  capture: (request: CaptureRequest, options?: CallOptions) => Promise<CaptureResult>
  /** The current state of what was charged under a key (read-only). */
  retrieve: (request: RetrieveRequest, options?: CallOptions) => Promise<ChargeState>
  /** Concedes a dispute at the PSP (issue 40); absent when the connector cannot. */
  acceptDispute?: (request: AcceptDisputeRequest, options?: CallOptions) => Promise<AcceptDisputeResult>
}
