import { ConflictError, DomainError, type FieldErrors } from './errors'
import { decimalPlaces, formatMinorUnits, fromMinorUnits } from './money'
import { invalidCurrencyMessage, minorUnitsOf } from './currencies'
import type { Metadata } from './metadata'
import type { ConnectorRef } from './routing'
import type { Customer, PaymentMethodDetails } from './customers'

export const PAYMENT_STATUSES = ['pending', 'requires_action', 'requires_capture', 'succeeded', 'declined', 'failed', 'canceled', 'partially_refunded', 'refunded'] as const
export type PaymentStatus = typeof PAYMENT_STATUSES[number]

/** automatic: the gateway captures when it authorizes; manual: it only authorizes, and a capture request takes the money later. */
export const CAPTURE_METHODS = ['automatic', 'manual'] as const
export type CaptureMethod = typeof CAPTURE_METHODS[number]

/**
 * Why a payment ended `canceled`: the merchant asked, its authorization passed `captureBefore`, or the shopper
 * never finished the authentication the connector asked for (`requires_action` past ACTION_TTL_SECONDS), or someone
 * canceled it at the PSP (Stripe's Dashboard, Adyen's Customer Area: `connector`, issue 40).
 */
export const CANCELLATION_REASONS = ['requested', 'authorization_expired', 'abandoned', 'connector'] as const
export type CancellationReason = typeof CANCELLATION_REASONS[number]

/** How long an authorization may wait for its capture by default: 7 days, as card networks and Stripe. */
export const DEFAULT_AUTHORIZATION_TTL_SECONDS = 604_800

/** The instance's default gateway (GATEWAY), on which payments made before connector accounts existed were charged. */
export const DEFAULT_CONNECTOR: ConnectorRef = { id: null, type: 'simulated' }

/** How long a customer-present payment may wait for the shopper (`requires_action`) by default: an hour. */
export const DEFAULT_ACTION_TTL_SECONDS = 3600

/** The decline code of a payment whose shopper failed (or refused) the authentication the connector asked for. */
export const AUTHENTICATION_FAILED = 'authentication_failed'

/**
 * Where the merchant's page sends the shopper to authenticate (3-D Secure, a bank's page): a GET of `url`, or a
 * form POST of `data` to it (Adyen may ask for one).
 */
export interface NextAction {
  type: 'redirect'
  url: string
  method: 'GET' | 'POST'
  data?: Readonly<Record<string, string>>
}

/**
 * What a customer-present charge sends beside the token (Adyen's Checkout: the `paymentMethod` object its Web
 * Components produce, with encrypted card fields; the shopper's `browserInfo` and the page's `origin` for 3-D
 * Secure), kept only while the payment is pending so a lost answer can be asked again under the same key; erased
 * (never rendered) once the PSP answered. Never a card number: validatePaymentInput refuses one.
 */
export interface CheckoutData {
  paymentMethod?: Readonly<Record<string, unknown>>
  browserInfo?: Readonly<Record<string, unknown>>
  origin?: string
}

/** Most characters of a returnUrl. */
export const RETURN_URL_MAX_LENGTH = 2048

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * What is wrong with a customer-present payment's `returnUrl`, or undefined when it is fine: an absolute
 * `https://` URL (`http://` only for localhost, 127.0.0.1 and [::1]), at most 2,048 characters, without credentials.
 */
export function returnUrlProblem (value: string): string | undefined {
  if (value.length > RETURN_URL_MAX_LENGTH) return `The returnUrl field must be at most ${RETURN_URL_MAX_LENGTH} characters.`
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'The returnUrl field must be an absolute URL (https://…).'
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    return 'The returnUrl field must be an https:// URL (http:// only for localhost, 127.0.0.1 and [::1]).'
  }
  if (url.username !== '' || url.password !== '') return 'The returnUrl field must not carry credentials (user:password@).'
  return undefined
}

/**
 * The merchant's returnUrl with the payment's id and status added as query parameters (its own query kept):
 * where the return endpoint sends the shopper back.
 */
export function merchantReturnUrl (payment: Pick<Payment, 'id' | 'status' | 'returnUrl'>): string {
  const url = new URL(payment.returnUrl ?? '')
  url.searchParams.set('paymentId', payment.id)
  url.searchParams.set('status', payment.status)
  return url.toString()
}

