import { listPage } from './listing'
import { sql, type SqlRunner } from './sql'
import type { EventStore } from './types'
import { eventFromRow, type EventRow } from './webhook-rows'

export const eventSql = {
  get: sql<{ merchantId: string, id: string }, EventRow>('event-get')`SELECT * FROM events WHERE id = ${'id'} AND merchant_id = ${'merchantId'}`,
  /** Whether the payment has its payment.pending event already (it gets one at most). */
  hasPendingEvent: sql<{ resourceId: string }, { found: number }>('event-has-pending')`SELECT 1 AS found FROM events WHERE resource_id = ${'resourceId'} AND type = 'payment.pending'`
}

/** The event store's reads, the same on both databases (events are written by the stores of the changes they describe). */
export function sharedEventStore (db: SqlRunner): Pick<EventStore, 'get' | 'list'> {
  return {
    async list (query) {
      const page = await listPage<EventRow>(db, {
        table: 'events',
        scope: { merchant_id: query.merchantId },
        filters: { type: query.type },
        created: query,
        ...(query.paymentId === undefined
          ? {}
          : {
              // The payment's events and its refunds' (each refund event's resource is the refund).
              conditions: [(param: (value: unknown) => string) =>
                `(resource_id = ${param(query.paymentId)} OR (resource_type = 'refund' AND resource_id IN (SELECT id FROM refunds WHERE payment_id = ${param(query.paymentId)})))`]
            }),
        page: query
      })
      return { data: page.data.map(eventFromRow), hasMore: page.hasMore }
    },
    async get (merchantId, id) {
      const row = await db.get(eventSql.get, { merchantId, id })
      return row === undefined ? undefined : eventFromRow(row)
    }
  }
}
