import { auditWrites } from './audit-log'
import type { ConnectorStatus, ConnectorType, StoredConnectorAccount } from '../domain/connectors'
import { zeroCounts, type CallOutcome, type ConnectorCall, type ConnectorCallFigures } from '../domain/connector-stats'
import { raw, sql, type SqlRunner } from './sql'
import type { ConnectorAccountStore, StoredCredentials } from './types'

const COLUMNS = 'id, merchant_id, type, priority, status, description, credentials, credentials_hint, created_at, updated_at, deleted_at'
const ROUTING_ORDER = raw('ORDER BY priority, created_at, id')

interface ConnectorRow {
  id: string
  merchant_id: string
  type: string
  priority: number | string
  status: string
  description: string | null
  credentials: string
  credentials_hint: string | null
  created_at: string
  updated_at: string
  deleted_at: string | null
}

function accountFromRow (row: ConnectorRow): StoredConnectorAccount {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    type: row.type as ConnectorType,
    priority: Number(row.priority),
    status: row.status as ConnectorStatus,
    description: row.description,
    credentialsHint: row.credentials_hint,
    credentials: row.credentials,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at
  }
}

type InsertParams = StoredConnectorAccount & { max: number }
interface StatsParams { merchantId: string, createdGte: string, createdLt: string }
const CALL_COLUMNS = 'id, payment_id, merchant_id, connector_id, connector_type, outcome, code, started_at, answered_at, duration_ms'
/** Answered calls: the PSP said something about the charge (see ANSWERED_OUTCOMES); only these have a latency. */
const ANSWERED = raw("outcome IN ('succeeded', 'authorized', 'requires_action', 'declined')")
type UpdateParams = StoredConnectorAccount & { expectedUpdatedAt: string }

export const connectorSql = {
  // One statement: the count and the insert together (SQLite's single writer makes it exact;
  // on PostgreSQL two creations at the same instant may both pass: a soft cap, like the per-merchant key limit).
  insert: sql<InsertParams>('connector-insert')`
    INSERT INTO connector_accounts (${raw(COLUMNS)})
    SELECT ${'id'}, ${'merchantId'}, ${'type'}, CAST(${'priority'} AS INTEGER), ${'status'}, ${'description'}, ${'credentials'}, ${'credentialsHint'},
      ${'createdAt'}, ${'updatedAt'}, NULL
    WHERE (SELECT count(*) FROM connector_accounts WHERE merchant_id = ${'merchantId'} AND deleted_at IS NULL) < ${'max'}`,
  get: sql<{ id: string }, ConnectorRow>('connector-get')`SELECT ${raw(COLUMNS)} FROM connector_accounts WHERE id = ${'id'}`,
  list: sql<{ merchantId: string }, ConnectorRow>('connector-list')`
    SELECT ${raw(COLUMNS)} FROM connector_accounts WHERE merchant_id = ${'merchantId'} AND deleted_at IS NULL ${ROUTING_ORDER}`,
  enabled: sql<{ merchantId: string }, ConnectorRow>('connector-enabled')`
    SELECT ${raw(COLUMNS)} FROM connector_accounts WHERE merchant_id = ${'merchantId'} AND deleted_at IS NULL AND status = 'enabled' ${ROUTING_ORDER}`,
  update: sql<UpdateParams>('connector-update')`
    UPDATE connector_accounts
    SET priority = CAST(${'priority'} AS INTEGER), status = ${'status'}, description = ${'description'}, credentials = ${'credentials'},
        credentials_hint = ${'credentialsHint'}, updated_at = ${'updatedAt'}
    WHERE id = ${'id'} AND updated_at = ${'expectedUpdatedAt'} AND deleted_at IS NULL`,
  softDelete: sql<{ merchantId: string, id: string, at: string }>('connector-soft-delete')`
    UPDATE connector_accounts SET deleted_at = ${'at'}, updated_at = ${'at'}
    WHERE id = ${'id'} AND merchant_id = ${'merchantId'} AND deleted_at IS NULL`,
  credentialsNotUnder: sql<{ prefix: string, length: number, afterId: string, limit: number }, StoredCredentials>('connector-credentials-not-under')`
    SELECT id, credentials FROM connector_accounts
    WHERE id > ${'afterId'} AND substr(credentials, 1, CAST(${'length'} AS INTEGER)) <> ${'prefix'} ORDER BY id LIMIT ${'limit'}`,
  replaceCredentials: sql<{ id: string, expected: string, next: string }>('connector-replace-credentials')`
    UPDATE connector_accounts SET credentials = ${'next'} WHERE id = ${'id'} AND credentials = ${'expected'}`,
  recordAttempt: sql<ConnectorCall>('connector-attempt-insert')`
    INSERT INTO connector_attempts (${raw(CALL_COLUMNS)})
    VALUES (${'id'}, ${'paymentId'}, ${'merchantId'}, ${'connectorId'}, ${'connectorType'}, ${'outcome'}, ${'code'}, ${'startedAt'}, ${'answeredAt'},
      CAST(${'durationMs'} AS INTEGER))`,
  // The calls of the merchant started in the range (the index connector_attempts_merchant), per connector and outcome.
  attemptCounts: sql<StatsParams, { connector_id: string | null, connector_type: string, outcome: string, count: number | string }>('connector-attempt-counts')`
    SELECT connector_id, connector_type, outcome, COUNT(*) AS count FROM connector_attempts
    WHERE merchant_id = ${'merchantId'} AND started_at >= ${'createdGte'} AND started_at < ${'createdLt'}
    GROUP BY connector_id, connector_type, outcome`,
  // Nearest-rank percentiles of the answered calls' durations: the value at rank ceil(p × n) in ascending order,
  // ceil written in integer arithmetic both databases share ((n + 1) / 2 and (95n + 99) / 100 truncate alike).
  attemptLatency: sql<StatsParams, { connector_id: string | null, connector_type: string, p50: number | string | null, p95: number | string | null }>('connector-attempt-latency')`
    WITH answered AS (
      SELECT connector_id, connector_type, duration_ms,
        ROW_NUMBER() OVER (PARTITION BY connector_id, connector_type ORDER BY duration_ms) AS rn,
        COUNT(*) OVER (PARTITION BY connector_id, connector_type) AS n
      FROM connector_attempts
      WHERE merchant_id = ${'merchantId'} AND started_at >= ${'createdGte'} AND started_at < ${'createdLt'} AND ${ANSWERED}
    )
    SELECT connector_id, connector_type,
      MAX(CASE WHEN rn = (n + 1) / 2 THEN duration_ms END) AS p50,
      MAX(CASE WHEN rn = (95 * n + 99) / 100 THEN duration_ms END) AS p95
    FROM answered GROUP BY connector_id, connector_type`
}

