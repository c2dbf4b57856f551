import { auditMember, writeAudit } from './audit'
import { auditEntry } from '../audit-scope'
import { outcomeOfEvent } from '../../domain/audit'
import type { DomainEvent, EventOf, NewEvent } from '../../domain/events'
import { newId } from '../../domain/ids'
import { ATTEMPT_LOG_MAX, receives } from '../../domain/webhooks'
import type { EventStore, WebhookStore } from '../types'
import { eventSql, sharedEventStore } from '../events'
import { endpointParams, sharedWebhookStore, webhookSql } from '../webhooks'
import { postgresRunner, query } from './runner'
import { postgresKeyStatements } from './idempotency'
import { inTransaction, onlyRow, Params, statement, withMembers, type PgPool, type Queryable } from './connection'
import { CLAIM_SELECT, claimFromRow, deliveryFromRow, endpointFromRow, EVENT_COLUMNS, eventValues, numberedEvent, type ClaimRow, type DeliveryRow } from '../webhook-rows'

/**
 * A UUIDv7 (as text) made in SQL, as newId() makes them, for rows a statement fans out (PostgreSQL
 * before 18 has no uuidv7()): the clock's milliseconds as the first 48 bits, version 7, the variant
 * and random bits of gen_random_uuid().
 */
const UUIDV7_SQL = 'encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING ' +
  "substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid::text"

/**
 * The outbox writer's SQL, as two CTE members of a statement: the event, numbered after its
 * resource's last one (MAX + 1 in the statement's snapshot), and a pending delivery for each of the
 * merchant's enabled endpoints that receives its type. With `onlyIf` (a condition on other members)
 * neither is written when it is false. The caller locked the row the event describes before this
 * statement began, or retries on a clash of the unique (resource_id, sequence) index: a statement
 * that waited for that lock still reads the snapshot taken before it.
 */
export function eventMembers (p: Params, event: NewEvent, onlyIf?: string): string[] {
  // Typed: a parameter in a SELECT list has no column to take its type from.
  const [id, merchantId, type, resourceType, resourceId, data, createdAt, dataFormat] = eventValues(event, 0)
    .filter((_, i) => EVENT_COLUMNS[i] !== 'sequence').map((value) => `${p.add(value)}::text`)
  const due = `${p.add(Date.parse(event.createdAt))}::bigint`
  // The event's change is the request's when it owes an audit entry: the entry joins the same statement.
  const audit = auditEntry(event.resourceId, outcomeOfEvent(event.type), event.merchantId)
  return [
    `ev AS (INSERT INTO events (${EVENT_COLUMNS.join(', ')})
      SELECT ${id}, ${merchantId}, ${type}, ${resourceType}, ${resourceId}, (SELECT COALESCE(MAX(sequence), 0) + 1 FROM events WHERE resource_id = ${resourceId}), ${data}, ${createdAt}, ${dataFormat}
      ${onlyIf === undefined ? '' : `WHERE ${onlyIf}`}
      RETURNING id, sequence)`,
    `dl AS (INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, merchant_id, status, next_attempt_at, created_at, updated_at)
      SELECT ${UUIDV7_SQL}, w.id, ev.id, ${type}, ${merchantId}, 'pending', ${due}, ${createdAt}, ${createdAt}
      FROM ev JOIN webhook_endpoints w ON w.merchant_id = ${merchantId} AND w.disabled_reason IS NULL AND (w.enabled_events IS NULL OR w.enabled_events::jsonb ? ${type}))`,
    ...(audit === undefined ? [] : [auditMember(p, audit, 'EXISTS (SELECT 1 FROM ev)')])
  ]
}

/** The constraint a concurrent writer's event of the same resource and number violates. */
export const EVENT_SEQUENCE_CONSTRAINT = 'events_resource_sequence'

/** The outbox writer, inside another store's transaction (after locking the row the event describes): one statement. */
export async function appendEvent (client: Queryable, event: NewEvent): Promise<DomainEvent> {
  const p = new Params()
  const { rows } = await client.query<{ sequence: string }>(statement(withMembers(eventMembers(p, event), 'SELECT sequence FROM ev'), p.values))
  const { sequence } = onlyRow(rows, 'the event insert')
  return numberedEvent(event, Number(sequence))
}

export async function appendEventOf<T> (client: Queryable, make: EventOf<T> | undefined, stored: T): Promise<void> {
  const event = make?.(stored)
  if (event !== undefined) await appendEvent(client, event)
}

