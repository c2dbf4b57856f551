import type { AuditEntry } from '../../domain/audit'
import { auditInsert, auditParams } from '../audit-log'
import { type Params, type Queryable } from './connection'
import { query } from './runner'

/**
 * A CTE member writing the request's audit entry in the statement of its change, only when `condition`
 * (SQL over the statement's other members) holds: the entry records a change that happened.
 */
export function auditMember (p: Params, entry: AuditEntry, condition: string): string {
  const values = auditInsert.values(auditParams(entry), 'postgres')
  // Typed: a parameter in a SELECT list has no column to take its type from (every column is text).
  const typed = values.map((value) => `${p.add(value)}::text`).join(', ')
  return `audit_entry AS (INSERT INTO audit_log SELECT ${typed} WHERE ${condition} ON CONFLICT (id) DO NOTHING)`
}

/** Writes the request's audit entry on `client`, inside its transaction (a no-op when the request owes none). */
export async function writeAudit (client: Queryable, entry: AuditEntry | undefined): Promise<void> {
  if (entry !== undefined) await client.query(query(auditInsert, auditParams(entry)))
}
