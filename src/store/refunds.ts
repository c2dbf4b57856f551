import { listPage } from './listing'
import { refundFromRow, type RefundRow } from './rows'
import { sql, type SqlRunner } from './sql'
import type { RefundStore } from './types'

export const refundSql = {
  get: sql<{ paymentId: string, refundId: string }, RefundRow>('refund-get')`SELECT * FROM refunds WHERE id = ${'refundId'} AND payment_id = ${'paymentId'}`
}

/** The refund store's reads, the same on both databases (its writes lock the payment in each dialect's way). */
export function sharedRefundStore (db: SqlRunner): Pick<RefundStore, 'get' | 'list'> {
  return {
    async get (paymentId, refundId) {
      const row = await db.get(refundSql.get, { paymentId, refundId })
      return row === undefined ? undefined : refundFromRow(row)
    },
    async list (paymentId, page) {
      const result = await listPage<RefundRow>(db, { table: 'refunds', scope: { payment_id: paymentId }, page })
      return { data: result.data.map(refundFromRow), hasMore: result.hasMore }
    }
  }
}
