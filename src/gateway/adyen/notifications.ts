// The validator's own module: the library's index loads every API service (about a second of start-up).
import HmacValidator from '@adyen/api-library/lib/src/utils/hmacValidator'
import type { NotificationRequestItem } from '@adyen/api-library/lib/src/typings/notification/notificationRequestItem'
import type { DisputeReport, DisputeStatus } from '../../domain/disputes'
import { paymentMethodDetailsOf, type PaymentMethodDetails } from '../../domain/customers'
import { DomainError } from '../../domain/errors'

/**
 * Adyen's standard webhooks ("notifications"): a batch `{ live, notificationItems: [{ NotificationRequestItem }] }`,
 * each item signed on its own (HMAC-SHA256 over pspReference, originalReference, merchantAccountCode,
 * merchantReference, amount value and currency, eventCode and success, with the account's hex hmacKey),
 * the signature in `additionalData.hmacSignature`.
 */

/** One notification item, as much of it as we read (and as the signature covers). */
export interface AdyenNotificationItem {
  eventCode: string
  /** 'true' or 'false' (a string on the wire, and in the signed data). */
  success: string
  pspReference: string
  /** For a modification (capture, refund, cancel): the pspReference of the payment it modifies; absent for AUTHORISATION. */
  originalReference?: string
  /** For AUTHORISATION our payment's id; for a modification the `reference` we sent with it. */
  merchantReference: string
  merchantAccountCode: string
  amount: { value: number, currency: string }
  reason?: string
  eventDate?: string
  /** The method's brand or name (`visa`, `mc`, `ideal`): an AUTHORISATION says which the shopper paid with. */
  paymentMethod?: string
  additionalData?: Record<string, string | undefined>
}

/** The code of AdyenNotificationUnverifiedError: the webhook (webhook.ts) gives it its own problem type. */
export const ADYEN_NOTIFICATION_UNVERIFIED = 'ADYEN_NOTIFICATION_UNVERIFIED'

/** The library's validator (stateless). */
const validator = new HmacValidator()

/**
 * An Adyen notification batch that is not authenticated: no such connector account, not an adyen
 * account, no hmacKey, or an item whose HMAC signature is missing or wrong. Nothing was recorded or
 * changed. One message for every cause (the log says which), so a caller learns nothing about accounts.
 */
export class AdyenNotificationUnverifiedError extends DomainError {
  readonly kind = 'unauthenticated'
  readonly code = ADYEN_NOTIFICATION_UNVERIFIED
  constructor () {
    super('The notification could not be verified: unknown connector account, or an item whose HMAC signature is missing or does not match. ' +
      'Nothing was recorded.')
  }
}

/** The body is not an Adyen notification batch (not a batch, or an item lacks a signed field). */
export class AdyenNotificationFormatError extends Error {
  override name = 'AdyenNotificationFormatError'
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const isString = (value: unknown): value is string => typeof value === 'string'

function itemOf (wrapper: unknown, index: number): AdyenNotificationItem {
  const item = isRecord(wrapper) ? wrapper.NotificationRequestItem : undefined
  if (!isRecord(item)) throw new AdyenNotificationFormatError(`notificationItems[${index}] has no NotificationRequestItem`)
  const amount = item.amount
  const fields = ['eventCode', 'success', 'pspReference', 'merchantReference', 'merchantAccountCode'] as const
  const missing = fields.find((field) => !isString(item[field]))
  if (missing !== undefined) throw new AdyenNotificationFormatError(`notificationItems[${index}] has no ${missing}`)
  if (!isRecord(amount) || !Number.isSafeInteger(amount.value) || !isString(amount.currency)) {
    throw new AdyenNotificationFormatError(`notificationItems[${index}] has no amount { value, currency }`)
  }
  if (item.originalReference !== undefined && !isString(item.originalReference)) throw new AdyenNotificationFormatError(`notificationItems[${index}].originalReference is not a string`)
  return item as unknown as AdyenNotificationItem
}

/** The items of a notification batch (AdyenNotificationFormatError when it is none). */
export function notificationItemsOf (body: unknown): AdyenNotificationItem[] {
  if (!isRecord(body) || !Array.isArray(body.notificationItems)) throw new AdyenNotificationFormatError('the body has no notificationItems')
  return body.notificationItems.map(itemOf)
}

/** True when the item carries an `hmacSignature` made with `hmacKey` (hex) over its signed fields (the library's validator, constant time). */
export function hasValidSignature (item: AdyenNotificationItem, hmacKey: string): boolean {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hmacKey)) return false
  try {
    return validator.validateHMAC(item as unknown as NotificationRequestItem, hmacKey)
  } catch {
    // No hmacSignature in additionalData.
    return false
  }
}

