import { writeAudit } from './audit'
import { auditEntry } from '../audit-scope'
import type { Payment, RefundDecision, RefundStore } from '../types'
import { paymentFromRow, refundFromRow, REFUND_COLUMNS, type PaymentRow, type RefundRow } from '../rows'
import { refundParams, refundPaymentParams, refundSettleParams, refundSql, sharedRefundStore } from '../refunds'
import { inTransaction, Params, statement, withMembers, type PgPool } from './connection'
import { keySql } from './idempotency'
import { eventMembers } from './events'
import { postgresRunner } from './runner'

/*
 * Every write that changes a payment's refunded amounts runs as BEGIN, one locking read (the
 * payment, and the refund being settled: SELECT … FOR UPDATE), the domain's decision, ONE write statement (a CTE: the payment,
 * the refund, the key and the event together) and COMMIT: concurrent refunds of one payment, from
 * any number of instances, queue on that lock and each decides on the amounts the previous one
 * committed. The write statement begins after the lock is held, so its snapshot sees every event
 * committed before (the event's number needs no retry). Locks are taken payment first, then
 * idempotency key, like the payment store does.
 */
function paymentMember (p: Params, payment: Payment): string {
  return `pay AS (${p.embed(refundSql.savePayment, refundPaymentParams(payment))})`
}

/** The refund's columns under the prefix `r_` (the payment's take the plain names). */
const REFUND_ALIASES = REFUND_COLUMNS.map((column) => `r.${column} AS r_${column}`).join(', ')

function refundOfRow (row: Record<string, unknown>): RefundRow {
  return Object.fromEntries(REFUND_COLUMNS.map((column) => [column, row[`r_${column}`]])) as unknown as RefundRow
}

export function postgresRefundStore (pool: PgPool): RefundStore {
  return {
    ...sharedRefundStore(postgresRunner(pool)),
    async create (paymentId, decide, options = {}) {
      return await inTransaction(pool, 'READ COMMITTED', async (client): Promise<RefundDecision | undefined> => {
        const { rows: [row] } = await client.query<PaymentRow>({ name: 'refund-lock-payment', text: 'SELECT * FROM payments WHERE id = $1 FOR UPDATE', values: [paymentId] })
        if (row === undefined || (options.merchantId !== undefined && row.merchant_id !== options.merchantId)) return undefined
        const decision = decide(paymentFromRow(row))
        const p = new Params()
        const members = [paymentMember(p, decision.payment)]
        const insert = p.embed(refundSql.insert, refundParams(decision.refund))
        const made = options.event?.(decision)
        if (made !== undefined) members.push(...eventMembers(p, made))
        const text = options.key === undefined
          ? withMembers(members, insert)
          : withMembers([...members, `rf AS (${insert})`], keySql.markResourceCreated(p, options.key, decision.refund.id))
        await client.query(statement(text, p.values))
        // The request's entry goes with the refund's creation: a PSP that answers later (Adyen's 202) settles it without a request.
        await writeAudit(client, auditEntry(decision.refund.id))
        return decision
      })
    },

    async complete (refundId, settle, completion, event) {
      return await inTransaction(pool, 'READ COMMITTED', async (client): Promise<RefundDecision> => {
        // Both rows locked (FOR UPDATE OF locks them in the order named: the payment first). A refund
        // only joined to its locked payment would come from the snapshot taken before the wait for
        // the lock, missing a settlement committed meanwhile.
        const { rows: [row] } = await client.query<PaymentRow & Record<string, unknown>>({
          name: 'refund-lock',
          text: `SELECT p.*, ${REFUND_ALIASES} FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE r.id = $1 FOR UPDATE OF p, r`,
          values: [refundId]
        })
        if (row === undefined) throw new Error(`refund ${refundId} to complete does not exist`)
        const payment = paymentFromRow(row)
        const refund = refundFromRow(refundOfRow(row))
        if (refund.status !== 'pending') return { refund, payment }
        const decision = settle(refund, payment)
        const p = new Params()
        const members = [
          paymentMember(p, decision.payment),
          `rf AS (${p.embed(refundSql.settle, { ...refundSettleParams(decision.refund), id: refundId })})`
        ]
        if (completion !== undefined) members.push(`k AS (${keySql.finish(p, completion.ref, completion.response)})`)
        const made = event?.(decision)
        if (made !== undefined) members.push(...eventMembers(p, made))
        await client.query(statement(withMembers(members, 'SELECT 1'), p.values))
        return decision
      })
    },

    /* SKIP LOCKED: instances leasing at once take disjoint refunds; the outer condition is re-checked on the newest row version. */
    async leasePending (options) {
      const { rows } = await pool.query<RefundRow>({
        name: 'refund-lease',
        text: `UPDATE refunds SET recovery_lease_until = $3
          WHERE id IN (
            SELECT id FROM refunds
            WHERE status = 'pending' AND created_at < $1 AND (recovery_lease_until IS NULL OR recovery_lease_until <= $2)
            ORDER BY created_at LIMIT $4
            FOR UPDATE SKIP LOCKED)
          AND status = 'pending' AND (recovery_lease_until IS NULL OR recovery_lease_until <= $2)
          RETURNING *`,
        values: [options.createdBefore, options.now, options.leaseUntil, options.limit]
      })
      return rows.map(refundFromRow).sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    }
  }
}
