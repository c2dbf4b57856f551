import type { DashboardSession } from '../domain/dashboard-sessions'
import { raw, sql, write, type SqlRunner } from './sql'
import { auditInsert, auditParams } from './audit-log'
import type { DashboardSessionStore } from './types'

const COLUMNS = 'id, credential_id, csrf_hash, created_at, last_used_at, expires_at'

interface SessionRow {
  id: string
  credential_id: string
  csrf_hash: string
  created_at: string
  last_used_at: string
  expires_at: string
}

function sessionFromRow (row: SessionRow): DashboardSession {
  return {
    id: row.id,
    credentialId: row.credential_id,
    csrfHash: row.csrf_hash,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at
  }
}

const sessionSql = {
  insert: sql<DashboardSession>('dashboard-session-insert')`
    INSERT INTO dashboard_sessions (${raw(COLUMNS)}) VALUES (${'id'}, ${'credentialId'}, ${'csrfHash'}, ${'createdAt'}, ${'lastUsedAt'}, ${'expiresAt'})`,
  get: sql<{ id: string }, SessionRow>('dashboard-session-get')`SELECT ${raw(COLUMNS)} FROM dashboard_sessions WHERE id = ${'id'}`,
  // Never moves lastUsedAt backwards (two instances renewing at once).
  touch: sql<{ id: string, at: string }>('dashboard-session-touch')`
    UPDATE dashboard_sessions SET last_used_at = ${'at'} WHERE id = ${'id'} AND last_used_at < ${'at'}`,
  delete: sql<{ id: string }>('dashboard-session-delete')`DELETE FROM dashboard_sessions WHERE id = ${'id'}`,
  deleteFor: sql<{ credentialId: string, except: string }>('dashboard-session-delete-for')`
    DELETE FROM dashboard_sessions WHERE credential_id = ${'credentialId'} AND id <> ${'except'}`,
  deleteEnded: sql<{ now: string, idleBefore: string }>('dashboard-session-delete-ended')`
    DELETE FROM dashboard_sessions WHERE expires_at <= ${'now'} OR last_used_at <= ${'idleBefore'}`
}

/** The dashboard session store, written once for both databases. */
export function dashboardSessionStore (db: SqlRunner): DashboardSessionStore {
  return {
    async create (session, audit) {
      await db.writeThen(sessionSql.insert, session, audit === undefined ? [] : [write(auditInsert, auditParams(audit))])
    },
    async get (id) {
      const row = await db.get(sessionSql.get, { id })
      return row === undefined ? undefined : sessionFromRow(row)
    },
    async touch (id, at) { await db.write(sessionSql.touch, { id, at }) },
    async delete (id, audit) {
      return await db.writeThen(sessionSql.delete, { id }, audit === undefined ? [] : [write(auditInsert, auditParams(audit))]) === 1
    },
    async deleteFor (credentialId, except) { return await db.write(sessionSql.deleteFor, { credentialId, except: except ?? '' }) },
    async deleteEnded (now, idleBefore) { return await db.write(sessionSql.deleteEnded, { now, idleBefore }) }
  }
}