function orNull (value: number | string | null): number | null {
  return value === null ? null : Number(value)
}

/** The connector account store: every operation is one statement, written once for both databases. */
export function connectorStore (db: SqlRunner): ConnectorAccountStore {
  return {
    async insert (account, max) { return await db.writeThen(connectorSql.insert, { ...account, max }, auditWrites(account.id, account.merchantId)) === 1 },
    async get (id) {
      const row = await db.get(connectorSql.get, { id })
      return row === undefined ? undefined : accountFromRow(row)
    },
    async listForMerchant (merchantId) { return (await db.all(connectorSql.list, { merchantId })).map(accountFromRow) },
    async enabledFor (merchantId) { return (await db.all(connectorSql.enabled, { merchantId })).map(accountFromRow) },
    async update (account, expectedUpdatedAt) {
      return await db.writeThen(connectorSql.update, { ...account, expectedUpdatedAt }, auditWrites(account.id, account.merchantId)) === 1
    },
    async softDelete (merchantId, id, at) { return await db.writeThen(connectorSql.softDelete, { merchantId, id, at }, auditWrites(id, merchantId)) === 1 },
    async credentialsNotUnder (prefix, afterId, limit) {
      return await db.all(connectorSql.credentialsNotUnder, { prefix, length: prefix.length, afterId, limit })
    },
    async replaceCredentials (expected, next) {
      return await db.write(connectorSql.replaceCredentials, { id: expected.id, expected: expected.credentials, next }) === 1
    },
    async recordAttempt (call) { await db.write(connectorSql.recordAttempt, call) },
    async attemptStats (query) {
      const [counts, latency] = await Promise.all([db.all(connectorSql.attemptCounts, query), db.all(connectorSql.attemptLatency, query)])
      const byConnector = new Map<string, ConnectorCallFigures>()
      const keyOf = (row: { connector_id: string | null, connector_type: string }): string => `${row.connector_type}:${row.connector_id ?? ''}`
      for (const row of counts) {
        const key = keyOf(row)
        const figures = byConnector.get(key) ?? { connectorId: row.connector_id, connectorType: row.connector_type as ConnectorType, counts: zeroCounts(), p50Ms: null, p95Ms: null }
        figures.counts[row.outcome as CallOutcome] += Number(row.count)
        byConnector.set(key, figures)
      }
      for (const row of latency) {
        const figures = byConnector.get(keyOf(row))
        if (figures !== undefined) Object.assign(figures, { p50Ms: orNull(row.p50), p95Ms: orNull(row.p95) })
      }
      return [...byConnector.values()]
    }
  }
}
