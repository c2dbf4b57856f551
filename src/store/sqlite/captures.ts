import type { CaptureStore, Payment } from '../types'
import { paymentFromRow, type PaymentRow } from '../rows'
import type { SqliteHandle } from './connection'
import { sqliteKeyStatements } from './idempotency'
import { immediateWrites, type WriteQueue } from './group-commit'
import { sqliteOutbox } from './events'
import { captureResourceId } from '../../domain/captures'

/** SQLite has one writer: each method's read, decision and writes run in one write transaction. */
export function sqliteCaptureStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): CaptureStore {
  const keys = sqliteKeyStatements(db)
  const outbox = sqliteOutbox(db)
  const select = db.prepare<[string], PaymentRow>('SELECT * FROM payments WHERE id = ?')
  const saveReservation = db.prepare('UPDATE payments SET capture_pending_minor = ?, capture_attempts = ?, updated_at = ? WHERE id = ?')
  const saveCapture = db.prepare(`
    UPDATE payments SET status = ?, amount_captured_minor = ?, capture_pending_minor = NULL, updated_at = ?, recovery_lease_until = NULL
    WHERE id = ? AND capture_pending_minor IS NOT NULL`)
  const hold = db.prepare(`
    UPDATE payments SET recovery_lease_until = ?
    WHERE id = ? AND status = 'requires_capture' AND capture_pending_minor IS NULL AND (recovery_lease_until IS NULL OR recovery_lease_until <= ?)`)
  const expiredCandidates = db.prepare<[string, number, number], PaymentRow>(`
    SELECT * FROM payments
    WHERE status = 'requires_capture' AND capture_before <= ? AND capture_pending_minor IS NULL AND (recovery_lease_until IS NULL OR recovery_lease_until <= ?)
    ORDER BY capture_before LIMIT ?`)
  const setLease = db.prepare('UPDATE payments SET recovery_lease_until = ? WHERE id = ?')
  const saveVoid = db.prepare(`
    UPDATE payments SET status = ?, cancellation_reason = ?, updated_at = ?, recovery_lease_until = NULL
    WHERE id = ? AND status = 'requires_capture' AND capture_pending_minor IS NULL`)
  const release = db.prepare('UPDATE payments SET recovery_lease_until = NULL WHERE id = ?')
  const saveConnectorChange = db.prepare(`
    UPDATE payments SET status = ?, amount_captured_minor = ?, updated_at = ?, recovery_lease_until = NULL
    WHERE id = ? AND status = ? AND amount_captured_minor = ? AND capture_pending_minor IS NULL AND amount_refunded_minor = 0 AND refund_pending_minor = 0
      AND COALESCE(amount_disputed_minor, 0) = 0`)
  const inFlightCandidates = db.prepare<{ updatedBefore: string, now: number, limit: number }, PaymentRow>(`
    SELECT * FROM payments p
    WHERE p.capture_pending_minor IS NOT NULL AND p.updated_at < @updatedBefore
      AND (p.recovery_lease_until IS NULL OR p.recovery_lease_until <= @now)
      AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.resource_id = p.id || ':capture-' || p.capture_attempts AND k.locked_until > @now)
    ORDER BY p.updated_at LIMIT @limit`)
  const lockKey = db.prepare('UPDATE idempotency_keys SET locked_until = ? WHERE resource_id = ?')

  const read = (id: string): Payment | undefined => {
    const row = select.get(id)
    return row === undefined ? undefined : paymentFromRow(row)
  }

  return {
    async reserve (paymentId, decide, options) {
      return await writes.run(() => {
        const row = select.get(paymentId)
        if (row === undefined || (options.merchantId !== undefined && row.merchant_id !== options.merchantId)) return undefined
        const leased = row.recovery_lease_until ?? null
        const reserved = decide(paymentFromRow(row), { voidInFlight: leased !== null && Number(leased) > options.now })
        saveReservation.run(reserved.capturePendingMinor, reserved.captureAttempts, reserved.updatedAt, paymentId)
        if (options.key !== undefined) keys.markResourceCreated(options.key, captureResourceId(paymentId, reserved.captureAttempts))
        return reserved
      })
    },

    async settle (final, completion, event) {
      return await writes.run(() => {
        const saved = saveCapture.run(final.status, final.amountCapturedMinor, final.updatedAt, final.id).changes === 1
        if (!saved) return read(final.id) as Payment
        outbox.appendOf(event, final)
        if (completion !== undefined) keys.storeResponse(completion.ref, completion.response)
        return final
      })
    },

    async holdForVoid (paymentId, options) {
      return await writes.run(() => {
        const held = hold.run(options.leaseUntil, paymentId, options.now).changes === 1
        const payment = read(paymentId)
        return payment === undefined ? undefined : { payment, held }
      })
    },

    async holdExpired (options) {
      return await writes.run(() => {
        const rows = expiredCandidates.all(new Date(options.now).toISOString(), options.now, options.limit)
        for (const row of rows) setLease.run(options.leaseUntil, row.id)
        return rows.map(paymentFromRow)
      })
    },

    async finishVoid (final, event) {
      return await writes.run(() => {
        const saved = saveVoid.run(final.status, final.cancellationReason, final.updatedAt, final.id).changes === 1
        if (!saved) return read(final.id) as Payment
        outbox.appendOf(event, final)
        return final
      })
    },

    async applyConnectorChange (final, from, event) {
      return await writes.run(() => {
        const saved = saveConnectorChange.run(final.status, final.amountCapturedMinor, final.updatedAt, final.id, from.status, from.amountCapturedMinor).changes === 1
        if (!saved) return read(final.id) as Payment
        outbox.appendOf(event, final)
        return final
      })
    },

    async releaseHold (paymentId) {
      await writes.run(() => { release.run(paymentId) })
    },

    async leaseInFlight (options) {
      return await writes.run(() => {
        const rows = inFlightCandidates.all({ updatedBefore: options.updatedBefore, now: options.now, limit: options.limit })
        for (const row of rows) {
          setLease.run(options.leaseUntil, row.id)
          lockKey.run(options.leaseUntil, captureResourceId(row.id, Number(row.capture_attempts)))
        }
        return rows.map(paymentFromRow)
      })
    }
  }
}