/** A customer-present payment (with returnUrl) when the service has no PUBLIC_BASE_URL for the PSP to send the shopper back to. */
export class PublicBaseUrlRequiredError extends ConflictError {
  override readonly code = 'PUBLIC_BASE_URL_REQUIRED'
  constructor () {
    super('Customer-present payments (with returnUrl) need this service\'s PUBLIC_BASE_URL, the address at which shoppers\' browsers ' +
      'reach it: the PSP sends the shopper back there. It is not set; nothing was stored.')
  }
}

/** A customer-present payment whose connectors cannot take one (they charge off-session only). */
export class CustomerPresentUnsupportedError extends ConflictError {
  override readonly code = 'CUSTOMER_PRESENT_UNSUPPORTED'
  constructor (types: readonly string[], capable: readonly string[]) {
    super(`None of your connectors can take a customer-present payment (returnUrl) yet: ${types.join(', ')} charge off-session only. ` +
      `Send the payment without returnUrl, or route it to a connector that can (${capable.join(', ')}).`)
  }
}

/** What routing asks of a connector type (its module's capabilities, src/gateway/connector.ts). */
export interface PaymentMethodCapabilities {
  /** Takes a payment method object (Adyen's Web Components' `paymentMethod`) instead of a token. */
  paymentMethodObject: boolean
  /** Charges a payment method token: a payment without one for it skips it. */
  needsPaymentMethod: boolean
}

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
  /** Why a payment ended `failed` (e.g. `pending_expired`), else null. */
  failureCode: string | null
  /** Minor units refunded by succeeded refunds. */
  amountRefundedMinor: number
  /** Minor units held by refunds still pending at the gateway (they count against the remaining amount). */
  refundPendingMinor: number
  captureMethod: CaptureMethod
  /** Minor units the gateway captured: the amount of an automatic success, the captured part of a manual one, else 0. Refunds are bounded by it. */
  amountCapturedMinor: number
  /** Minor units of a capture asked of the gateway whose outcome is not recorded yet; null when no capture is in flight. */
  capturePendingMinor: number | null
  /** Captures asked of the gateway so far (each under its own downstream key, derived from the payment and this number). */
  captureAttempts: number
  /** Manual capture: when the authorization expires (creation + AUTHORIZATION_TTL_SECONDS); null for automatic capture. */
  captureBefore: string | null
  cancellationReason: CancellationReason | null
  /** The connector's token for the payment method (Stripe: `pm_…`); null for the simulated gateway's payments without one. */
  paymentMethod: string | null
  /**
   * Payment methods per connector, keyed by connector account id or by connector type: a PSP's token
   * means nothing at another PSP. For a connector, its id's entry wins, then its type's, then `paymentMethod`.
   */
  paymentMethods: Readonly<Record<string, string>>
  /** The shopper whose stored payment method is charged (Adyen: shopperReference). */
  shopperReference: string | null
  /**
   * The connector the payment is on: routed when it is created, moved to another only when no attempt pins it
   * (see pinnedConnector); disabled or deleted accounts keep it.
   */
  connector: ConnectorRef
  /** The connector's id of the charge (Stripe: the PaymentIntent `pi_…`), once it answered. */
  connectorReference: string | null
  /** What each connector asked answered, oldest first. */
  attempts: PaymentAttempt[]
  metadata: Metadata
  /** Who pays, as the merchant named them (issue 44). */
  customer?: Customer
  /** Customer-present payments: where the shopper is sent back once the connector's authentication is done; null: off-session. */
  returnUrl: string | null
  /** The unguessable token of the payment's return address on this service (never the payment id); null: off-session. */
  actionToken: string | null
  /** Where the shopper must go to authenticate, while `requires_action`. */
  nextAction: NextAction | null
  /** Customer-present payments, while pending only: what the charge sends beside a token (see CheckoutData). */
  checkoutData?: CheckoutData
  /** What the connector's answer says of the payment method (type, card brand, last 4, expiry, country); never more. */
  paymentMethodDetails?: PaymentMethodDetails
  /**
   * Minor units the PSP took back for disputes and has not reinstated (issue 40); absent while the payment never had a
   * dispute. refunded + disputed never exceed captured (a CHECK in both databases).
   */
  amountDisputedMinor?: number
  /** True while a dispute of the payment is not `won`: a refund is refused (PaymentDisputedError). */
  disputeOpen?: boolean
  createdAt: string
  updatedAt: string
}