/** The signature Adyen puts on an item (the library's calculation): for tests and local fakes that speak Adyen. */
export function signatureOf (item: AdyenNotificationItem, hmacKey: string): string {
  return validator.calculateHmac(item as unknown as NotificationRequestItem, hmacKey)
}

/** The inbox id of an item: Adyen repeats a notification with the same pspReference, eventCode and success. */
export function notificationIdOf (item: AdyenNotificationItem): string {
  return `${item.pspReference}:${item.eventCode}:${item.success}${isRecapture(item) ? ':recaptured' : ''}`
}

/** Adyen re-captures after a technical failure and says so in a second CAPTURE of the same modification. */
function isRecapture (item: AdyenNotificationItem): boolean {
  return item.eventCode === 'CAPTURE' && item.reason === 'Transaction Recaptured'
}

/** The inbox ids a capture's CAPTURE_FAILED is recorded under (Adyen sends it with success "true"; "false" is read the same). */
export function captureFailureIdsOf (capturePspReference: string): string[] {
  return [`${capturePspReference}:CAPTURE_FAILED:true`, `${capturePspReference}:CAPTURE_FAILED:false`]
}

/** What an item says about our records, in connector-neutral words. */
export type AdyenNotificationEffect =
  /** A payment's authorisation: `paymentId` is our payment id (the `reference` of /payments); `pspReference` the charge's id. */
  | { kind: 'authorisation', paymentId: string, pspReference: string, success: boolean, reason: string | undefined, amountMinor: number, currency: string, paymentMethodDetails: PaymentMethodDetails | undefined }
  /**
   * A capture (CAPTURE / CAPTURE_FAILED) of the payment whose pspReference is `paymentReference`; `pspReference` the
   * capture's own (its CAPTURE and CAPTURE_FAILED share it); `recaptured`: Adyen's second CAPTURE after a technical failure.
   */
  | { kind: 'capture', paymentReference: string | undefined, reference: string, pspReference: string, recaptured: boolean, success: boolean, reason: string | undefined, amountMinor: number, currency: string }
  /** A refund (REFUND / REFUND_FAILED): `reference` is the modification's reference, our refund id. */
  | { kind: 'refund', paymentReference: string | undefined, reference: string, pspReference: string, success: boolean, reason: string | undefined, amountMinor: number, currency: string }
  /** A cancel (CANCELLATION, TECHNICAL_CANCEL; CANCEL_OR_REFUND when it canceled an uncaptured payment). */
  | { kind: 'cancellation', paymentReference: string | undefined, reference: string, success: boolean, reason: string | undefined, orRefund: boolean }
  /** A dispute event: `paymentReference` is the disputed payment's pspReference (originalReference), the report's reference the dispute's pspReference. */
  | { kind: 'dispute', paymentReference: string | undefined, paymentId: string, report: DisputeReport }
  | { kind: 'none' }

/**
 * Adyen's dispute event codes as our statuses, in the order Adyen documents a dispute's life (a later stage wins whatever
 * the order of arrival), and the money each moves (Dispute.fundsStage: 1 withdrawn, 2 reinstated, 3 withdrawn again, 4
 * reinstated again). A CHARGEBACK's status comes from its `disputeStatus` when it has one.
 */
export const ADYEN_DISPUTE_EVENTS: Readonly<Record<string, { status: DisputeStatus, stage: number, fundsStage: number }>> = {
  REQUEST_FOR_INFORMATION: { status: 'needs_response', stage: 1, fundsStage: 0 },
  NOTIFICATION_OF_CHARGEBACK: { status: 'needs_response', stage: 1, fundsStage: 0 },
  CHARGEBACK: { status: 'needs_response', stage: 2, fundsStage: 1 },
  CHARGEBACK_REVERSED: { status: 'won', stage: 3, fundsStage: 2 },
  SECOND_CHARGEBACK: { status: 'lost', stage: 4, fundsStage: 3 },
  PREARBITRATION_WON: { status: 'won', stage: 5, fundsStage: 4 },
  PREARBITRATION_LOST: { status: 'lost', stage: 5, fundsStage: 3 }
}

/** A CHARGEBACK's `additionalData.disputeStatus` as our status (Undefended and anything unknown: it needs a response). */
const ADYEN_DISPUTE_STATUSES: Readonly<Record<string, DisputeStatus>> = {
  Undefended: 'needs_response',
  Pending: 'under_review',
  Responded: 'under_review',
  Won: 'won',
  Lost: 'lost',
  Expired: 'lost',
  Accepted: 'accepted'
}

