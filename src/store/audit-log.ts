import type { AuditEntry, AuditOutcome, ActorType } from '../domain/audit'
import type { Page } from '../domain/pagination'
import { listPage } from './listing'
import { columnParams, insertSql, write, type SqlRunner, type Write } from './sql'
import { auditEntry } from './audit-scope'
import type { AuditLogQuery, AuditLogStore } from './types'

const COLUMNS = ['id', 'merchant_id', 'created_at', 'actor_type', 'actor_id', 'actor_label', 'action', 'resource_type', 'resource_id',
  'request_id', 'ip', 'user_agent', 'outcome'] as const

/**
 * The one insert of an entry, for every store that writes one inside its change's transaction. An id already
 * written is ignored: a request's entry has one id, and the first of its changes to commit carries it.
 */
export const auditInsert = insertSql('audit-insert', 'audit_log', COLUMNS, ' ON CONFLICT (id) DO NOTHING')

export function auditParams (entry: AuditEntry): Record<typeof COLUMNS[number], unknown> {
  return columnParams(COLUMNS, [entry.id, entry.merchantId, entry.at, entry.actor.type, entry.actor.id, entry.actor.label, entry.action,
    entry.resource.type, entry.resource.id, entry.requestId, entry.ip, entry.userAgent, entry.outcome])
}

interface AuditRow {
  id: string
  merchant_id: string | null
  created_at: string
  actor_type: string
  actor_id: string
  actor_label: string
  action: string
  resource_type: string
  resource_id: string | null
  request_id: string | null
  ip: string | null
  user_agent: string | null
  outcome: string
}

function entryFromRow (row: AuditRow): AuditEntry {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    at: row.created_at,
    actor: { type: row.actor_type as ActorType, id: row.actor_id, label: row.actor_label },
    action: row.action,
    resource: { type: row.resource_type, id: row.resource_id },
    requestId: row.request_id,
    ip: row.ip,
    userAgent: row.user_agent,
    outcome: row.outcome as AuditOutcome
  }
}

/** The audit log, written once for both databases. There is no update or delete: the table refuses both. */
export function auditLogStore (db: SqlRunner): AuditLogStore {
  return {
    async append (entry) { await db.write(auditInsert, auditParams(entry)) },
    async list (query: AuditLogQuery): Promise<Page<AuditEntry>> {
      const page = await listPage<AuditRow>(db, {
        table: 'audit_log',
        scope: { merchant_id: query.merchantId },
        filters: { actor_id: query.actorId, action: query.action, resource_type: query.resourceType, resource_id: query.resourceId },
        created: query,
        page: query
      })
      return { data: page.data.map(entryFromRow), hasMore: page.hasMore }
    }
  }
}

/** The audit entry the current request owes for its change of `resourceId`, as writes to join that change (none when it owes none). */
export function auditWrites (resourceId: string | null, merchantId?: string | null): Write[] {
  const entry = auditEntry(resourceId, 'succeeded', merchantId)
  return entry === undefined ? [] : [write(auditInsert, auditParams(entry))]
}