/**
 * One charge asked of a connector, or what the connector later said of it:
 * - `pending` while it is being asked (written before the call when the payment moves to another connector);
 * - `succeeded`, `authorized`, `declined`: the connector's answer;
 * - `requires_action`: the connector waits for the shopper to authenticate: it holds the payment, which stays pinned to it;
 * - `unknown`: no answer, the charge may have been made: the payment is pinned to that connector;
 * - `not_processed`: certainly nothing was done (no byte reached the connector, or it said so);
 * - `skipped`: not asked, the payment has no method the connector can use (code `no_payment_method`);
 * - `not_found`: a lookup at the connector found nothing under our key after an unknown outcome (code
 *   `lookup_none`): only this releases the pin;
 * - `held`: the connector reported money taken for an attempt the payment had left (or for a payment held as
 *   canceled or declined) and giving it back is not confirmed yet; `released`: it was given back (code
 *   `refunded`, `voided`, `release_received` when the connector confirms later, or `refunded_at_connector` when
 *   refunds made at the connector itself took all of it: a release refunds only what they left); `release_refused`: the
 *   connector refused to give it back (code: its reason, such as `charge_disputed`): the money stays `held` and
 *   the release is asked again later under a new key derived from the number of refusals;
 * - `cancel_requested`: the merchant canceled the payment while its outcome was unknown and the connector accepted
 *   the cancel, whose outcome it reports later (Adyen): should it report the cancel impossible because the charge
 *   was captured, the charge is refunded in full (code `requested`).
 */
export const ATTEMPT_OUTCOMES = ['pending', 'requires_action', 'succeeded', 'authorized', 'declined', 'not_processed', 'skipped', 'unknown', 'not_found', 'held', 'released', 'release_refused', 'cancel_requested'] as const
export type AttemptOutcome = typeof ATTEMPT_OUTCOMES[number]

export interface PaymentAttempt {
  connectorId: string | null
  connectorType: ConnectorRef['type']
  outcome: AttemptOutcome
  /** The decline code, or the failure's code (connection_refused, authentication_failed, timeout, …). */
  code: string | null
  at: string
  /** The connector's id of the charge this attempt is about, when it differs from the payment's own (held and released money). */
  connectorReference?: string
  /**
   * On a `held` attempt coded `captured`: what the connector reports it took of a held authorization captured at the
   * connector itself (its dashboard), which the release refunds instead of the payment's amount.
   */
  amountMinor?: number
}

/** Outcomes after which the charge may exist at the connector although we hold no answer for it. */
const MAY_HAVE_CHARGED: ReadonlySet<AttemptOutcome> = new Set(['pending', 'unknown', 'requires_action'])

function isSameConnector (attempt: PaymentAttempt, connector: ConnectorRef | Pick<PaymentAttempt, 'connectorId' | 'connectorType'>): boolean {
  return 'connectorId' in connector
    ? attempt.connectorId === connector.connectorId && attempt.connectorType === connector.connectorType
    : attempt.connectorId === connector.id && attempt.connectorType === connector.type
}

/**
 * The connector the payment must stay on, or undefined when routing may choose any. The rule: once any
 * attempt's outcome is unknown (or its call was cut short, `pending`), the payment stays on that connector,
 * whatever later attempts answered, until a lookup there found nothing under our key (`not_found`). A payment
 * never asked yet stays on the connector it was routed to (a crash may have cut its first call short).
 */
export function pinnedConnector (payment: Pick<Payment, 'attempts' | 'connector'>): ConnectorRef | undefined {
  const { attempts } = payment
  if (attempts.length === 0) return payment.connector
  for (const [index, attempt] of attempts.entries()) {
    if (!MAY_HAVE_CHARGED.has(attempt.outcome)) continue
    const released = attempts.slice(index + 1).some((later) => later.outcome === 'not_found' && isSameConnector(later, attempt))
    if (!released) return { id: attempt.connectorId, type: attempt.connectorType }
  }
  return undefined
}

/** True while the payment must stay on a connector (see pinnedConnector). */
export function isPinnedToConnector (payment: Pick<Payment, 'attempts' | 'connector'>): boolean {
  return pinnedConnector(payment) !== undefined
}

