import type { SchemaChange } from './ddl'

/*
 * Issue 43: named users, sign-in throttling and the audit log. Version 160.
 * The audit log is append-only in the database itself: a trigger refuses UPDATE and DELETE (and TRUNCATE on
 * PostgreSQL), whatever the code or a person with a SQL prompt tries.
 */
function appendOnly (kind: 'sqlite' | 'postgres'): string {
  if (kind === 'sqlite') {
    return `
      CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: entries cannot be changed'); END;
      CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: entries cannot be deleted'); END;`
  }
  return `
      CREATE FUNCTION audit_log_refuse() RETURNS trigger LANGUAGE plpgsql AS $refuse$
        BEGIN RAISE EXCEPTION 'audit_log is append-only: entries cannot be changed or deleted' USING ERRCODE = 'insufficient_privilege'; END
      $refuse$;
      CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_refuse();
      CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse();`
}

export const teamSchema: SchemaChange[] = [
  {
    version: 160,
    name: 'users, sign-in throttle and audit log',
    ddl: (d) => `
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        merchant_id TEXT NOT NULL REFERENCES merchants (id),
        email TEXT NOT NULL,
        role TEXT NOT NULL,
        password_hash TEXT,
        totp_secret TEXT,
        totp_enabled_at TEXT,
        invite_hash TEXT,
        invite_expires_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        last_sign_in_at TEXT
      )${d.table};
      CREATE UNIQUE INDEX users_email ON users (email);
      CREATE UNIQUE INDEX users_invite ON users (invite_hash);
      CREATE INDEX users_merchant ON users (merchant_id, created_at);
      CREATE TABLE sign_in_failures (
        subject TEXT PRIMARY KEY,
        failures INTEGER NOT NULL,
        locked_until ${d.bigint},
        updated_at ${d.bigint} NOT NULL
      )${d.table};
      CREATE TABLE audit_log (
        id TEXT PRIMARY KEY,
        merchant_id TEXT,
        created_at TEXT NOT NULL,
        actor_type TEXT NOT NULL,
        actor_id TEXT NOT NULL,
        actor_label TEXT NOT NULL,
        action TEXT NOT NULL,
        resource_type TEXT NOT NULL,
        resource_id TEXT,
        request_id TEXT,
        ip TEXT,
        user_agent TEXT,
        outcome TEXT NOT NULL
      )${d.table};
      CREATE INDEX audit_log_merchant ON audit_log (merchant_id, created_at, id);
      ${appendOnly(d.kind)}
    `
  }
]
