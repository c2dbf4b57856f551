import type { PaymentRow } from './rows'
import { sql, type SqlRunner } from './sql'
import type { CaptureStore, Payment } from './types'

interface SettleParams { id: string, status: string, amountCapturedMinor: number, updatedAt: string }

/**
 * The capture store's statements, written once. Each write runs inside its dialect's transaction (SQLite's
 * single writer; PostgreSQL: after SELECT … FOR UPDATE of the payment, which makes the guards of these
 * WHERE clauses hold already), see sqlite/ and postgres/captures.ts.
 */
export const captureSql = {
  reserve: sql<{ id: string, pending: number | null, attempts: number, updatedAt: string }>('capture-reserve')`
    UPDATE payments SET capture_pending_minor = ${'pending'}, capture_attempts = ${'attempts'}, updated_at = ${'updatedAt'} WHERE id = ${'id'}`,
  /** The reserved capture's outcome, while one is reserved. */
  settle: sql<SettleParams>('capture-settle')`
    UPDATE payments SET status = ${'status'}, amount_captured_minor = ${'amountCapturedMinor'}, capture_pending_minor = NULL, updated_at = ${'updatedAt'}, recovery_lease_until = NULL
    WHERE id = ${'id'} AND capture_pending_minor IS NOT NULL`,
  /** A void's hold: the payment leased while it is an authorization without a capture in flight, nor another hold. */
  hold: sql<{ id: string, leaseUntil: number, now: number }, PaymentRow>('capture-hold')`
    UPDATE payments SET recovery_lease_until = ${'leaseUntil'}
    WHERE id = ${'id'} AND status = 'requires_capture' AND capture_pending_minor IS NULL AND (recovery_lease_until IS NULL OR recovery_lease_until <= ${'now'})
    RETURNING *`,
  void: sql<{ id: string, status: string, cancellationReason: string | null, updatedAt: string }>('capture-void')`
    UPDATE payments SET status = ${'status'}, cancellation_reason = ${'cancellationReason'}, updated_at = ${'updatedAt'}, recovery_lease_until = NULL
    WHERE id = ${'id'} AND status = 'requires_capture' AND capture_pending_minor IS NULL`,
  /** The connector's own change of a payment still as `from` left it, with nothing in flight, refunded or disputed. */
  connectorChange: sql<SettleParams & { fromStatus: string, fromCapturedMinor: number }>('capture-connector-change')`
    UPDATE payments SET status = ${'status'}, amount_captured_minor = ${'amountCapturedMinor'}, updated_at = ${'updatedAt'}, recovery_lease_until = NULL
    WHERE id = ${'id'} AND status = ${'fromStatus'} AND amount_captured_minor = ${'fromCapturedMinor'} AND capture_pending_minor IS NULL
      AND amount_refunded_minor = 0 AND refund_pending_minor = 0 AND COALESCE(amount_disputed_minor, 0) = 0`,
  release: sql<{ id: string }>('capture-release')`UPDATE payments SET recovery_lease_until = NULL WHERE id = ${'id'}`
}

export const settleParams = (payment: Payment): SettleParams =>
  ({ id: payment.id, status: payment.status, amountCapturedMinor: payment.amountCapturedMinor, updatedAt: payment.updatedAt })

export const voidParams = (payment: Payment): { id: string, status: string, cancellationReason: string | null, updatedAt: string } =>
  ({ id: payment.id, status: payment.status, cancellationReason: payment.cancellationReason, updatedAt: payment.updatedAt })

/** The capture store's one-statement method, the same on both databases. */
export function sharedCaptureStore (db: SqlRunner): Pick<CaptureStore, 'releaseHold'> {
  return {
    async releaseHold (paymentId) { await db.write(captureSql.release, { id: paymentId }) }
  }
}