/** The time of the attempt that pins the payment to `connector` (the first unknown one not released), if any. */
export function pinnedSince (payment: Pick<Payment, 'attempts'>, connector: ConnectorRef): string | undefined {
  const { attempts } = payment
  for (const [index, attempt] of attempts.entries()) {
    if (!MAY_HAVE_CHARGED.has(attempt.outcome) || !isSameConnector(attempt, connector)) continue
    if (!attempts.slice(index + 1).some((later) => later.outcome === 'not_found' && isSameConnector(later, attempt))) return attempt.at
  }
  return undefined
}

/**
 * The `held` attempts whose money was not given back yet (no `released` attempt for the same connector and charge),
 * one per charge: the first (a later `held` of the same charge, coded `captured`, says what became of its money).
 */
export function moneyHeldBy (attempts: readonly PaymentAttempt[]): PaymentAttempt[] {
  return attempts.filter((attempt, index) => attempt.outcome === 'held' && !isReleased(attempts, attempt) &&
    !attempts.slice(0, index).some((earlier) => earlier.outcome === 'held' && earlier.connectorReference === attempt.connectorReference && isSameConnector(earlier, attempt)))
}

/** What the connector reported it captured at its dashboard of a held authorization (`held`, `captured`), the last report; undefined: none. */
export function heldCaptureOf (attempts: readonly PaymentAttempt[], held: Pick<PaymentAttempt, 'connectorId' | 'connectorType' | 'connectorReference'>): number | undefined {
  return attempts.findLast((attempt) => attempt.outcome === 'held' && attempt.code === HELD_CAPTURED && attempt.amountMinor !== undefined &&
    attempt.connectorReference === held.connectorReference && isSameConnector(attempt, held))?.amountMinor
}

/** The code of a `held` attempt recording a capture made at the connector of a held authorization. */
export const HELD_CAPTURED = 'captured'

/**
 * True when the last release outcome of `held`'s charge is `released`. A `release_refused` after a `released` means the
 * release was undone: an authorization's cancel was received, then refused because the charge was captured meanwhile,
 * and the refund asked instead was refused too, so the money is held again.
 */
export function isReleased (attempts: readonly PaymentAttempt[], held: PaymentAttempt): boolean {
  const last = attempts.filter((later) => (later.outcome === 'released' || later.outcome === 'release_refused') &&
    later.connectorReference === held.connectorReference && isSameConnector(later, held)).at(-1)
  return last?.outcome === 'released'
}

/** True when an attempt of the payment was made on `connector` (any outcome but skipped: it was asked). */
export function wasAskedOf (payment: Pick<Payment, 'attempts'>, connector: ConnectorRef): boolean {
  return payment.attempts.some((attempt) => attempt.outcome !== 'skipped' && attempt.outcome !== 'cancel_requested' && isSameConnector(attempt, connector))
}

/** True when the merchant canceled the payment while its outcome was unknown and the connector reports the cancel later. */
export function isCancelRequested (payment: Pick<Payment, 'attempts'>): boolean {
  return payment.attempts.some((attempt) => attempt.outcome === 'cancel_requested')
}

