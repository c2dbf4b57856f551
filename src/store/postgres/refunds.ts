import type { Payment, RefundDecision, RefundStore } from '../types'
import { paymentFromRow, refundFromRow, REFUND_COLUMNS, refundValues, type PaymentRow, type RefundRow } from '../rows'
import { listPage } from '../listing'
import { inTransaction, type PgClient, type PgPool } from './connection'
import { postgresKeyStatements as keys } from './idempotency'
import { appendEventOf } from './events'

/*
 * Every write that changes a payment's refunded amounts first locks the payment
 * row (SELECT … FOR UPDATE), then reads it, lets the domain decide and writes:
 * concurrent refunds of one payment, from any number of instances, queue on
 * that lock and each decides on the amounts the previous one committed. Locks
 * are taken payment first, then idempotency key, like the payment store does.
 */
async function lockPayment (client: PgClient, id: string): Promise<PaymentRow | undefined> {
  const { rows } = await client.query<PaymentRow>({ name: 'refund-lock-payment', text: 'SELECT * FROM payments WHERE id = $1 FOR UPDATE', values: [id] })
  return rows[0]
}

async function writePayment (client: PgClient, payment: Payment): Promise<void> {
  await client.query({
    name: 'refund-save-payment',
    text: 'UPDATE payments SET status = $2, amount_refunded_minor = $3, refund_pending_minor = $4, updated_at = $5 WHERE id = $1',
    values: [payment.id, payment.status, payment.amountRefundedMinor, payment.refundPendingMinor, payment.updatedAt]
  })
}

export function postgresRefundStore (pool: PgPool): RefundStore {
  return {
    async create (paymentId, decide, options = {}) {
      return await inTransaction(pool, 'READ COMMITTED', async (client): Promise<RefundDecision | undefined> => {
        const row = await lockPayment(client, paymentId)
        if (row === undefined || (options.merchantId !== undefined && row.merchant_id !== options.merchantId)) return undefined
        const decision = decide(paymentFromRow(row))
        await writePayment(client, decision.payment)
        await client.query({
          name: 'refund-insert',
          text: `INSERT INTO refunds (${REFUND_COLUMNS.join(', ')}) VALUES (${REFUND_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
          values: refundValues(decision.refund)
        })
        if (options.key !== undefined) await keys.markResourceCreated(client, options.key, decision.refund.id)
        return decision
      })
    },

    async get (paymentId, refundId) {
      const { rows } = await pool.query<RefundRow>({ name: 'refund-get', text: 'SELECT * FROM refunds WHERE id = $1 AND payment_id = $2', values: [refundId, paymentId] })
      return rows.length === 0 ? undefined : refundFromRow(rows[0])
    },

    async complete (refundId, settle, completion, event) {
      return await inTransaction(pool, 'READ COMMITTED', async (client): Promise<RefundDecision> => {
        const { rows: [owner] } = await client.query<{ payment_id: string }>({ name: 'refund-owner', text: 'SELECT payment_id FROM refunds WHERE id = $1', values: [refundId] })
        const payment = paymentFromRow(await lockPayment(client, owner.payment_id) as PaymentRow)
        // Read under the payment's lock: every refund write holds it, so this is the latest state.
        const { rows } = await client.query<RefundRow>({ name: 'refund-get-by-id', text: 'SELECT * FROM refunds WHERE id = $1', values: [refundId] })
        const refund = refundFromRow(rows[0])
        if (refund.status !== 'pending') return { refund, payment }
        const decision = settle(refund, payment)
        await writePayment(client, decision.payment)
        await client.query({
          name: 'refund-save',
          text: 'UPDATE refunds SET status = $2, failure_code = $3, updated_at = $4, recovery_lease_until = NULL WHERE id = $1',
          values: [refundId, decision.refund.status, decision.refund.failureCode, decision.refund.updatedAt]
        })
        if (completion !== undefined) await keys.storeResponse(client, completion.ref, completion.response)
        await appendEventOf(client, event, decision)
        return decision
      })
    },

    async list (paymentId, page) {
      const result = await listPage<RefundRow>('postgres', async (text, values) => (await pool.query<RefundRow>(text, values)).rows,
        { table: 'refunds', scope: { payment_id: paymentId }, page })
      return { data: result.data.map(refundFromRow), hasMore: result.hasMore }
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
