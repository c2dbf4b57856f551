import type { WebhookEndpoint } from '../domain/webhooks'
import { listPage } from './listing'
import { columnParams, insertSql, raw, sql, sqlOf, type SqlRunner } from './sql'
import type { WebhookStore } from './types'
import { deliveryFromRow, ENDPOINT_COLUMNS, ENDPOINT_MUTABLE_COLUMNS, endpointFromRow, endpointValues, type DeliveryRow, type EndpointRow } from './webhook-rows'

type EndpointParams = Record<typeof ENDPOINT_COLUMNS[number], unknown>
type Secrets = { id: string, secret: string, previous_secret: string | null }

/**
 * The webhook store's statements, written once. What each dialect keeps (sqlite/ and postgres/events.ts):
 * the locks (PostgreSQL's FOR UPDATE of the merchant, endpoint or delivery, SKIP LOCKED claims), the
 * outbox's numbering and fan-out, and the replay's batch insert.
 */
export const webhookSql = {
  countEndpoints: sql<{ merchantId: string }, { count: number | string }>('wh-count')`SELECT count(*) AS count FROM webhook_endpoints WHERE merchant_id = ${'merchantId'}`,
  insertEndpoint: insertSql('wh-insert', 'webhook_endpoints', ENDPOINT_COLUMNS),
  listEndpoints: sql<{ merchantId: string }, EndpointRow>('wh-list')`SELECT * FROM webhook_endpoints WHERE merchant_id = ${'merchantId'} ORDER BY created_at, id`,
  getEndpoint: sql<{ merchantId: string, id: string }, EndpointRow>('wh-get')`SELECT * FROM webhook_endpoints WHERE id = ${'id'} AND merchant_id = ${'merchantId'}`,
  /** The compare-and-set of an endpoint's change: only while it is still as the caller read it. */
  updateEndpoint: sqlOf<EndpointParams & { expectedUpdatedAt: string }>('wh-update', [
    raw('UPDATE webhook_endpoints SET '), ...ENDPOINT_MUTABLE_COLUMNS.flatMap((column, i) => [raw(`${i === 0 ? '' : ', '}${column} = `), column]),
    raw(' WHERE id = '), 'id', raw(' AND merchant_id = '), 'merchant_id', raw(' AND updated_at = '), 'expectedUpdatedAt']),
  deleteDeliveries: sql<{ endpointId: string }>('wh-delete-deliveries')`DELETE FROM webhook_deliveries WHERE endpoint_id = ${'endpointId'}`,
  deleteEndpoint: sql<{ merchantId: string, id: string }>('wh-delete')`DELETE FROM webhook_endpoints WHERE id = ${'id'} AND merchant_id = ${'merchantId'}`,
  getDelivery: sql<{ endpointId: string, id: string }, DeliveryRow>('wh-delivery')`SELECT * FROM webhook_deliveries WHERE id = ${'id'} AND endpoint_id = ${'endpointId'}`,
  /** A delivery due again now, unless an attempt holds its lease. */
  retry: sql<{ endpointId: string, id: string, now: number, at: string }, DeliveryRow>('wh-retry')`
    UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ${'now'}, lease_until = NULL, round_start = attempts, updated_at = ${'at'}
    WHERE id = ${'id'} AND endpoint_id = ${'endpointId'} AND (lease_until IS NULL OR lease_until <= ${'now'}) RETURNING *`,
  /** A replay's page of the merchant's events, after `(afterCreatedAt, afterId)`. */
  eventsInRange: sql<{ merchantId: string, from: string, afterCreatedAt: string, afterId: string, to: string, limit: number }, { id: string, type: string }>('wh-replay-events')`
    SELECT id, type FROM events WHERE merchant_id = ${'merchantId'} AND created_at >= ${'from'} AND (created_at, id) > (${'afterCreatedAt'}, ${'afterId'}) AND created_at < ${'to'}
    ORDER BY created_at, id LIMIT ${'limit'}`,
  /** A test event's delivery, leased to the caller that sends it at once. */
  insertLeasedDelivery: sql<{ id: string, endpointId: string, eventId: string, eventType: string, merchantId: string, leaseUntil: number, at: string }>('wh-test-delivery')`
    INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, merchant_id, status, next_attempt_at, lease_until, created_at, updated_at)
    VALUES (${'id'}, ${'endpointId'}, ${'eventId'}, ${'eventType'}, ${'merchantId'}, 'pending', ${'leaseUntil'}, ${'leaseUntil'}, ${'at'}, ${'at'})`,
  saveAttempt: sql<{ id: string, status: string, nextAttemptAt: number | null, log: string, now: string }>('wh-save-attempt')`
    UPDATE webhook_deliveries SET status = ${'status'}, attempts = attempts + 1, next_attempt_at = ${'nextAttemptAt'}, lease_until = NULL, attempt_log = ${'log'}, updated_at = ${'now'}
    WHERE id = ${'id'}`,
  endpointSucceeded: sql<{ id: string, at: string }>('wh-succeeded')`UPDATE webhook_endpoints SET last_success_at = ${'at'} WHERE id = ${'id'}`,
  /** Disables an endpoint still failing: gone, or no success since `failingSince`. Answers it when it did. */
  disable: sql<{ id: string, reason: string, now: string, failingSince: string }, EndpointRow>('wh-disable')`
    UPDATE webhook_endpoints SET disabled_reason = ${'reason'}, updated_at = ${'now'}
    WHERE id = ${'id'} AND disabled_reason IS NULL AND (${'reason'} = 'gone' OR last_success_at IS NULL OR last_success_at < ${'failingSince'})
    RETURNING *`,
  oldestDue: sql<{ now: number }, { oldest: number | string | null }>('wh-oldest-due')`
    SELECT MIN(next_attempt_at) AS oldest FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ${'now'}`,
  secretsNotUnder: sql<{ afterId: string, length: number, prefix: string, limit: number }, Secrets>('wh-secrets-not-under')`
    SELECT id, secret, previous_secret FROM webhook_endpoints
    WHERE id > ${'afterId'} AND (substr(secret, 1, CAST(${'length'} AS INTEGER)) <> ${'prefix'} OR substr(previous_secret, 1, CAST(${'length'} AS INTEGER)) <> ${'prefix'})
    ORDER BY id LIMIT ${'limit'}`,
  replaceSecrets: sql<{ id: string, secret: string, previousSecret: string | null, nextSecret: string, nextPreviousSecret: string | null }>('wh-replace-secrets')`
    UPDATE webhook_endpoints SET secret = ${'nextSecret'}, previous_secret = ${'nextPreviousSecret'}
    WHERE id = ${'id'} AND secret = ${'secret'} AND previous_secret IS NOT DISTINCT FROM ${'previousSecret'}`
}