/** A key of `paymentMethods`: a connector type or a connector account id. */
export const PAYMENT_METHOD_KEY = /^(?:[a-z]{1,32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/

/**
 * The payment method a connector is asked to charge: the entry for its account id, else for its type,
 * else `paymentMethod`. `null`: the payment has none it can use (the connector is skipped);
 * undefined: the connector needs none (the simulated gateway).
 */
export function paymentMethodFor (
  payment: Pick<Payment, 'paymentMethod' | 'paymentMethods' | 'checkoutData'>, connector: ConnectorRef, can: PaymentMethodCapabilities
): string | null | undefined {
  // A payment method object (Adyen's Web Components) is that PSP's alone: charged there, never a token elsewhere.
  if (payment.checkoutData?.paymentMethod !== undefined) return can.paymentMethodObject ? undefined : null
  const method = (connector.id !== null ? payment.paymentMethods[connector.id] : undefined) ?? payment.paymentMethods[connector.type] ?? payment.paymentMethod ?? undefined
  if (method !== undefined) return method
  return can.needsPaymentMethod ? null : undefined
}

/** The attempts with this one's outcome: it replaces the pending attempt on the same connector, else it is added. */
export function withAttempt (payment: Payment, attempt: PaymentAttempt): PaymentAttempt[] {
  const last = payment.attempts.at(-1)
  const sameConnector = last !== undefined && last.outcome === 'pending' && last.connectorId === attempt.connectorId && last.connectorType === attempt.connectorType
  return sameConnector ? [...payment.attempts.slice(0, -1), attempt] : [...payment.attempts, attempt]
}

/** A charge refused before it reached a connector: the merchant has none and GATEWAY is none. */
export class NoConnectorError extends ConflictError {
  override readonly code = 'NO_CONNECTOR'
  constructor () {
    super('No connector can take this payment: the merchant has no enabled connector account and this service has no default gateway (GATEWAY=none). ' +
      'Add a connector account (POST /merchants/{id}/connectors) or enable one.')
  }
}

/** 13-19 digits passing the Luhn check, with or without spaces or dashes: what a card number looks like. */
/**
 * A card number anywhere in an object a browser produced: a `number` member (Adyen's unencrypted card field), or any
 * string, number or member name that is one. Deeper than a card form ever nests counts as carrying one (refused).
 */
export function carriesCardNumber (value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return looksLikeCardNumber(value.trim())
  if (typeof value === 'number' || typeof value === 'bigint') return looksLikeCardNumber(String(value))
  if (value === null || typeof value !== 'object') return false
  if (depth > 6) return true
  return Object.entries(value).some(([key, member]) =>
    (key === 'number' && member !== undefined && member !== null && member !== '') || looksLikeCardNumber(key.trim()) || carriesCardNumber(member, depth + 1))
}

function isOrigin (value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value.replace(/\/$/, '')
  } catch {
    return false
  }
}

export function looksLikeCardNumber (value: string): boolean {
  if (!/^[0-9][0-9 -]{11,35}[0-9]$/.test(value)) return false
  const digits = value.replace(/[ -]/g, '')
  if (digits.length < 13 || digits.length > 19) return false
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 1) {
      digit *= 2
      if (digit > 9) digit -= 9
    }
    sum += digit
  }
  return sum % 10 === 0
}

/**
 * The only moves a payment may make:
 *   pending → succeeded | declined | failed | canceled | requires_capture | requires_action
 *   requires_action → succeeded | requires_capture | declined | canceled (the shopper authenticated, failed, or never came back)
 *   requires_capture → succeeded (captured) | canceled (voided or expired)
 *   succeeded → partially_refunded | refunded | requires_capture (a manual capture the PSP confirmed failed later; nothing refunded)
 *   partially_refunded → partially_refunded | refunded
 * declined, failed, canceled and refunded are terminal.
 */
const allowedMoves: Record<PaymentStatus, readonly PaymentStatus[]> = {
  pending: ['succeeded', 'declined', 'failed', 'canceled', 'requires_capture', 'requires_action'],
  requires_action: ['succeeded', 'requires_capture', 'declined', 'canceled'],
  requires_capture: ['succeeded', 'canceled'],
  succeeded: ['partially_refunded', 'refunded', 'requires_capture'],
  partially_refunded: ['partially_refunded', 'refunded'],
  declined: [],
  failed: [],
  canceled: [],
  refunded: []
}

/** Statuses from which money can still be refunded. */
export const REFUNDABLE_STATUSES: readonly PaymentStatus[] = ['succeeded', 'partially_refunded']

export class IllegalTransitionError extends Error {
  override name = 'IllegalTransitionError'
  constructor (readonly from: PaymentStatus, readonly to: PaymentStatus) {
    super(`a payment cannot move from ${from} to ${to}`)
  }
}

export function canTransition (from: PaymentStatus, to: PaymentStatus): boolean {
  return allowedMoves[from].includes(to)
}

export function isSettled (status: PaymentStatus): boolean {
  return status !== 'pending'
}

/** No outcome of the charge recorded yet: pending, or waiting for the shopper (a PSP may already have charged). */
export function awaitsChargeOutcome (status: PaymentStatus): boolean {
  return status === 'pending' || status === 'requires_action'
}

/**
 * The one function through which a payment changes status. `code` is the
 * decline code of a `declined` payment, the failure code of a `failed` one or the
 * cancellation reason of a `canceled` one (default `requested`).
 * A refund move (to partially_refunded/refunded) must agree with amountRefundedMinor.
 * pending (or requires_action) → succeeded is an automatic capture: the whole amount is captured.
 */
