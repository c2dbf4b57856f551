import { sqliteAuditWriter } from './audit'
import { auditEntry } from '../audit-scope'
import type { CaptureStore, Payment } from '../types'
import { paymentFromRow, type PaymentRow } from '../rows'
import { paymentSql } from '../payments'
import { captureSql, settleParams, sharedCaptureStore, voidParams } from '../captures'
import { prepare, sqliteRunner } from './runner'
import type { SqliteHandle } from './connection'
import { sqliteKeyStatements } from './idempotency'
import { immediateWrites, type WriteQueue } from './group-commit'
import { sqliteOutbox } from './events'
import { captureResourceId } from '../../domain/captures'

/** SQLite has one writer: each method's read, decision and writes run in one write transaction. */
export function sqliteCaptureStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): CaptureStore {
  const keys = sqliteKeyStatements(db)
  const outbox = sqliteOutbox(db)
  const select = prepare(db, paymentSql.get)
  const reserve = prepare(db, captureSql.reserve)
  const saveCapture = prepare(db, captureSql.settle)
  const hold = prepare(db, captureSql.hold)
  const expiredCandidates = db.prepare<[string, number, number], PaymentRow>(`
    SELECT * FROM payments
    WHERE status = 'requires_capture' AND capture_before <= ? AND capture_pending_minor IS NULL AND (recovery_lease_until IS NULL OR recovery_lease_until <= ?)
    ORDER BY capture_before LIMIT ?`)
  const setLease = db.prepare('UPDATE payments SET recovery_lease_until = ? WHERE id = ?')
  const saveVoid = prepare(db, captureSql.void)
  const saveConnectorChange = prepare(db, captureSql.connectorChange)
  const inFlightCandidates = db.prepare<{ updatedBefore: string, now: number, limit: number }, PaymentRow>(`
    SELECT * FROM payments p
    WHERE p.capture_pending_minor IS NOT NULL AND p.updated_at < @updatedBefore
      AND (p.recovery_lease_until IS NULL OR p.recovery_lease_until <= @now)
      AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.resource_id = p.id || ':capture-' || p.capture_attempts AND k.locked_until > @now)
    ORDER BY p.updated_at LIMIT @limit`)
  const lockKey = db.prepare('UPDATE idempotency_keys SET locked_until = ? WHERE resource_id = ?')

  const read = (id: string): Payment | undefined => {
    const row = select.get({ id })
    return row === undefined ? undefined : paymentFromRow(row)
  }

  const audit = sqliteAuditWriter(db)
  return {
    ...sharedCaptureStore(sqliteRunner(db, writes)),
    async reserve (paymentId, decide, options) {
      return await writes.run(() => {
        const row = select.get({ id: paymentId })
        if (row === undefined || (options.merchantId !== undefined && row.merchant_id !== options.merchantId)) return undefined
        const leased = row.recovery_lease_until ?? null
        const reserved = decide(paymentFromRow(row), { voidInFlight: leased !== null && Number(leased) > options.now })
        reserve.run({ id: paymentId, pending: reserved.capturePendingMinor, attempts: reserved.captureAttempts, updatedAt: reserved.updatedAt })
        if (options.key !== undefined) keys.markResourceCreated(options.key, captureResourceId(paymentId, reserved.captureAttempts))
        // The request's entry goes with the capture's reservation: a PSP that answers later (Adyen's 202) settles it without a request.
        audit(auditEntry(paymentId))
        return reserved
      })
    },

    async settle (final, completion, event) {
      return await writes.run(() => {
        const saved = saveCapture.run(settleParams(final)) === 1
        if (!saved) return read(final.id) as Payment
        outbox.appendOf(event, final)
        if (completion !== undefined) keys.storeResponse(completion.ref, completion.response)
        return final
      })
    },

    async holdForVoid (paymentId, options) {
      return await writes.run(() => {
        const held = hold.get({ id: paymentId, leaseUntil: options.leaseUntil, now: options.now })
        if (held !== undefined) {
          // A cancel's entry goes with its hold: a PSP that answers later settles it without a request.
          audit(auditEntry(paymentId))
          return { payment: paymentFromRow(held), held: true }
        }
        const payment = read(paymentId)
        return payment === undefined ? undefined : { payment, held: false }
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
        const saved = saveVoid.run(voidParams(final)) === 1
        if (!saved) return read(final.id) as Payment
        outbox.appendOf(event, final)
        return final
      })
    },

    async applyConnectorChange (final, from, event) {
      return await writes.run(() => {
        const saved = saveConnectorChange.run({ ...settleParams(final), fromStatus: from.status, fromCapturedMinor: from.amountCapturedMinor }) === 1
        if (!saved) return read(final.id) as Payment
        outbox.appendOf(event, final)
        return final
      })
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
