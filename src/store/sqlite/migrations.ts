export interface Migration {
  version: number
  name: string
  sql: string
}

export const sqliteMigrations: Migration[] = [
  {
    version: 1,
    name: 'products',
    sql: `
      CREATE TABLE products (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        price REAL NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
    `
  },
  {
    version: 2,
    name: 'payments and gateway ledger',
    sql: `
      CREATE TABLE payments (
        id TEXT PRIMARY KEY,
        amount_minor INTEGER NOT NULL CHECK (amount_minor > 0),
        currency TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'declined')),
        decline_code TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        recovery_lease_until INTEGER
      ) STRICT;
      CREATE INDEX payments_pending ON payments (created_at) WHERE status = 'pending';
      CREATE TABLE gateway_ledger (
        idempotency_key TEXT PRIMARY KEY,
        charge_id TEXT NOT NULL,
        amount_minor INTEGER NOT NULL,
        currency TEXT NOT NULL,
        outcome TEXT NOT NULL,
        decline_code TEXT,
        created_at TEXT NOT NULL
      ) STRICT;
    `
  },
  {
    version: 3,
    name: 'idempotency keys',
    sql: `
      CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,
        method TEXT NOT NULL,
        path TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        recovery_point TEXT NOT NULL,
        resource_id TEXT,
        response_status INTEGER,
        response_headers TEXT,
        response_body TEXT,
        locked_until INTEGER,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (scope, method, path, key)
      ) STRICT;
      CREATE INDEX idempotency_keys_resource ON idempotency_keys (resource_id);
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
    `
  },
  {
    // Versions 2-9 are reserved for payments and idempotency; merchants start at 10.
    version: 10,
    name: 'merchants',
    sql: `
      CREATE TABLE merchants (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        email TEXT NOT NULL,
        country TEXT,
        default_currency TEXT,
        status TEXT NOT NULL CHECK (status IN ('active', 'suspended')),
        version INTEGER NOT NULL CHECK (version >= 1),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      -- Email uniqueness is the database's job (no check-then-insert race); case-insensitive.
      CREATE UNIQUE INDEX merchants_email_unique ON merchants (lower(email));
    `
  }
]
