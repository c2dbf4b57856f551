import type { SchemaChange } from './ddl'

/*
 * Issue 25: connector accounts, a merchant's accounts at PSPs. Versions 60-69. Credentials are
 * sealed (src/secrets/encryption.ts, the account id as associated data). A deleted account keeps
 * its row (deleted_at): the payments made through it keep settling, refunding and capturing there.
 */
export const connectorSchema: SchemaChange[] = [
  {
    version: 60,
    name: 'connector accounts',
    ddl: (d) => `
      CREATE TABLE connector_accounts (
        id TEXT PRIMARY KEY,
        merchant_id TEXT NOT NULL REFERENCES merchants (id),
        -- No CHECK on type: SQLite cannot alter one, and new connector types come with code, not DDL.
        type TEXT NOT NULL,
        priority INTEGER NOT NULL CHECK (priority BETWEEN 0 AND 1000),
        status TEXT NOT NULL CHECK (status IN ('enabled', 'disabled')),
        description TEXT,
        credentials TEXT NOT NULL,
        credentials_hint TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        deleted_at TEXT
      )${d.table};
      CREATE INDEX connector_accounts_merchant ON connector_accounts (merchant_id, priority, created_at);
    `
  }
]
