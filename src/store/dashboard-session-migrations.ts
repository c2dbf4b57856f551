import type { SchemaChange } from './ddl'

/*
 * Issue 30: dashboard sessions. Only hashes of the cookie and CSRF tokens and a reference to the
 * credential (key id or admin-key fingerprint), never a token or a key. Version 110.
 */
export const dashboardSessionSchema: SchemaChange[] = [
  {
    version: 110,
    name: 'dashboard sessions',
    ddl: (d) => `
      CREATE TABLE dashboard_sessions (
        id TEXT PRIMARY KEY,
        credential_id TEXT NOT NULL,
        csrf_hash TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_used_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      )${d.table};
      CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
    `
  }
]
