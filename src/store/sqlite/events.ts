import type { DomainEvent, EventOf, NewEvent } from '../../domain/events'
import { newId } from '../../domain/ids'
import { ATTEMPT_LOG_MAX, receives, type WebhookEndpoint } from '../../domain/webhooks'
import type { EventStore, WebhookStore } from '../types'
import { listPage } from '../listing'
import { sharedEventStore } from '../events'
import { sqliteRunner } from './runner'
import type { SqliteHandle } from './connection'
import { immediateWrites, type WriteQueue } from './group-commit'
import { sqliteKeyStatements } from './idempotency'
import {
  CLAIM_SELECT, claimFromRow, deliveryFromRow, ENDPOINT_COLUMNS, ENDPOINT_MUTABLE_COLUMNS, endpointFromRow, endpointMutableValues, endpointValues, EVENT_COLUMNS, eventValues,
  type ClaimRow, type DeliveryRow, type EndpointRow
} from '../webhook-rows'

/**
 * The outbox writer, for use inside another store's write transaction: numbers the
 * event after the resource's last one and adds a pending delivery for each of the
 * merchant's enabled endpoints that receives its type. SQLite's single writer
 * serialises numbering.
 */
export function sqliteOutbox (db: SqliteHandle): { append: (event: NewEvent) => DomainEvent, appendOf: <T>(make: EventOf<T> | undefined, stored: T) => void } {
  const nextSequence = db.prepare<[string], number>('SELECT COALESCE(MAX(sequence), 0) + 1 FROM events WHERE resource_id = ?').pluck()
  const insertEvent = db.prepare(`INSERT INTO events (${EVENT_COLUMNS.join(', ')}) VALUES (${EVENT_COLUMNS.map(() => '?').join(', ')})`)
  const endpoints = db.prepare<[string], Pick<EndpointRow, 'id' | 'enabled_events'>>(
    'SELECT id, enabled_events FROM webhook_endpoints WHERE merchant_id = ? AND disabled_reason IS NULL')
  const insertDelivery = db.prepare(`INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, merchant_id, status, next_attempt_at, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`)
  const append = (event: NewEvent): DomainEvent => {
    const sequence = nextSequence.get(event.resourceId) as number
    insertEvent.run(...eventValues(event, sequence))
    const due = Date.parse(event.createdAt)
    for (const endpoint of endpoints.all(event.merchantId)) {
      if (!receives({ enabledEvents: endpoint.enabled_events === null ? null : JSON.parse(endpoint.enabled_events) }, event.type)) continue
      insertDelivery.run(newId(), endpoint.id, event.id, event.type, event.merchantId, due, event.createdAt, event.createdAt)
    }
    return { ...event, sequence }
  }
  return {
    append,
    appendOf (make, stored) {
      const event = make?.(stored)
      if (event !== undefined) append(event)
    }
  }
}

export function sqliteEventStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): EventStore {
  const outbox = sqliteOutbox(db)
  const paymentPending = db.prepare<[string], number>("SELECT 1 FROM payments WHERE id = ? AND status = 'pending'").pluck()
  const hasPendingEvent = db.prepare<[string], number>("SELECT 1 FROM events WHERE resource_id = ? AND type = 'payment.pending'").pluck()
  const oldest = db.prepare<[string, number], string>('SELECT id FROM events WHERE created_at < ? ORDER BY created_at LIMIT ?').pluck()
  const deleteDeliveries = db.prepare('DELETE FROM webhook_deliveries WHERE event_id = ?')
  const deleteEvent = db.prepare('DELETE FROM events WHERE id = ?')
  return {
    ...sharedEventStore(sqliteRunner(db, writes)),
    async appendPaymentPending (event) {
      return await writes.run(() => {
        if (paymentPending.get(event.resourceId) === undefined || hasPendingEvent.get(event.resourceId) !== undefined) return undefined
        return outbox.append(event)
      })
    },
    async reap (before, limit) {
      return await writes.run(() => {
        const ids = oldest.all(before, limit)
        for (const id of ids) {
          deleteDeliveries.run(id)
          deleteEvent.run(id)
        }
        return ids.length
      })
    }
  }
}