export function transition (payment: Payment, to: PaymentStatus, at: string, code: string | null = null): Payment {
  if (!canTransition(payment.status, to)) throw new IllegalTransitionError(payment.status, to)
  if (to === 'refunded' && payment.amountRefundedMinor !== payment.amountCapturedMinor) throw new IllegalTransitionError(payment.status, to)
  if (to === 'partially_refunded' && !(payment.amountRefundedMinor > 0 && payment.amountRefundedMinor < payment.amountCapturedMinor)) {
    throw new IllegalTransitionError(payment.status, to)
  }
  if (to === 'succeeded' && payment.status === 'requires_capture' && payment.amountCapturedMinor <= 0) throw new IllegalTransitionError(payment.status, to)
  return {
    ...payment,
    status: to,
    declineCode: to === 'declined' ? code : payment.declineCode,
    failureCode: to === 'failed' ? code : payment.failureCode,
    cancellationReason: to === 'canceled' ? (code ?? 'requested') as CancellationReason : payment.cancellationReason,
    amountCapturedMinor: to === 'succeeded' && (payment.status === 'pending' || payment.status === 'requires_action') ? payment.amountMinor : payment.amountCapturedMinor,
    updatedAt: at
  }
}

/** Minor units that may still be refunded: the captured amount less what is refunded or being refunded. */
export function refundableMinor (payment: Payment): number {
  return payment.amountCapturedMinor - payment.amountRefundedMinor - payment.refundPendingMinor - (payment.amountDisputedMinor ?? 0)
}

/** Minor units a capture may still take: all of an authorization's amount until its one capture, then 0. */
export function capturableMinor (payment: Pick<Payment, 'status' | 'capturePendingMinor' | 'amountMinor' | 'amountCapturedMinor'>): number {
  return payment.status === 'requires_capture' && payment.capturePendingMinor === null ? payment.amountMinor - payment.amountCapturedMinor : 0
}

/**
 * Holds `amountMinor` of the payment for a new refund (the refund is pending
 * at the gateway). Throws when the payment cannot be refunded or not by that much.
 */
export function reserveRefund (payment: Payment, amountMinor: number, at: string): Payment {
  if (!REFUNDABLE_STATUSES.includes(payment.status)) throw new PaymentNotRefundableError(payment.id, payment.status)
  if (payment.disputeOpen === true) throw new PaymentDisputedError(payment.id)
  const remaining = refundableMinor(payment)
  if (amountMinor <= 0 || amountMinor > remaining) throw new RefundExceedsRemainingError(payment.id, amountMinor, remaining, payment.currency)
  return { ...payment, refundPendingMinor: payment.refundPendingMinor + amountMinor, updatedAt: at }
}

/** A reserved refund succeeded at the gateway: the money is refunded and the status moves. */
export function applySucceededRefund (payment: Payment, amountMinor: number, at: string): Payment {
  const refunded = {
    ...payment,
    refundPendingMinor: payment.refundPendingMinor - amountMinor,
    amountRefundedMinor: payment.amountRefundedMinor + amountMinor
  }
  return transition(refunded, refunded.amountRefundedMinor === refunded.amountCapturedMinor ? 'refunded' : 'partially_refunded', at)
}

/**
 * A refund made at the PSP without us (its Dashboard, Customer Area) that the PSP reported done (issue 40): the money is
 * refunded and the status moves, as for one of ours. Throws when it does not fit what remains (a person looks).
 */
export function applyConnectorRefund (payment: Payment, amountMinor: number, at: string): Payment {
  if (!REFUNDABLE_STATUSES.includes(payment.status)) throw new PaymentNotRefundableError(payment.id, payment.status)
  const remaining = refundableMinor(payment)
  if (amountMinor <= 0 || amountMinor > remaining) throw new RefundExceedsRemainingError(payment.id, amountMinor, remaining, payment.currency)
  const refunded = { ...payment, amountRefundedMinor: payment.amountRefundedMinor + amountMinor }
  return transition(refunded, refunded.amountRefundedMinor === refunded.amountCapturedMinor ? 'refunded' : 'partially_refunded', at)
}

/** A reserved refund failed at the gateway: the reservation is released, nothing else changes. */
export function releaseFailedRefund (payment: Payment, amountMinor: number, at: string): Payment {
  return { ...payment, refundPendingMinor: payment.refundPendingMinor - amountMinor, updatedAt: at }
}

