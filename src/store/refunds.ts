import { listPage } from './listing'
import { refundFromRow, type RefundRow } from './rows'
import { sql, type SqlRunner } from './sql'
import type { RefundStore } from './types'

export const refundSql = {
  get: sql<{ paymentId: string, refundId: string }, RefundRow>('refund-get')`SELECT * FROM refunds WHERE id = ${'refundId'} AND payment_id = ${'paymentId'}`,
  byConnectorReference: sql<{ paymentId: string, reference: string }, RefundRow>('refund-by-connector-reference')`
    SELECT * FROM refunds WHERE payment_id = ${'paymentId'} AND connector_reference = ${'reference'}`
}

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