export function sqliteWebhookStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): WebhookStore {
  const outbox = sqliteOutbox(db)
  const keys = sqliteKeyStatements(db)
  const countEndpoints = db.prepare<[string], number>('SELECT count(*) FROM webhook_endpoints WHERE merchant_id = ?').pluck()
  const insertEndpoint = db.prepare(`INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS.join(', ')}) VALUES (${ENDPOINT_COLUMNS.map(() => '?').join(', ')})`)
  const listEndpoints = db.prepare<[string], EndpointRow>('SELECT * FROM webhook_endpoints WHERE merchant_id = ? ORDER BY created_at, id')
  const selectEndpoint = db.prepare<[string, string], EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = ? AND merchant_id = ?')
  const selectEndpointById = db.prepare<[string], EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = ?')
  const updateEndpoint = db.prepare(`UPDATE webhook_endpoints SET ${ENDPOINT_MUTABLE_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE id = ? AND merchant_id = ? AND updated_at = ?`)
  const deleteDeliveries = db.prepare('DELETE FROM webhook_deliveries WHERE endpoint_id = ?')
  const deleteEndpoint = db.prepare('DELETE FROM webhook_endpoints WHERE id = ? AND merchant_id = ?')
  const selectDelivery = db.prepare<[string, string], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?')
  const retry = db.prepare(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, lease_until = NULL, round_start = attempts, updated_at = ?
    WHERE id = ? AND endpoint_id = ? AND (lease_until IS NULL OR lease_until <= ?)`)
  const eventsInRange = db.prepare<[string, string, string, string, string, number], { id: string, type: string }>(
    'SELECT id, type FROM events WHERE merchant_id = ? AND created_at >= ? AND (created_at, id) > (?, ?) AND created_at < ? ORDER BY created_at, id LIMIT ?')
  const insertDelivery = db.prepare(`INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, merchant_id, status, next_attempt_at, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`)
  const due = db.prepare<[number, number, number], ClaimRow>(`${CLAIM_SELECT}
    WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
    ORDER BY d.next_attempt_at LIMIT ?`)
  const lease = db.prepare('UPDATE webhook_deliveries SET lease_until = ? WHERE id = ?')
  const anyDue = db.prepare<[number, number], number>(`SELECT 1 FROM webhook_deliveries
    WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?) LIMIT 1`).pluck()
  const selectLeased = db.prepare<[string, number], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = ? AND lease_until = ?')
  const saveAttempt = db.prepare(`UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_attempt_at = ?, lease_until = NULL, attempt_log = ?, updated_at = ?
    WHERE id = ?`)
  const endpointSucceeded = db.prepare('UPDATE webhook_endpoints SET last_success_at = ? WHERE id = ?')
  const disable = db.prepare('UPDATE webhook_endpoints SET disabled_reason = ?, updated_at = ? WHERE id = ? AND disabled_reason IS NULL')
  const secretsNotUnder = db.prepare<[string, number, string, number, string, number], { id: string, secret: string, previous_secret: string | null }>(
    `SELECT id, secret, previous_secret FROM webhook_endpoints WHERE id > ? AND (substr(secret, 1, ?) <> ? OR substr(previous_secret, 1, ?) <> ?)
    ORDER BY id LIMIT ?`)
  const replaceSecrets = db.prepare('UPDATE webhook_endpoints SET secret = ?, previous_secret = ? WHERE id = ? AND secret = ? AND previous_secret IS ?')
  const testSequence = db.prepare<[string], number>('SELECT COALESCE(MAX(sequence), 0) + 1 FROM events WHERE resource_id = ?').pluck()
  const insertTestEvent = db.prepare(`INSERT INTO events (${EVENT_COLUMNS.join(', ')}) VALUES (${EVENT_COLUMNS.map(() => '?').join(', ')})`)
  const insertLeasedDelivery = db.prepare(`INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, merchant_id, status, next_attempt_at, lease_until, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)`)
  const oldestDue = db.prepare<[number], number | null>("SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ?").pluck()

  return {
    async createEndpoint (endpoint, max, completion) {
      return await writes.run(() => {
        if ((countEndpoints.get(endpoint.merchantId) as number) >= max) return false
        insertEndpoint.run(...endpointValues(endpoint))
        if (completion !== undefined) keys.storeResponse(completion.ref, completion.response)
        return true
      })
    },
    async listEndpoints (merchantId) { return listEndpoints.all(merchantId).map(endpointFromRow) },
    async getEndpoint (merchantId, id) {
      const row = selectEndpoint.get(id, merchantId)
      return row === undefined ? undefined : endpointFromRow(row)
    },
    async updateEndpoint (endpoint, expectedUpdatedAt, completion) {
      return await writes.run(() => {
        const updated = updateEndpoint.run(...endpointMutableValues(endpoint), endpoint.id, endpoint.merchantId, expectedUpdatedAt).changes === 1
        if (updated && completion !== undefined) keys.storeResponse(completion.ref, completion.response)
        return updated
      })
    },
    async deleteEndpoint (merchantId, id) {
      return await writes.run(() => {
        if (selectEndpoint.get(id, merchantId) === undefined) return false
        deleteDeliveries.run(id)
        deleteEndpoint.run(id, merchantId)
        return true
      })
    },
    async listDeliveries (endpointId, page) {
      const result = await listPage<DeliveryRow>(sqliteRunner(db, writes), { table: 'webhook_deliveries', scope: { endpoint_id: endpointId }, page })
      return { data: result.data.map(deliveryFromRow), hasMore: result.hasMore }
    },
    async retryDelivery (endpointId, deliveryId, now, at) {
      return await writes.run(() => {
        const retried = retry.run(now, at, deliveryId, endpointId, now).changes === 1
        const row = selectDelivery.get(deliveryId, endpointId)
        if (row === undefined) return { kind: 'not_found' }
        return retried ? { kind: 'retried', delivery: deliveryFromRow(row) } : { kind: 'in_flight', leaseUntil: Number(row.lease_until) }
      })
    },
    async replay (endpoint, range, now, limit) {
      return await writes.run(() => {
        const at = new Date(now).toISOString()
        const after = range.after ?? { createdAt: range.from, id: '' }
        const events = eventsInRange.all(endpoint.merchantId, range.from, after.createdAt, after.id, range.to, limit + 1)
        const batch = events.slice(0, limit)
        let replayed = 0
        for (const event of batch) {
          if (!receives(endpoint, event.type as never)) continue
          insertDelivery.run(newId(), endpoint.id, event.id, event.type, endpoint.merchantId, now, at, at)
          replayed++
        }
        const last = batch.at(-1)
        return events.length > limit && last !== undefined ? { replayed, next: last.id } : { replayed }
      })
    },
    async beginTestDelivery (event, delivery) {
      return await writes.run(() => {
        if (selectEndpoint.get(delivery.endpointId, event.merchantId) === undefined) return undefined
        const sequence = testSequence.get(event.resourceId) as number
        insertTestEvent.run(...eventValues(event, sequence))
        insertLeasedDelivery.run(delivery.id, delivery.endpointId, event.id, event.type, event.merchantId, delivery.leaseUntil, delivery.leaseUntil, delivery.at, delivery.at)
        return { ...event, sequence }
      })
    },
    async claimDue (now, leaseUntil, limit) {
      // An idle pass reads (WAL readers never wait) and never queues a write.
      if (anyDue.get(now, now) === undefined) return []
      return await writes.run(() => {
        const rows = due.all(now, now, limit)
        for (const row of rows) {
          lease.run(leaseUntil, row.id)
          row.lease_until = leaseUntil
        }
        return rows.map(claimFromRow)
      })
    },
    async recordAttempt (record) {
      return await writes.run(() => {
        const row = selectLeased.get(record.deliveryId, record.leaseUntil)
        if (row === undefined) return false
        const log = [...JSON.parse(row.attempt_log) as unknown[], record.attempt].slice(-ATTEMPT_LOG_MAX)
        const { outcome } = record
        const status = outcome.kind === 'retry' ? 'pending' : outcome.kind
        saveAttempt.run(status, outcome.kind === 'retry' ? outcome.at : null, JSON.stringify(log), record.now, record.deliveryId)
        if (outcome.kind === 'succeeded') endpointSucceeded.run(record.now, record.endpointId)
        if (outcome.kind === 'failed' && outcome.disable !== undefined) {
          const endpoint = endpointFromRow(selectEndpointById.get(record.endpointId) as EndpointRow)
          const stillFailing = outcome.disable === 'gone' || endpoint.lastSuccessAt === null || endpoint.lastSuccessAt < (outcome.failingSince ?? '')
          if (stillFailing && disable.run(outcome.disable, record.now, record.endpointId).changes === 1) {
            outbox.appendOf(record.disabledEvent, endpointFromRow(selectEndpointById.get(record.endpointId) as EndpointRow) satisfies WebhookEndpoint)
          }
        }
        return true
      })
    },
    async oldestDueAt (now) {
      const value = oldestDue.get(now)
      return value === null || value === undefined ? undefined : Number(value)
    },
    async secretsNotUnder (prefix, afterId, limit) {
      return secretsNotUnder.all(afterId, prefix.length, prefix, prefix.length, prefix, limit)
        .map((row) => ({ id: row.id, secret: row.secret, previousSecret: row.previous_secret }))
    },
    async replaceSecrets (expected, next) {
      return await writes.run(() => replaceSecrets.run(next.secret, next.previousSecret, expected.id, expected.secret, expected.previousSecret).changes === 1)
    }
  }
}
