import { sqliteAuditWriter } from './audit'
import { auditEntry } from '../audit-scope'
import type { Payment, RefundDecision, RefundStore } from '../types'
import { paymentFromRow, refundFromRow, type RefundRow } from '../rows'
import { paymentSql } from '../payments'
import { refundParams, refundPaymentParams, refundSettleParams, refundSql, sharedRefundStore } from '../refunds'
import { prepare, sqliteRunner } from './runner'
import type { SqliteHandle } from './connection'
import { sqliteKeyStatements } from './idempotency'
import { immediateWrites, type WriteQueue } from './group-commit'
import { sqliteOutbox } from './events'

/**
 * SQLite has one writer at a time: every refund write runs its read, its
 * domain decision and its writes inside one write transaction (a savepoint of
 * a group commit), so no other write can slip between the read of a payment's
 * refunded amounts and the write that changes them.
 */
export function sqliteRefundStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): RefundStore {
  const keys = sqliteKeyStatements(db)
  const outbox = sqliteOutbox(db)
  const selectPayment = prepare(db, paymentSql.get)
  const savePayment = prepare(db, refundSql.savePayment)
  const insertRefund = prepare(db, refundSql.insert)
  const selectRefund = db.prepare<[string], RefundRow>('SELECT * FROM refunds WHERE id = ?')
  const saveRefund = prepare(db, refundSql.settle)
  const leaseCandidates = db.prepare<[string, number, number], RefundRow>(`
    SELECT * FROM refunds
    WHERE status = 'pending' AND created_at < ? AND (recovery_lease_until IS NULL OR recovery_lease_until <= ?)
    ORDER BY created_at LIMIT ?`)
  const lease = db.prepare('UPDATE refunds SET recovery_lease_until = ? WHERE id = ?')

  const writePayment = (payment: Payment): void => { savePayment.run(refundPaymentParams(payment)) }
  const audit = sqliteAuditWriter(db)

  return {
    ...sharedRefundStore(sqliteRunner(db, writes)),
    async create (paymentId, decide, options = {}) {
      return await writes.run((): RefundDecision | undefined => {
        const row = selectPayment.get({ id: paymentId })
        if (row === undefined || (options.merchantId !== undefined && row.merchant_id !== options.merchantId)) return undefined
        const decision = decide(paymentFromRow(row))
        writePayment(decision.payment)
        insertRefund.run(refundParams(decision.refund))
        if (options.key !== undefined) keys.markResourceCreated(options.key, decision.refund.id)
        // The request's entry goes with the refund's creation: a PSP that answers later (Adyen's 202) settles it without a request.
        audit(auditEntry(decision.refund.id))
        outbox.appendOf(options.event, decision)
        return decision
      })
    },

    async complete (refundId, settle, completion, event) {
      return await writes.run((): RefundDecision => {
        const refundRow = selectRefund.get(refundId)
        if (refundRow === undefined) throw new Error(`refund ${refundId} to complete does not exist`)
        const refund = refundFromRow(refundRow)
        const paymentRow = selectPayment.get({ id: refund.paymentId })
        if (paymentRow === undefined) throw new Error(`the payment of refund ${refundId} does not exist`)
        const payment = paymentFromRow(paymentRow)
        if (refund.status !== 'pending') return { refund, payment }
        const decision = settle(refund, payment)
        writePayment(decision.payment)
        saveRefund.run({ ...refundSettleParams(decision.refund), id: refundId })
        if (completion !== undefined) keys.storeResponse(completion.ref, completion.response)
        outbox.appendOf(event, decision)
        return decision
      })
    },

    async leasePending (options) {
      return await writes.run(() => {
        const rows = leaseCandidates.all(options.createdBefore, options.now, options.limit)
        for (const row of rows) lease.run(options.leaseUntil, row.id)
        return rows.map(refundFromRow)
      })
    }
  }
}
