import type BetterSqlite3 from 'better-sqlite3'
import type { Payment, RefundDecision, RefundStore } from '../types'
import { paymentFromRow, refundFromRow, REFUND_COLUMNS, refundValues, type PaymentRow, type RefundRow } from '../rows'
import { listPage } from '../listing'
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
  const selectPayment = db.prepare<[string], PaymentRow>('SELECT * FROM payments WHERE id = ?')
  const savePayment = db.prepare(`
    UPDATE payments SET status = ?, amount_refunded_minor = ?, refund_pending_minor = ?, updated_at = ? WHERE id = ?`)
  const insertRefund = db.prepare(`INSERT INTO refunds (${REFUND_COLUMNS.join(', ')}) VALUES (${REFUND_COLUMNS.map(() => '?').join(', ')})`)
  const selectRefund = db.prepare<[string], RefundRow>('SELECT * FROM refunds WHERE id = ?')
  const saveRefund = db.prepare('UPDATE refunds SET status = ?, failure_code = ?, updated_at = ?, recovery_lease_until = NULL WHERE id = ?')
  const leaseCandidates = db.prepare<[string, number, number], RefundRow>(`
    SELECT * FROM refunds
    WHERE status = 'pending' AND created_at < ? AND (recovery_lease_until IS NULL OR recovery_lease_until <= ?)
    ORDER BY created_at LIMIT ?`)
  const lease = db.prepare('UPDATE refunds SET recovery_lease_until = ? WHERE id = ?')
  const statements = new Map<string, BetterSqlite3.Statement>()
  const run = async (text: string, values: unknown[]): Promise<RefundRow[]> => {
    let statement = statements.get(text)
    if (statement === undefined) statements.set(text, statement = db.prepare(text))
    return statement.all(...values) as RefundRow[]
  }

  const writePayment = (payment: Payment): void => {
    savePayment.run(payment.status, payment.amountRefundedMinor, payment.refundPendingMinor, payment.updatedAt, payment.id)
  }

  return {
    async create (paymentId, decide, options = {}) {
      return await writes.run((): RefundDecision | undefined => {
        const row = selectPayment.get(paymentId)
        if (row === undefined || (options.merchantId !== undefined && row.merchant_id !== options.merchantId)) return undefined
        const decision = decide(paymentFromRow(row))
        writePayment(decision.payment)
        insertRefund.run(...refundValues(decision.refund))
        if (options.key !== undefined) keys.markResourceCreated(options.key, decision.refund.id)
        return decision
      })
    },

    async get (paymentId, refundId) {
      const row = selectRefund.get(refundId)
      return row === undefined || row.payment_id !== paymentId ? undefined : refundFromRow(row)
    },

    async complete (refundId, settle, completion, event) {
      return await writes.run((): RefundDecision => {
        const refund = refundFromRow(selectRefund.get(refundId) as RefundRow)
        const payment = paymentFromRow(selectPayment.get(refund.paymentId) as PaymentRow)
        if (refund.status !== 'pending') return { refund, payment }
        const decision = settle(refund, payment)
        writePayment(decision.payment)
        saveRefund.run(decision.refund.status, decision.refund.failureCode, decision.refund.updatedAt, refundId)
        if (completion !== undefined) keys.storeResponse(completion.ref, completion.response)
        outbox.appendOf(event, decision)
        return decision
      })
    },

    async list (paymentId, page) {
      const result = await listPage('sqlite', run, { table: 'refunds', scope: { payment_id: paymentId }, page })
      return { data: result.data.map(refundFromRow), hasMore: result.hasMore }
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