export function postgresEventStore (pool: PgPool): EventStore {
  return {
    ...sharedEventStore(postgresRunner(pool)),
    async appendPaymentPending (event) {
      return await inTransaction(pool, 'READ COMMITTED', async (client) => {
        // The payment's lock: its settlement (which numbers its own event) waits for this, or this for it.
        const { rows } = await client.query({ name: 'event-lock-pending-payment', text: "SELECT 1 FROM payments WHERE id = $1 AND status = 'pending' FOR UPDATE", values: [event.resourceId] })
        if (rows.length === 0) return undefined
        const existing = await client.query(query(eventSql.hasPendingEvent, { resourceId: event.resourceId }))
        if (existing.rows.length > 0) return undefined
        return await appendEvent(client, event)
      })
    },
    async reap (before, limit) {
      return await inTransaction(pool, 'READ COMMITTED', async (client) => {
        const { rows } = await client.query<{ id: string }>({
          name: 'event-reap-select',
          text: 'SELECT id FROM events WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED',
          values: [before, limit]
        })
        if (rows.length === 0) return 0
        const ids = rows.map((row) => row.id)
        await client.query({ name: 'event-reap-deliveries', text: 'DELETE FROM webhook_deliveries WHERE event_id = ANY($1::text[])', values: [ids] })
        await client.query({ name: 'event-reap', text: 'DELETE FROM events WHERE id = ANY($1::text[])', values: [ids] })
        return ids.length
      })
    }
  }
}

