import { sql, type SqlRunner } from './sql'
import type { AwaitingOutcome, ConnectorEventRecord, ConnectorEventStore, ConnectorRefundRecord } from './types'

interface ConnectorEventRow {
  connector_id: string
  event_id: string
  type: string
  received_at: string
  processed_at: string | null
}

function recordFromRow (row: ConnectorEventRow): ConnectorEventRecord {
  return { connectorId: row.connector_id, eventId: row.event_id, type: row.type, receivedAt: row.received_at, processedAt: row.processed_at }
}

interface AwaitingRow {
  kind: AwaitingOutcome['kind']
  payment_id: string
  refund_id: string | null
  since: string
}

type Key = { connectorId: string, eventId: string }

export const connectorEventSql = {
  insert: sql<Key & { type: string, receivedAt: string, payload: string | null }>('connector-event-insert')`
    INSERT INTO connector_events (connector_id, event_id, type, received_at, processed_at, payload)
    VALUES (${'connectorId'}, ${'eventId'}, ${'type'}, ${'receivedAt'}, NULL, ${'payload'})
    ON CONFLICT (connector_id, event_id) DO NOTHING`,
  unprocessed: sql<{ receivedBefore: string, limit: number }, ConnectorEventRow & { payload: string }>('connector-event-unprocessed')`
    SELECT connector_id, event_id, type, received_at, processed_at, payload FROM connector_events
    WHERE processed_at IS NULL AND payload IS NOT NULL AND received_at < ${'receivedBefore'}
    ORDER BY received_at, connector_id, event_id
    LIMIT ${'limit'}`,
  get: sql<Key, ConnectorEventRow>('connector-event-get')`
    SELECT connector_id, event_id, type, received_at, processed_at FROM connector_events
    WHERE connector_id = ${'connectorId'} AND event_id = ${'eventId'}`,
  /* Partial indexes serve each branch (captures in flight, authorizations by capture_before); pending refunds are few. */
  awaiting: sql<{ connectorType: string, before: string, limit: number }, AwaitingRow>('connector-outcomes-awaiting')`
    SELECT 'capture' AS kind, id AS payment_id, NULL AS refund_id, updated_at AS since FROM payments
      WHERE capture_pending_minor IS NOT NULL AND connector_type = ${'connectorType'} AND updated_at < ${'before'}
    UNION ALL
    SELECT 'refund' AS kind, r.payment_id, r.id AS refund_id, r.created_at AS since FROM refunds r JOIN payments p ON p.id = r.payment_id
      WHERE r.status = 'pending' AND p.connector_type = ${'connectorType'} AND r.created_at < ${'before'}
    UNION ALL
    SELECT 'void' AS kind, id AS payment_id, NULL AS refund_id, capture_before AS since FROM payments
      WHERE status = 'requires_capture' AND capture_pending_minor IS NULL AND connector_type = ${'connectorType'} AND capture_before < ${'before'}
    ORDER BY since
    LIMIT ${'limit'}`,
  markProcessed: sql<Key & { at: string }>('connector-event-processed')`
    UPDATE connector_events SET processed_at = ${'at'}
    WHERE connector_id = ${'connectorId'} AND event_id = ${'eventId'} AND processed_at IS NULL`,
  insertRefund: sql<ConnectorRefundRecord>('connector-refund-insert')`
    INSERT INTO connector_refunds (connector_id, refund_reference, charge_reference, amount_minor, currency, received_at)
    VALUES (${'connectorId'}, ${'refundReference'}, ${'chargeReference'}, ${'amountMinor'}, ${'currency'}, ${'receivedAt'})
    ON CONFLICT (connector_id, refund_reference) DO NOTHING`,
  refundedOfCharge: sql<{ connectorId: string, chargeReference: string, currency: string }, { amount_minor: number | string | null, last_at: string | null }>('connector-refunds-of-charge')`
    SELECT SUM(amount_minor) AS amount_minor, MAX(received_at) AS last_at FROM connector_refunds
    WHERE connector_id = ${'connectorId'} AND charge_reference = ${'chargeReference'} AND currency = ${'currency'}`
}

/** The connector events inbox: every operation is one statement, written once for both databases. */
export function connectorEventStore (db: SqlRunner): ConnectorEventStore {
  async function get (connectorId: string, eventId: string): Promise<ConnectorEventRecord | undefined> {
    const row = await db.get(connectorEventSql.get, { connectorId, eventId })
    return row === undefined ? undefined : recordFromRow(row)
  }
  return {
    async record (event) {
      await db.write(connectorEventSql.insert, { ...event, payload: event.payload ?? null })
      const stored = await get(event.connectorId, event.eventId)
      if (stored === undefined) throw new Error(`connector event ${event.eventId} was not recorded`)
      return stored
    },
    get,
    async unprocessed (options) {
      return (await db.all(connectorEventSql.unprocessed, options)).map((row) => ({ ...recordFromRow(row), payload: row.payload }))
    },
    async awaitingOutcomes (options) {
      return (await db.all(connectorEventSql.awaiting, options)).map((row) => ({ kind: row.kind, paymentId: row.payment_id, refundId: row.refund_id, since: row.since }))
    },
    async markProcessed (connectorId, eventId, at) {
      return await db.write(connectorEventSql.markProcessed, { connectorId, eventId, at }) === 1
    },
    async recordRefundAtConnector (refund) {
      await db.write(connectorEventSql.insertRefund, refund)
    },
    async refundedAtConnector (connectorId, chargeReference, currency) {
      const row = await db.get(connectorEventSql.refundedOfCharge, { connectorId, chargeReference, currency })
      return { amountMinor: Number(row?.amount_minor ?? 0), lastAt: row?.last_at ?? null }
    }
  }
}
