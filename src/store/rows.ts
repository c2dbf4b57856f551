import type { ApiVersion } from '../domain/api-versions'
import type { ClaimRequest, ClaimResult, IdempotencyRecord, LedgerEntry, Payment, RecoveryPoint, Refund, ResourceCreation, StoredResponse } from './types'
import type { Merchant, MerchantStatus } from '../domain/merchants'
import type { ApiKey, ApiKeyRole } from '../domain/api-keys'
import type { Metadata } from '../domain/metadata'
import { normalizedEmail, type Customer, type PaymentMethodDetails } from '../domain/customers'
import type { Dispute } from '../domain/disputes'
import type { CheckoutData, NextAction } from '../domain/payments'

/** Row shapes and mappers shared by the SQL implementations (same column names everywhere). */
export interface IdempotencyRow {
  scope: string
  method: string
  path: string
  key: string
  fingerprint: string
  recovery_point: string
  resource_id: string | null
  response_status: number | null
  response_headers: string | null
  response_body: string | null
  locked_until: number | string | null
  locked_by: string | null
  created_at: number | string
  expires_at: number | string
}

export function idempotencyRecordFromRow (row: IdempotencyRow): IdempotencyRecord {
  return {
    scope: row.scope,
    method: row.method,
    path: row.path,
    key: row.key,
    fingerprint: row.fingerprint,
    recoveryPoint: row.recovery_point as RecoveryPoint,
    resourceId: row.resource_id,
    response: row.response_status === null
      ? null
      : { statusCode: row.response_status, headers: JSON.parse(row.response_headers ?? '{}'), body: row.response_body ?? '' },
    lockedUntil: row.locked_until === null ? null : Number(row.locked_until),
    lockedBy: row.locked_until === null ? null : row.locked_by,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at)
  }
}

export interface PaymentRow {
  id: string
  merchant_id: string | null
  amount_minor: number | string
  currency: string
  status: string
  decline_code: string | null
  failure_code: string | null
  amount_refunded_minor: number | string
  refund_pending_minor: number | string
  capture_method: string
  amount_captured_minor: number | string
  capture_pending_minor: number | string | null
  capture_attempts: number | string
  capture_before: string | null
  cancellation_reason: string | null
  payment_method: string | null
  connector_id: string | null
  connector_type: string
  connector_reference: string | null
  attempts: string
  payment_methods: string
  shopper_reference: string | null
  customer?: string | null
  payment_method_details?: string | null
  /** Issue 40: NULL while the payment never had a dispute. */
  amount_disputed_minor?: number | string | null
  dispute_open?: number | boolean | null
  return_url?: string | null
  action_token?: string | null
  next_action?: string | null
  checkout_data?: string | null
  /** Epoch ms: the recovery worker's lease, or a void's hold on an authorization (see CaptureStore). */
  recovery_lease_until?: number | string | null
  metadata: string
  created_at: string
  updated_at: string
}

/** Metadata is stored as the JSON text of the object the client sent. */
export function metadataFromColumn (text: string | null): Metadata {
  return text === null || text === '' ? {} : JSON.parse(text) as Metadata
}