/** A refund of a payment that is not (or no longer) refundable: pending, declined, failed, canceled or refunded. */
export class PaymentNotRefundableError extends ConflictError {
  override readonly code = 'PAYMENT_NOT_REFUNDABLE'
  constructor (readonly paymentId: string, readonly status: PaymentStatus) {
    super(status === 'refunded'
      ? 'The payment is already fully refunded.'
      : `Only succeeded or partially refunded payments can be refunded; this payment is ${status}.`)
    Object.assign(this.extensions, { paymentId, paymentStatus: status })
  }
}

/**
 * A refund larger than what remains refundable. A conflict: the remaining amount is
 * the payment's current state, which other refunds change (the same request may
 * have fitted a moment earlier).
 */
export class RefundExceedsRemainingError extends ConflictError {
  override readonly code = 'REFUND_EXCEEDS_REMAINING'
  constructor (readonly paymentId: string, requestedMinor: number, remainingMinor: number, currency: string) {
    const exponent = minorUnitsOf(currency) ?? 2
    super(`The refund amount exceeds what remains refundable on this payment (${formatMinorUnits(remainingMinor, exponent)} ${currency}).`)
    Object.assign(this.extensions, {
      paymentId,
      requestedAmount: fromMinorUnits(requestedMinor, exponent),
      remainingAmount: fromMinorUnits(remainingMinor, exponent)
    })
  }
}

/** A payment the recovery worker settled as `failed` (its stored response, refused like a decline). */
export class PaymentFailedError extends DomainError {
  readonly kind = 'payment_refused'
  readonly code = 'PAYMENT_FAILED'
  constructor (readonly paymentId: string, readonly failureCode: string) {
    super(failureCode === 'pending_expired'
      ? 'The payment stayed pending past its maximum age without a charge and was given up; no money moved.'
      : `The payment failed (${failureCode}).`)
    Object.assign(this.extensions, { paymentId, failureCode })
  }
}

/** Cancel of a payment that is no longer pending. */
export class PaymentNotCancelableError extends ConflictError {
  override readonly code = 'PAYMENT_NOT_CANCELABLE'
  constructor (readonly paymentId: string, readonly status: PaymentStatus) {
    super(`Only pending payments, payments waiting for the shopper (requires_action) and uncaptured authorizations (requires_capture) can be canceled; this payment is ${status}.`)
    Object.assign(this.extensions, { paymentId, paymentStatus: status })
  }
}

/**
 * Checks what the JSON schema cannot: the currency is an active ISO 4217 code
 * and the amount has no more decimals than that currency's minor unit.
 * `writtenDecimalPlaces`: the decimals of the amount as the client wrote it, when the transport
 * knows them (a JSON literal can carry more digits than the double it is parsed into).
 */