function disputeEffect (item: AdyenNotificationItem): AdyenNotificationEffect {
  const mapped = ADYEN_DISPUTE_EVENTS[item.eventCode]
  if (mapped === undefined || item.success !== 'true') return { kind: 'none' }
  const data = item.additionalData ?? {}
  const paymentReference = isString(item.originalReference) && item.originalReference !== '' ? item.originalReference : undefined
  const given = data.disputeStatus === undefined ? undefined : ADYEN_DISPUTE_STATUSES[data.disputeStatus]
  const status = item.eventCode === 'CHARGEBACK' && given !== undefined ? given : data.defendable === 'false' && mapped.status === 'needs_response' && mapped.stage === 2 ? 'lost' : mapped.status
  const due = data.defensePeriodEndsAt === undefined ? NaN : Date.parse(data.defensePeriodEndsAt)
  const reason = [data.chargebackReasonCode, data.rfiReasonCode, data.nofReasonCode].find((code) => isString(code) && code !== '')
  return {
    kind: 'dispute',
    paymentReference,
    paymentId: item.merchantReference,
    report: {
      connectorReference: item.pspReference,
      amountMinor: item.amount.value,
      currency: item.amount.currency.toUpperCase(),
      reason: reason ?? null,
      status,
      stage: mapped.stage,
      fundsStage: mapped.fundsStage,
      evidenceDueBy: Number.isNaN(due) ? null : new Date(due).toISOString()
    }
  }
}

/** Adyen's event codes that change our records; every other code is recorded and ignored. */
export function effectOf (item: AdyenNotificationItem): AdyenNotificationEffect {
  const success = item.success === 'true'
  const reason = isString(item.reason) && item.reason !== '' ? item.reason : undefined
  const paymentReference = isString(item.originalReference) && item.originalReference !== '' ? item.originalReference : undefined
  const money = { amountMinor: item.amount.value, currency: item.amount.currency.toUpperCase() }
  const modification = { paymentReference, reference: item.merchantReference, success, reason }
  switch (item.eventCode) {
    case 'AUTHORISATION':
      return { kind: 'authorisation', paymentId: item.merchantReference, pspReference: item.pspReference, success, reason, ...money, paymentMethodDetails: paymentMethodDetailsOfItem(item) }
    case 'CAPTURE': return { kind: 'capture', ...modification, pspReference: item.pspReference, recaptured: isRecapture(item), ...money }
    // A CAPTURE_FAILED arrives with success "true" (the failure happened): it is a failure either way.
    case 'CAPTURE_FAILED': return { kind: 'capture', ...modification, pspReference: item.pspReference, recaptured: false, success: false, ...money }
    case 'REFUND': return { kind: 'refund', ...modification, pspReference: item.pspReference, ...money }
    case 'REFUND_FAILED': return { kind: 'refund', ...modification, pspReference: item.pspReference, success: false, ...money }
    case 'CANCELLATION': return { kind: 'cancellation', ...modification, orRefund: false }
    // The outcome of a cancel by our reference (sent when the payment's pspReference was never learned): the same cancel.
    case 'TECHNICAL_CANCEL': return { kind: 'cancellation', ...modification, orRefund: false }
    case 'CANCEL_OR_REFUND': return { kind: 'cancellation', ...modification, orRefund: true }
    default: return disputeEffect(item)
  }
}

/**
 * What an AUTHORISATION says of the card, as a /payments answer does: the item's `paymentMethod` (the brand) and the
 * additionalData the account sends (cardSummary, expiryDate "MM/YYYY", cardIssuingCountry); never the BIN or holder.
 */
export function paymentMethodDetailsOfItem (item: AdyenNotificationItem): PaymentMethodDetails | undefined {
  const data = item.additionalData ?? {}
  const method = isString(item.paymentMethod) && item.paymentMethod !== '' ? item.paymentMethod : data.paymentMethod
  if (method === undefined) return undefined
  if (data.cardSummary === undefined) return paymentMethodDetailsOf({ type: method })
  const [month, year] = (data.expiryDate ?? '').split('/')
  return paymentMethodDetailsOf({ type: 'card', card: { brand: method, last4: data.cardSummary, expMonth: month, expYear: year, country: data.cardIssuingCountry ?? data.issuerCountry } })
}

/**
 * Adyen's `reason` text as one of our codes (lower-case words joined by `_`, as every decline and failure
 * code is): "CVC Declined" → `cvc_declined`, "Insufficient balance" → `insufficient_balance`; `fallback`
 * when there is none.
 */
export function reasonCodeOf (reason: string | undefined, fallback: string): string {
  const code = (reason ?? '').toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64)
  return code === '' ? fallback : code
}