export const endpointParams = (endpoint: WebhookEndpoint): EndpointParams => columnParams(ENDPOINT_COLUMNS, endpointValues(endpoint))

/** The webhook store's methods that are one statement, the same on both databases. */
export function sharedWebhookStore (db: SqlRunner): Pick<WebhookStore, 'listEndpoints' | 'getEndpoint' | 'listDeliveries' | 'oldestDueAt' | 'secretsNotUnder' | 'replaceSecrets'> {
  return {
    async listEndpoints (merchantId) { return (await db.all(webhookSql.listEndpoints, { merchantId })).map(endpointFromRow) },
    async getEndpoint (merchantId, id) {
      const row = await db.get(webhookSql.getEndpoint, { merchantId, id })
      return row === undefined ? undefined : endpointFromRow(row)
    },
    async listDeliveries (endpointId, page) {
      const result = await listPage<DeliveryRow>(db, { table: 'webhook_deliveries', scope: { endpoint_id: endpointId }, page })
      return { data: result.data.map(deliveryFromRow), hasMore: result.hasMore }
    },
    async oldestDueAt (now) {
      const oldest = (await db.get(webhookSql.oldestDue, { now }))?.oldest
      return oldest === null || oldest === undefined ? undefined : Number(oldest)
    },
    async secretsNotUnder (prefix, afterId, limit) {
      return (await db.all(webhookSql.secretsNotUnder, { afterId, length: prefix.length, prefix, limit }))
        .map((row) => ({ id: row.id, secret: row.secret, previousSecret: row.previous_secret }))
    },
    async replaceSecrets (expected, next) {
      return await db.write(webhookSql.replaceSecrets, {
        id: expected.id, secret: expected.secret, previousSecret: expected.previousSecret, nextSecret: next.secret, nextPreviousSecret: next.previousSecret
      }) === 1
    }
  }
}
