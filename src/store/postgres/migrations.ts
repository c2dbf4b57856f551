import type { Migration } from '../sqlite/migrations'

/**
 * The PostgreSQL schema, versioned like the SQLite one (same version numbers,
 * names, tables and columns, so the rows.ts mappers serve both):
 * money in BIGINT minor units, payment/product/merchant timestamps as ISO-8601
 * TEXT, idempotency and lease times as epoch-millisecond BIGINT.
 * Versions 2-9 are reserved for payments and idempotency; merchants start at 10.
 * Never edit a released migration: add a new version.
 */
export const postgresMigrations: Migration[] = [
  {
    version: 1,
    name: 'products',
    sql: `
      CREATE TABLE products (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        price DOUBLE PRECISION NOT NULL,
        updated_at TEXT NOT NULL
      );
    `
  },
  {
    version: 2,
    name: 'payments and gateway ledger',
    sql: `
      CREATE TABLE payments (
        id TEXT PRIMARY KEY,
        amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
        currency TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'declined')),
        decline_code TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        recovery_lease_until BIGINT
      );
      CREATE INDEX payments_pending ON payments (created_at) WHERE status = 'pending';
      CREATE TABLE gateway_ledger (
        idempotency_key TEXT PRIMARY KEY,
        charge_id TEXT NOT NULL,
        amount_minor BIGINT NOT NULL,
        currency TEXT NOT NULL,
        outcome TEXT NOT NULL,
        decline_code TEXT,
        created_at TEXT NOT NULL
      );
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
        locked_until BIGINT,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (scope, method, path, key)
      );
      CREATE INDEX idempotency_keys_resource ON idempotency_keys (resource_id);
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
    `
  },
  {
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
      );
      -- Email uniqueness is the database's job (no check-then-insert race); case-insensitive.
      CREATE UNIQUE INDEX merchants_email_unique ON merchants (lower(email));
    `
  }
]
