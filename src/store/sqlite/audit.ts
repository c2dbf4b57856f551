import type { AuditEntry } from '../../domain/audit'
import { auditInsert, auditParams } from '../audit-log'
import type { SqliteHandle } from './connection'
import { prepare } from './runner'

/** Writes the request's audit entry inside the caller's transaction (a no-op when the request owes none). */
export function sqliteAuditWriter (db: SqliteHandle): (entry: AuditEntry | undefined) => void {
  const insert = prepare(db, auditInsert)
  return (entry) => { if (entry !== undefined) insert.run(auditParams(entry)) }
}