export function validatePaymentInput (input: {
  amount: number, currency: string, paymentMethod?: unknown, paymentMethods?: unknown, returnUrl?: unknown, browserInfo?: unknown, origin?: unknown
}, writtenDecimalPlaces = 0): FieldErrors {
  const errors: FieldErrors = {}
  if (typeof input.returnUrl === 'string') {
    const problem = returnUrlProblem(input.returnUrl)
    if (problem !== undefined) errors.returnUrl = [problem]
  }
  const cardMessage = (field: string) => `The ${field} field looks like a card number. Card numbers never enter this service: send the token your ` +
    'connector gave you for the card (Stripe: a PaymentMethod id such as pm_…; Adyen: a storedPaymentMethodId).'
  if (typeof input.paymentMethod === 'string' && looksLikeCardNumber(input.paymentMethod.trim())) errors.paymentMethod = [cardMessage('paymentMethod')]
  if (input.paymentMethod !== null && typeof input.paymentMethod === 'object') {
    if (input.returnUrl === undefined) {
      errors.paymentMethod = ['A payment method object (Adyen\'s Web Components\' paymentMethod) is for customer-present payments: send it with returnUrl, ' +
        'or send a stored payment method\'s token for an off-session payment.']
    } else if (carriesCardNumber(input.paymentMethod)) {
      errors.paymentMethod = ['The paymentMethod object carries a card number. Card numbers never enter this service: send the object Adyen\'s ' +
        'Web Components produce, whose card fields are encrypted (encryptedCardNumber, encryptedExpiryMonth, …).']
    }
  }
  if (input.returnUrl !== undefined && input.browserInfo !== null && typeof input.browserInfo === 'object' && carriesCardNumber(input.browserInfo)) {
    errors.browserInfo = ['The browserInfo object carries a card number. Card numbers never enter this service.']
  }
  for (const field of ['browserInfo', 'origin'] as const) {
    if (input[field] !== undefined && input.returnUrl === undefined) errors[field] = [`The ${field} field is for customer-present payments: send it with returnUrl.`]
  }
  if (typeof input.origin === 'string' && errors.origin === undefined && !isOrigin(input.origin)) {
    errors.origin = ['The origin field must be the origin of the shopper\'s page: scheme, host and port only (https://shop.example).']
  }
  if (input.paymentMethods !== null && typeof input.paymentMethods === 'object') {
    for (const [key, value] of Object.entries(input.paymentMethods)) {
      if (typeof value === 'string' && looksLikeCardNumber(value.trim())) {
        errors.paymentMethods = [cardMessage(PAYMENT_METHOD_KEY.test(key) ? `paymentMethods.${key}` : 'paymentMethods')]
      }
    }
  }
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

/**
 * A new payment, pending until the gateway answers. A manual capture's authorization
 * expires `authorizationTtlSeconds` after creation (captureBefore). The request's optional members
 * are passed as they came: undefined (not sent) takes the default.
 */
export function newPendingPayment (fields: {
  id: string
  amountMinor: number
  currency: string
  at: string
  metadata?: Metadata | undefined
  merchantId?: string | null
  captureMethod?: CaptureMethod | undefined
  authorizationTtlSeconds?: number | undefined
  paymentMethod?: string | undefined
  paymentMethods?: Readonly<Record<string, string>> | undefined
  shopperReference?: string | undefined
  connector?: ConnectorRef
  customer?: Customer | undefined
  returnUrl?: string
  actionToken?: string
  checkoutData?: CheckoutData | undefined
}): Payment {
  const captureMethod = fields.captureMethod ?? 'automatic'
  return {
    id: fields.id,
    amountMinor: fields.amountMinor,
    currency: fields.currency,
    status: 'pending',
    declineCode: null,
    failureCode: null,
    amountRefundedMinor: 0,
    refundPendingMinor: 0,
    captureMethod,
    amountCapturedMinor: 0,
    capturePendingMinor: null,
    captureAttempts: 0,
    captureBefore: captureMethod === 'manual'
      ? new Date(Date.parse(fields.at) + (fields.authorizationTtlSeconds ?? DEFAULT_AUTHORIZATION_TTL_SECONDS) * 1000).toISOString()
      : null,
    cancellationReason: null,
    paymentMethod: fields.paymentMethod ?? null,
    paymentMethods: fields.paymentMethods ?? {},
    shopperReference: fields.shopperReference ?? null,
    connector: fields.connector ?? DEFAULT_CONNECTOR,
    connectorReference: null,
    attempts: [],
    metadata: fields.metadata ?? {},
    ...(fields.customer !== undefined ? { customer: fields.customer } : {}),
    returnUrl: fields.returnUrl ?? null,
    actionToken: fields.returnUrl === undefined ? null : fields.actionToken ?? null,
    nextAction: null,
    ...(fields.returnUrl !== undefined && fields.checkoutData !== undefined && Object.keys(fields.checkoutData).length > 0 ? { checkoutData: fields.checkoutData } : {}),
    merchantId: fields.merchantId ?? null,
    createdAt: fields.at,
    updatedAt: fields.at
  }
}

/** A refund of a payment with a dispute that is not `won`: the PSP has taken (or may take) the money back. */
export class PaymentDisputedError extends ConflictError {
  override readonly code = 'PAYMENT_DISPUTED'
  constructor (readonly paymentId: string) {
    super('The payment has a dispute that is not won: it cannot be refunded while the cardholder\'s bank decides (the PSP refuses it too). ' +
      'See GET /api/disputes?paymentId=… .')
    Object.assign(this.extensions, { paymentId })
  }
}

/** The idempotency key of a payment's charge at its connector: derived from the payment, so a retry, a crash or the recovery replays it. */
export function downstreamKeyFor (paymentId: string): string {
  return `payment-${paymentId}`
}

/** True when the payment is on this connector account or one of its attempts was asked of it. */
export function askedOf (payment: Payment, connectorId: string): boolean {
  return payment.connector.id === connectorId || payment.attempts.some((attempt) => attempt.connectorId === connectorId)
}