export function paymentFromRow (row: PaymentRow): Payment {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    amountMinor: Number(row.amount_minor),
    currency: row.currency,
    status: row.status as Payment['status'],
    declineCode: row.decline_code,
    failureCode: row.failure_code,
    amountRefundedMinor: Number(row.amount_refunded_minor),
    refundPendingMinor: Number(row.refund_pending_minor),
    captureMethod: row.capture_method as Payment['captureMethod'],
    amountCapturedMinor: Number(row.amount_captured_minor),
    capturePendingMinor: row.capture_pending_minor === null ? null : Number(row.capture_pending_minor),
    captureAttempts: Number(row.capture_attempts),
    captureBefore: row.capture_before,
    cancellationReason: row.cancellation_reason as Payment['cancellationReason'],
    paymentMethod: row.payment_method,
    paymentMethods: JSON.parse(row.payment_methods) as Payment['paymentMethods'],
    shopperReference: row.shopper_reference,
    connector: { id: row.connector_id, type: row.connector_type as Payment['connector']['type'] },
    connectorReference: row.connector_reference,
    attempts: JSON.parse(row.attempts) as Payment['attempts'],
    metadata: metadataFromColumn(row.metadata),
    ...(row.customer === null || row.customer === undefined ? {} : { customer: JSON.parse(row.customer) as Customer }),
    ...(row.payment_method_details === null || row.payment_method_details === undefined
      ? {}
      : { paymentMethodDetails: JSON.parse(row.payment_method_details) as PaymentMethodDetails }),
    ...(row.amount_disputed_minor === null || row.amount_disputed_minor === undefined ? {} : { amountDisputedMinor: Number(row.amount_disputed_minor) }),
    ...(row.dispute_open === 1 || row.dispute_open === true ? { disputeOpen: true } : {}),
    returnUrl: row.return_url ?? null,
    actionToken: row.action_token ?? null,
    nextAction: row.next_action === null || row.next_action === undefined ? null : JSON.parse(row.next_action) as NextAction,
    ...(row.checkout_data === null || row.checkout_data === undefined ? {} : { checkoutData: JSON.parse(row.checkout_data) as CheckoutData }),
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

/** The columns the payment method details are stored in: their JSON, and the card's last 4 (the list filters by it). */
export function paymentMethodDetailsColumns (payment: Payment): { details: string | null, last4: string | null } {
  const details = payment.paymentMethodDetails
  return { details: details === undefined ? null : JSON.stringify(details), last4: details?.card?.last4 ?? null }
}

/** The column values of a payment, in PAYMENT_COLUMNS order. */
export const PAYMENT_COLUMNS = [
  'id', 'amount_minor', 'currency', 'status', 'decline_code', 'failure_code', 'amount_refunded_minor',
  'refund_pending_minor', 'metadata', 'merchant_id', 'created_at', 'updated_at',
  'capture_method', 'amount_captured_minor', 'capture_pending_minor', 'capture_attempts', 'capture_before', 'cancellation_reason',
  'payment_method', 'connector_id', 'connector_type', 'connector_reference', 'attempts', 'payment_methods', 'shopper_reference',
  'customer', 'customer_email', 'payment_method_details', 'card_last4', 'return_url', 'action_token', 'next_action', 'checkout_data'
] as const

export function paymentValues (payment: Payment): unknown[] {
  const method = paymentMethodDetailsColumns(payment)
  return [payment.id, payment.amountMinor, payment.currency, payment.status, payment.declineCode, payment.failureCode,
    payment.amountRefundedMinor, payment.refundPendingMinor, JSON.stringify(payment.metadata), payment.merchantId,
    payment.createdAt, payment.updatedAt,
    payment.captureMethod, payment.amountCapturedMinor, payment.capturePendingMinor, payment.captureAttempts, payment.captureBefore, payment.cancellationReason,
    payment.paymentMethod, payment.connector.id, payment.connector.type, payment.connectorReference, JSON.stringify(payment.attempts),
    JSON.stringify(payment.paymentMethods), payment.shopperReference,
    payment.customer === undefined ? null : JSON.stringify(payment.customer),
    payment.customer === undefined ? null : normalizedEmail(payment.customer.email),
    method.details, method.last4,
    payment.returnUrl, payment.actionToken, nextActionColumn(payment), payment.checkoutData === undefined ? null : JSON.stringify(payment.checkoutData)]
}

/** The next action's column: its JSON while the payment has one. */
export function nextActionColumn (payment: Payment): string | null {
  return payment.nextAction === null ? null : JSON.stringify(payment.nextAction)
}

/** The insert of a new (pending) payment, to join the claim of its Idempotency-Key (one transaction). */
export function paymentCreation (payment: Payment): ResourceCreation {
  return { resourceId: payment.id, rows: [{ table: 'payments', columns: PAYMENT_COLUMNS, values: paymentValues(payment) }] }
}

export interface RefundRow {
  id: string
  payment_id: string
  amount_minor: number | string
  currency: string
  status: string
  reason: string | null
  failure_code: string | null
  metadata: string
  origin?: string | null
  connector_reference?: string | null
  created_at: string
  updated_at: string
}

export function refundFromRow (row: RefundRow): Refund {
  return {
    id: row.id,
    paymentId: row.payment_id,
    amountMinor: Number(row.amount_minor),
    currency: row.currency,
    status: row.status as Refund['status'],
    reason: row.reason,
    failureCode: row.failure_code,
    metadata: metadataFromColumn(row.metadata),
    ...(row.origin === 'connector' ? { origin: 'connector' as const } : {}),
    ...(row.connector_reference === null || row.connector_reference === undefined ? {} : { connectorReference: row.connector_reference }),
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

export const REFUND_COLUMNS = ['id', 'payment_id', 'amount_minor', 'currency', 'status', 'reason', 'failure_code', 'metadata', 'created_at', 'updated_at', 'origin', 'connector_reference'] as const

export function refundValues (refund: Refund): unknown[] {
  return [refund.id, refund.paymentId, refund.amountMinor, refund.currency, refund.status, refund.reason, refund.failureCode,
    JSON.stringify(refund.metadata), refund.createdAt, refund.updatedAt, refund.origin ?? 'api', refund.connectorReference ?? null]
}

export interface LedgerRow {
  idempotency_key: string
  charge_id: string
  amount_minor: number | string
  currency: string
  outcome: string
  decline_code: string | null
}

export function ledgerEntryFromRow (row: LedgerRow): LedgerEntry {
  return {
    idempotencyKey: row.idempotency_key,
    chargeId: row.charge_id,
    amountMinor: Number(row.amount_minor),
    currency: row.currency,
    outcome: row.outcome as LedgerEntry['outcome'],
    declineCode: row.decline_code
  }
}

/** The record a claim that inserted a new key wrote (so no backend reads it back). */
export function newIdempotencyRecord (request: ClaimRequest): IdempotencyRecord {
  return {
    ...request.ref,
    fingerprint: request.fingerprint,
    recoveryPoint: 'started',
    resourceId: null,
    response: null,
    lockedUntil: request.lockUntil,
    lockedBy: request.owner ?? null,
    createdAt: request.now,
    expiresAt: request.expiresAt
  }
}

/** The decision a claim makes about an existing key, shared by every backend. */
export function classifyExistingKey (record: IdempotencyRecord, fingerprint: string, now: number):
'expired' | 'mismatch' | 'replay' | 'in_flight' | 'resumable' {
  const finished = record.recoveryPoint === 'finished'
  if (record.expiresAt <= now && (finished || record.resourceId === null)) return 'expired'
  if (record.fingerprint !== fingerprint) return 'mismatch'
  if (finished && record.response !== null) return 'replay'
  if (record.lockedUntil !== null && record.lockedUntil > now) return 'in_flight'
  return 'resumable'
}

/**
 * Whether a claim that found `record` in flight may ask if its holder is still beating: the lock
 * names another instance, and the claimant can judge heartbeats now (takeoverBefore is set).
 */
export function holderMayHaveStopped (record: IdempotencyRecord, request: ClaimRequest): record is IdempotencyRecord & { lockedBy: string } {
  return request.takeoverBefore !== undefined && record.lockedBy !== null && record.lockedBy !== request.owner
}

/** Whether a holder whose last heartbeat was `heartbeatAt` (undefined: it has no row) has stopped. */
export function holderStopped (heartbeatAt: number | undefined, request: ClaimRequest): boolean {
  return request.takeoverBefore !== undefined && (heartbeatAt === undefined || heartbeatAt < request.takeoverBefore)
}

/**
 * The answer a claim can give from a plain read, without taking the key: a finished key's response
 * and fingerprint never change until it expires, so its replay (or a mismatch against it) is decided
 * the same at the time of the read as under a lock. Undefined: the claim must decide under the lock.
 */
export function settledClaim (record: IdempotencyRecord | undefined, fingerprint: string, now: number): ClaimResult | undefined {
  if (record?.recoveryPoint !== 'finished') return undefined
  switch (classifyExistingKey(record, fingerprint, now)) {
    case 'replay': return { kind: 'replay', record: record as IdempotencyRecord & { response: StoredResponse } }
    case 'mismatch': return { kind: 'mismatch', record }
    default: return undefined
  }
}

export interface MerchantRow {
  id: string
  name: string
  email: string
  country: string | null
  default_currency: string | null
  status: string
  metadata: string
  api_version: string
  version: number
  created_at: string
  updated_at: string
}

export function merchantFromRow (row: MerchantRow): Merchant {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    country: row.country,
    defaultCurrency: row.default_currency,
    status: row.status as MerchantStatus,
    metadata: metadataFromColumn(row.metadata),
    apiVersion: row.api_version as ApiVersion,
    version: row.version,
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

export interface ApiKeyRow {
  id: string
  merchant_id: string | null
  role: string
  name: string
  prefix: string
  last4: string
  secret_hash: string
  created_at: string
  expires_at: string | null
  last_used_at: string | null
  revoked_at: string | null
}

export const API_KEY_COLUMNS = 'id, merchant_id, role, name, prefix, last4, secret_hash, created_at, expires_at, last_used_at, revoked_at'

export function apiKeyFromRow (row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    role: row.role as ApiKeyRole,
    name: row.name,
    prefix: row.prefix,
    last4: row.last4,
    secretHash: row.secret_hash,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at
  }
}

export interface DisputeRow {
  id: string
  merchant_id: string | null
  payment_id: string
  amount_minor: number | string
  currency: string
  reason: string | null
  status: string
  funds_withdrawn: number | boolean
  evidence_due_by: string | null
  connector_id: string
  connector_type: string
  connector_reference: string
  stage: number | string
  funds_stage: number | string
  created_at: string
  updated_at: string
}

export function disputeFromRow (row: DisputeRow): Dispute {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    paymentId: row.payment_id,
    amountMinor: Number(row.amount_minor),
    currency: row.currency,
    reason: row.reason,
    status: row.status as Dispute['status'],
    fundsWithdrawn: row.funds_withdrawn === 1 || row.funds_withdrawn === true,
    evidenceDueBy: row.evidence_due_by,
    connector: { id: row.connector_id, type: row.connector_type as Dispute['connector']['type'] },
    connectorReference: row.connector_reference,
    stage: Number(row.stage),
    fundsStage: Number(row.funds_stage),
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

export const DISPUTE_COLUMNS = [
  'id', 'merchant_id', 'payment_id', 'amount_minor', 'currency', 'reason', 'status', 'funds_withdrawn', 'evidence_due_by',
  'connector_id', 'connector_type', 'connector_reference', 'stage', 'funds_stage', 'created_at', 'updated_at'
] as const

export function disputeValues (dispute: Dispute): unknown[] {
  return [dispute.id, dispute.merchantId, dispute.paymentId, dispute.amountMinor, dispute.currency, dispute.reason, dispute.status,
    dispute.fundsWithdrawn ? 1 : 0, dispute.evidenceDueBy, dispute.connector.id, dispute.connector.type, dispute.connectorReference,
    dispute.stage, dispute.fundsStage, dispute.createdAt, dispute.updatedAt]
}
