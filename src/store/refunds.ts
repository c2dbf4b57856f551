import { listPage } from './listing'
import { REFUND_COLUMNS, refundFromRow, refundValues, type RefundRow } from './rows'
import { columnParams, insertSql, sql, type SqlRunner } from './sql'
import type { Payment, Refund, RefundStore } from './types'

export const refundSql = {
  get: sql<{ paymentId: string, refundId: string }, RefundRow>('refund-get')`SELECT * FROM refunds WHERE id = ${'refundId'} AND payment_id = ${'paymentId'}`,
  byConnectorReference: sql<{ paymentId: string, reference: string }, RefundRow>('refund-by-connector-reference')`
    SELECT * FROM refunds WHERE payment_id = ${'paymentId'} AND connector_reference = ${'reference'}`,
  /* The writes, inside each dialect's transaction under the payment's lock (sqlite/ and postgres/refunds.ts). */
  insert: insertSql('refund-insert', 'refunds', REFUND_COLUMNS),
  /** The refund's settlement (it leaves pending). */
  settle: sql<{ id: string, status: string, failureCode: string | null, updatedAt: string }>('refund-settle')`
    UPDATE refunds SET status = ${'status'}, failure_code = ${'failureCode'}, updated_at = ${'updatedAt'}, recovery_lease_until = NULL WHERE id = ${'id'}`,
  /** The payment's refunded amounts and status. */
  savePayment: sql<{ id: string, status: string, amountRefundedMinor: number, refundPendingMinor: number, updatedAt: string }>('refund-payment')`
    UPDATE payments SET status = ${'status'}, amount_refunded_minor = ${'amountRefundedMinor'}, refund_pending_minor = ${'refundPendingMinor'}, updated_at = ${'updatedAt'}
    WHERE id = ${'id'}`
}

export const refundParams = (refund: Refund): Record<typeof REFUND_COLUMNS[number], unknown> => columnParams(REFUND_COLUMNS, refundValues(refund))

export const refundSettleParams = (refund: Refund): { id: string, status: string, failureCode: string | null, updatedAt: string } =>
  ({ id: refund.id, status: refund.status, failureCode: refund.failureCode, updatedAt: refund.updatedAt })

export const refundPaymentParams = (payment: Payment): { id: string, status: string, amountRefundedMinor: number, refundPendingMinor: number, updatedAt: string } =>
  ({ id: payment.id, status: payment.status, amountRefundedMinor: payment.amountRefundedMinor, refundPendingMinor: payment.refundPendingMinor, updatedAt: payment.updatedAt })

/** The refund store's reads, the same on both databases (its writes lock the payment in each dialect's way). */
/** Refunds with their payment's merchant: a merchant's refunds are those of its payments. */
const MERCHANT_REFUNDS = '(SELECT r.*, p.merchant_id AS merchant_id FROM refunds r JOIN payments p ON p.id = r.payment_id) AS merchant_refunds'

export function sharedRefundStore (db: SqlRunner): Pick<RefundStore, 'get' | 'list' | 'listForMerchant' | 'getByConnectorReference'> {
  return {
    async getByConnectorReference (paymentId, reference) {
      const row = await db.get(refundSql.byConnectorReference, { paymentId, reference })
      return row === undefined ? undefined : refundFromRow(row)
    },
    async get (paymentId, refundId) {
      const row = await db.get(refundSql.get, { paymentId, refundId })
      return row === undefined ? undefined : refundFromRow(row)
    },
    async list (paymentId, page) {
      const result = await listPage<RefundRow>(db, { table: 'refunds', scope: { payment_id: paymentId }, page })
      return { data: result.data.map(refundFromRow), hasMore: result.hasMore }
    },
    async listForMerchant (query) {
      const result = await listPage<RefundRow>(db, { table: MERCHANT_REFUNDS, scope: { merchant_id: query.merchantId }, filters: { status: query.status }, created: query, page: query })
      return { data: result.data.map(refundFromRow), hasMore: result.hasMore }
    }
  }
}
