import { listPage } from './listing'
import { paymentFromRow, type PaymentRow } from './rows'
import { sql, type SqlRunner } from './sql'
import type { PaymentStore } from './types'

export const paymentSql = {
  get: sql<{ id: string }, PaymentRow>('pay-get')`SELECT * FROM payments WHERE id = ${'id'}`,
  deferRecovery: sql<{ id: string, notBefore: number }>('pay-defer')`
    UPDATE payments SET recovery_lease_until = ${'notBefore'} WHERE id = ${'id'} AND status = 'pending'`,
  recordAttempts: sql<{ id: string, connectorId: string | null, connectorType: string, attempts: string, updatedAt: string }>('pay-attempts')`
    UPDATE payments SET connector_id = ${'connectorId'}, connector_type = ${'connectorType'}, attempts = ${'attempts'}, updated_at = ${'updatedAt'}
    WHERE id = ${'id'} AND status = 'pending'`,
  byConnectorReference: sql<{ connectorId: string, reference: string }, PaymentRow>('pay-by-reference')`
    SELECT * FROM payments WHERE connector_reference = ${'reference'} AND connector_id = ${'connectorId'}`,
  count: sql<Record<string, never>, { count: number | string }>('pay-count')`SELECT count(*) AS count FROM payments`,
  countPending: sql<Record<string, never>, { count: number | string }>('pay-count-pending')`SELECT count(*) AS count FROM payments WHERE status = 'pending'`
}

/** The payment store's one-statement methods, the same on both databases (its transactions are each dialect's own). */
export function sharedPaymentStore (db: SqlRunner): Pick<PaymentStore, 'get' | 'deferRecovery' | 'list' | 'count' | 'countPending' | 'recordAttempts' | 'findByConnectorReference'> {
  return {
    async get (id) {
      const row = await db.get(paymentSql.get, { id })
      return row === undefined ? undefined : paymentFromRow(row)
    },
    async deferRecovery (id, notBefore) { await db.write(paymentSql.deferRecovery, { id, notBefore }) },
    async recordAttempts (payment) {
      const changes = await db.write(paymentSql.recordAttempts, {
        id: payment.id, connectorId: payment.connector.id, connectorType: payment.connector.type, attempts: JSON.stringify(payment.attempts), updatedAt: payment.updatedAt
      })
      return changes === 1
    },
    async findByConnectorReference (connectorId, reference) {
      const row = await db.get(paymentSql.byConnectorReference, { connectorId, reference })
      return row === undefined ? undefined : paymentFromRow(row)
    },
    async list (query) {
      const page = await listPage<PaymentRow>(db, {
        table: 'payments',
        scope: { merchant_id: query.merchantId },
        filters: { status: query.status },
        created: query,
        ...(query.metadata === undefined ? {} : { jsonEntry: { column: 'metadata', ...query.metadata } }),
        page: query
      })
      return { data: page.data.map(paymentFromRow), hasMore: page.hasMore }
    },
    async count () { return Number((await db.get(paymentSql.count, {}))?.count ?? 0) },
    async countPending () { return Number((await db.get(paymentSql.countPending, {}))?.count ?? 0) }
  }
}