export function postgresWebhookStore (pool: PgPool): WebhookStore {
  const db = postgresRunner(pool)
  return {
    ...sharedWebhookStore(db),
    async createEndpoint (endpoint, max, completion) {
      return await inTransaction(pool, 'READ COMMITTED', async (client) => {
        // The merchant's row lock serialises endpoint creation per merchant (the count stays exact).
        await client.query({ name: 'wh-lock-merchant', text: 'SELECT 1 FROM merchants WHERE id = $1 FOR UPDATE', values: [endpoint.merchantId] })
        const { count } = onlyRow((await client.query<{ count: string }>(query(webhookSql.countEndpoints, { merchantId: endpoint.merchantId }))).rows, 'count(*)')
        if (Number(count) >= max) return false
        await client.query(query(webhookSql.insertEndpoint, endpointParams(endpoint)))
        await writeAudit(client, auditEntry(endpoint.id, 'succeeded', endpoint.merchantId))
        if (completion !== undefined) await postgresKeyStatements.storeResponse(client, completion.ref, completion.response)
        return true
      })
    },
    async updateEndpoint (endpoint, expectedUpdatedAt, completion) {
      const update = query(webhookSql.updateEndpoint, { ...endpointParams(endpoint), expectedUpdatedAt })
      const audit = auditEntry(endpoint.id, 'succeeded', endpoint.merchantId)
      if (completion === undefined && audit === undefined) return (await pool.query(update)).rowCount === 1
      // The Idempotency-Key's response and the audit entry commit with the change, only when the compare-and-set wins.
      return await inTransaction(pool, 'READ COMMITTED', async (client) => {
        if ((await client.query(update)).rowCount !== 1) return false
        await writeAudit(client, audit)
        if (completion !== undefined) await postgresKeyStatements.storeResponse(client, completion.ref, completion.response)
        return true
      })
    },
    async deleteEndpoint (merchantId, id) {
      return await inTransaction(pool, 'READ COMMITTED', async (client) => {
        const { rows } = await client.query({ name: 'wh-lock', text: 'SELECT 1 FROM webhook_endpoints WHERE id = $1 AND merchant_id = $2 FOR UPDATE', values: [id, merchantId] })
        if (rows.length === 0) return false
        await client.query(query(webhookSql.deleteDeliveries, { endpointId: id }))
        await client.query(query(webhookSql.deleteEndpoint, { id, merchantId }))
        await writeAudit(client, auditEntry(id, 'succeeded', merchantId))
        return true
      })
    },
    async retryDelivery (endpointId, deliveryId, now, at) {
      const audit = auditEntry(deliveryId)
      const retried = audit === undefined
        ? await db.get(webhookSql.retry, { endpointId, id: deliveryId, now, at })
        : await inTransaction(pool, 'READ COMMITTED', async (client) => {
          const row = await postgresRunner(client).get(webhookSql.retry, { endpointId, id: deliveryId, now, at })
          if (row !== undefined) await writeAudit(client, auditEntry(deliveryId, 'succeeded', row.merchant_id))
          return row
        })
      if (retried !== undefined) return { kind: 'retried', delivery: deliveryFromRow(retried) }
      const row = await db.get(webhookSql.getDelivery, { endpointId, id: deliveryId })
      return row === undefined ? { kind: 'not_found' } : { kind: 'in_flight', leaseUntil: Number(row.lease_until) }
    },
    async replay (endpoint, range, now, limit) {
      const rows = await db.all(webhookSql.eventsInRange, {
        merchantId: endpoint.merchantId, from: range.from, afterCreatedAt: range.after?.createdAt ?? range.from, afterId: range.after?.id ?? '', to: range.to, limit: limit + 1
      })
      const batch = rows.slice(0, limit)
      const last = batch.at(-1)
      const next = rows.length > limit && last !== undefined ? { next: last.id } : {}
      const wanted = batch.filter((row) => receives(endpoint, row.type as never))
      if (wanted.length === 0) return { replayed: 0, ...next }
      const at = new Date(now).toISOString()
      const audit = auditEntry(endpoint.id, 'succeeded', endpoint.merchantId)
      await (audit === undefined ? insertReplay(pool) : inTransaction(pool, 'READ COMMITTED', async (client) => { await insertReplay(client); await writeAudit(client, audit) }))
      return { replayed: wanted.length, ...next }
      async function insertReplay (client: Queryable): Promise<void> {
        await client.query({
          name: 'wh-replay-insert',
          text: `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, merchant_id, status, next_attempt_at, created_at, updated_at)
          SELECT u.id, $2, u.event_id, u.event_type, $3, 'pending', $4, $5, $5 FROM unnest($1::text[], $6::text[], $7::text[]) AS u (id, event_id, event_type)`,
          values: [wanted.map(() => newId()), endpoint.id, endpoint.merchantId, now, at, wanted.map((row) => row.id), wanted.map((row) => row.type)]
        })
      }
    },
    async beginTestDelivery (event, delivery) {
      return await inTransaction(pool, 'READ COMMITTED', async (client) => {
        // The endpoint's lock: its other events (webhook_endpoint.disabled) are numbered after this one, or this after them.
        const { rows: endpoints } = await client.query({
          name: 'wh-test-lock',
          text: 'SELECT 1 FROM webhook_endpoints WHERE id = $1 AND merchant_id = $2 FOR UPDATE',
          values: [delivery.endpointId, event.merchantId]
        })
        if (endpoints.length === 0) return undefined
        const values = eventValues(event, 0).filter((_, i) => EVENT_COLUMNS[i] !== 'sequence')
        const { rows } = await client.query<{ sequence: string }>({
          name: 'wh-test-event',
          text: `INSERT INTO events (${EVENT_COLUMNS.join(', ')})
            SELECT $1::text, $2::text, $3::text, $4::text, $5::text, (SELECT COALESCE(MAX(sequence), 0) + 1 FROM events WHERE resource_id = $5::text), $6::text, $7::text, $8::text
            RETURNING sequence`,
          values
        })
        const { sequence } = onlyRow(rows, 'the test event insert')
        await writeAudit(client, auditEntry(delivery.endpointId, 'succeeded', event.merchantId))
        await client.query(query(webhookSql.insertLeasedDelivery, {
          id: delivery.id, endpointId: delivery.endpointId, eventId: event.id, eventType: event.type, merchantId: event.merchantId, leaseUntil: delivery.leaseUntil, at: delivery.at
        }))
        return numberedEvent(event, Number(sequence))
      })
    },
    /*
     * Every instance claims at once: FOR UPDATE SKIP LOCKED hands each due delivery to one of
     * them, and the lease (re-checked on the newest row version) keeps it theirs until the
     * attempt is recorded or the lease runs out (a crashed instance's deliveries are due again).
     */
    async claimDue (now, leaseUntil, limit) {
      return await inTransaction(pool, 'READ COMMITTED', async (client) => {
        const { rows: leased } = await client.query<{ id: string }>({
          name: 'wh-claim',
          text: `UPDATE webhook_deliveries SET lease_until = $2
            WHERE id IN (
              SELECT id FROM webhook_deliveries
              WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
              ORDER BY next_attempt_at LIMIT $3
              FOR UPDATE SKIP LOCKED)
            AND status = 'pending' AND (lease_until IS NULL OR lease_until <= $1)
            RETURNING id`,
          values: [now, leaseUntil, limit]
        })
        if (leased.length === 0) return []
        const { rows } = await client.query<ClaimRow>({ name: 'wh-claimed', text: `${CLAIM_SELECT} WHERE d.id = ANY($1::text[]) ORDER BY d.next_attempt_at`, values: [leased.map((row) => row.id)] })
        return rows.map(claimFromRow)
      })
    },
    async recordAttempt (record) {
      return await inTransaction(pool, 'READ COMMITTED', async (client) => {
        const { rows } = await client.query<DeliveryRow>({
          name: 'wh-leased',
          text: 'SELECT * FROM webhook_deliveries WHERE id = $1 AND lease_until = $2 FOR UPDATE',
          values: [record.deliveryId, record.leaseUntil]
        })
        const [leased] = rows
        if (leased === undefined) return false
        const log = [...JSON.parse(leased.attempt_log) as unknown[], record.attempt].slice(-ATTEMPT_LOG_MAX)
        const { outcome } = record
        const tx = postgresRunner(client)
        await tx.write(webhookSql.saveAttempt, {
          id: record.deliveryId, status: outcome.kind === 'retry' ? 'pending' : outcome.kind, nextAttemptAt: outcome.kind === 'retry' ? outcome.at : null, log: JSON.stringify(log), now: record.now
        })
        if (outcome.kind === 'succeeded') await tx.write(webhookSql.endpointSucceeded, { id: record.endpointId, at: record.now })
        if (outcome.kind === 'failed' && outcome.disable !== undefined) {
          const disabled = await tx.get(webhookSql.disable, { id: record.endpointId, reason: outcome.disable, now: record.now, failingSince: outcome.failingSince ?? '' })
          if (disabled !== undefined) await appendEventOf(client, record.disabledEvent, endpointFromRow(disabled))
        }
        return true
      })
    }
  }
}
