import { sqliteAuditWriter } from './audit'
import { auditEntry } from '../audit-scope'
import { outcomeOfEvent } from '../../domain/audit'
import type { DomainEvent, EventOf, NewEvent } from '../../domain/events'
import { newId } from '../../domain/ids'
import { ATTEMPT_LOG_MAX, receives } from '../../domain/webhooks'
import type { EventStore, WebhookStore } from '../types'
import { eventSql, sharedEventStore } from '../events'
import { endpointParams, sharedWebhookStore, webhookSql } from '../webhooks'
import { prepare, sqliteRunner } from './runner'
import type { SqliteHandle } from './connection'
import { immediateWrites, type WriteQueue } from './group-commit'
import { sqliteKeyStatements } from './idempotency'
import { CLAIM_SELECT, claimFromRow, deliveryFromRow, endpointFromRow, EVENT_COLUMNS, eventValues, numberedEvent, type ClaimRow, type DeliveryRow, type EndpointRow } from '../webhook-rows'

/**
 * The outbox writer, for use inside another store's write transaction: numbers the
 * event after the resource's last one and adds a pending delivery for each of the
 * merchant's enabled endpoints that receives its type. SQLite's single writer
 * serialises numbering.
 */
export function sqliteOutbox (db: SqliteHandle): { append: (event: NewEvent) => DomainEvent, appendOf: <T>(make: EventOf<T> | undefined, stored: T) => void } {
  // Numbered in the insert itself (one statement): the sequence column's value is the resource's next number, read by
  // a subquery whose parameter (the resource id) takes the sequence's place among eventValues'.
  const sequenceSlot = EVENT_COLUMNS.indexOf('sequence')
  const numberedInsert = db.prepare<unknown[], number>(`INSERT INTO events (${EVENT_COLUMNS.join(', ')})
    VALUES (${EVENT_COLUMNS.map((column) => column === 'sequence' ? '(SELECT COALESCE(MAX(sequence), 0) + 1 FROM events WHERE resource_id = ?)' : '?').join(', ')})
    RETURNING sequence`).pluck()
  const endpoints = db.prepare<[string], Pick<EndpointRow, 'id' | 'enabled_events'>>(
    'SELECT id, enabled_events FROM webhook_endpoints WHERE merchant_id = ? AND disabled_reason IS NULL')
  const insertDelivery = db.prepare(`INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, merchant_id, status, next_attempt_at, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`)
  const audit = sqliteAuditWriter(db)
  const append = (event: NewEvent): DomainEvent => {
    // The event's change is the request's when it owes an audit entry: the entry joins the same transaction.
    audit(auditEntry(event.resourceId, outcomeOfEvent(event.type), event.merchantId))
    const values = eventValues(event, 0)
    values[sequenceSlot] = event.resourceId
    const sequence = numberedInsert.get(...values) as number
    const due = Date.parse(event.createdAt)
    for (const endpoint of endpoints.all(event.merchantId)) {
      if (!receives({ enabledEvents: endpoint.enabled_events === null ? null : JSON.parse(endpoint.enabled_events) }, event.type)) continue
      insertDelivery.run(newId(), endpoint.id, event.id, event.type, event.merchantId, due, event.createdAt, event.createdAt)
    }
    return numberedEvent(event, sequence)
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
  const hasPendingEvent = prepare(db, eventSql.hasPendingEvent)
  const oldest = db.prepare<[string, number], string>('SELECT id FROM events WHERE created_at < ? ORDER BY created_at LIMIT ?').pluck()
  const deleteDeliveries = db.prepare('DELETE FROM webhook_deliveries WHERE event_id = ?')
  const deleteEvent = db.prepare('DELETE FROM events WHERE id = ?')
  return {
    ...sharedEventStore(sqliteRunner(db, writes)),
    async appendPaymentPending (event) {
      return await writes.run(() => {
        if (paymentPending.get(event.resourceId) === undefined || hasPendingEvent.get({ resourceId: event.resourceId }) !== undefined) return undefined
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
  const countEndpoints = prepare(db, webhookSql.countEndpoints)
  const insertEndpoint = prepare(db, webhookSql.insertEndpoint)
  const selectEndpoint = prepare(db, webhookSql.getEndpoint)
  const updateEndpoint = prepare(db, webhookSql.updateEndpoint)
  const deleteDeliveries = prepare(db, webhookSql.deleteDeliveries)
  const deleteEndpoint = prepare(db, webhookSql.deleteEndpoint)
  const selectDelivery = prepare(db, webhookSql.getDelivery)
  const retry = prepare(db, webhookSql.retry)
  const eventsInRange = prepare(db, webhookSql.eventsInRange)
  const insertDelivery = db.prepare(`INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, merchant_id, status, next_attempt_at, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`)
  const due = db.prepare<[number, number, number], ClaimRow>(`${CLAIM_SELECT}
    WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
    ORDER BY d.next_attempt_at LIMIT ?`)
  const lease = db.prepare('UPDATE webhook_deliveries SET lease_until = ? WHERE id = ?')
  const anyDue = db.prepare<[number, number], number>(`SELECT 1 FROM webhook_deliveries
    WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?) LIMIT 1`).pluck()
  const selectLeased = db.prepare<[string, number], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = ? AND lease_until = ?')
  const saveAttempt = prepare(db, webhookSql.saveAttempt)
  const endpointSucceeded = prepare(db, webhookSql.endpointSucceeded)
  const disable = prepare(db, webhookSql.disable)
  const testSequence = db.prepare<[string], number>('SELECT COALESCE(MAX(sequence), 0) + 1 FROM events WHERE resource_id = ?').pluck()
  const insertTestEvent = db.prepare(`INSERT INTO events (${EVENT_COLUMNS.join(', ')}) VALUES (${EVENT_COLUMNS.map(() => '?').join(', ')})`)
  const insertLeasedDelivery = prepare(db, webhookSql.insertLeasedDelivery)
  const audit = sqliteAuditWriter(db)

  return {
    ...sharedWebhookStore(sqliteRunner(db, writes)),
    async createEndpoint (endpoint, max, completion) {
      return await writes.run(() => {
        if (Number(countEndpoints.get({ merchantId: endpoint.merchantId })?.count ?? 0) >= max) return false
        insertEndpoint.run(endpointParams(endpoint))
        audit(auditEntry(endpoint.id, 'succeeded', endpoint.merchantId))
        if (completion !== undefined) keys.storeResponse(completion.ref, completion.response)
        return true
      })
    },
    async updateEndpoint (endpoint, expectedUpdatedAt, completion) {
      return await writes.run(() => {
        const updated = updateEndpoint.run({ ...endpointParams(endpoint), expectedUpdatedAt }) === 1
        if (updated) audit(auditEntry(endpoint.id, 'succeeded', endpoint.merchantId))
        if (updated && completion !== undefined) keys.storeResponse(completion.ref, completion.response)
        return updated
      })
    },
    async deleteEndpoint (merchantId, id) {
      return await writes.run(() => {
        if (selectEndpoint.get({ id, merchantId }) === undefined) return false
        deleteDeliveries.run({ endpointId: id })
        deleteEndpoint.run({ id, merchantId })
        audit(auditEntry(id, 'succeeded', merchantId))
        return true
      })
    },
    async retryDelivery (endpointId, deliveryId, now, at) {
      return await writes.run(() => {
        const retried = retry.get({ endpointId, id: deliveryId, now, at })
        if (retried !== undefined) {
          audit(auditEntry(deliveryId, 'succeeded', retried.merchant_id))
          return { kind: 'retried', delivery: deliveryFromRow(retried) }
        }
        const row = selectDelivery.get({ endpointId, id: deliveryId })
        return row === undefined ? { kind: 'not_found' } : { kind: 'in_flight', leaseUntil: Number(row.lease_until) }
      })
    },
    async replay (endpoint, range, now, limit) {
      return await writes.run(() => {
        const at = new Date(now).toISOString()
        const after = range.after ?? { createdAt: range.from, id: '' }
        const events = eventsInRange.all({ merchantId: endpoint.merchantId, from: range.from, afterCreatedAt: after.createdAt, afterId: after.id, to: range.to, limit: limit + 1 })
        const batch = events.slice(0, limit)
        let replayed = 0
        for (const event of batch) {
          if (!receives(endpoint, event.type as never)) continue
          insertDelivery.run(newId(), endpoint.id, event.id, event.type, endpoint.merchantId, now, at, at)
          replayed++
        }
        if (replayed > 0) audit(auditEntry(endpoint.id, 'succeeded', endpoint.merchantId))
        const last = batch.at(-1)
        return events.length > limit && last !== undefined ? { replayed, next: last.id } : { replayed }
      })
    },
    async beginTestDelivery (event, delivery) {
      return await writes.run(() => {
        if (selectEndpoint.get({ id: delivery.endpointId, merchantId: event.merchantId }) === undefined) return undefined
        const sequence = testSequence.get(event.resourceId) as number
        insertTestEvent.run(...eventValues(event, sequence))
        audit(auditEntry(delivery.endpointId, 'succeeded', event.merchantId))
        insertLeasedDelivery.run({
          id: delivery.id, endpointId: delivery.endpointId, eventId: event.id, eventType: event.type, merchantId: event.merchantId, leaseUntil: delivery.leaseUntil, at: delivery.at
        })
        return numberedEvent(event, sequence)
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
        saveAttempt.run({ id: record.deliveryId, status, nextAttemptAt: outcome.kind === 'retry' ? outcome.at : null, log: JSON.stringify(log), now: record.now })
        if (outcome.kind === 'succeeded') endpointSucceeded.run({ id: record.endpointId, at: record.now })
        if (outcome.kind === 'failed' && outcome.disable !== undefined) {
          const disabled = disable.get({ id: record.endpointId, reason: outcome.disable, now: record.now, failingSince: outcome.failingSince ?? '' })
          if (disabled !== undefined) outbox.appendOf(record.disabledEvent, endpointFromRow(disabled))
        }
        return true
      })
    }
  }
}
