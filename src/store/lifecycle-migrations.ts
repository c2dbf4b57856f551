import type { Dialect, SchemaChange } from './ddl'

/*
 * Issue 13: payment lifecycle (refunds, failed and canceled payments, listing,
 * metadata). Money stays in integer minor units; metadata is stored as the JSON
 * text the client sent (TEXT, not JSONB, so key order survives).
 * `amount_refunded_minor + refund_pending_minor <= amount_minor` is a CHECK:
 * even a bug above the store cannot refund more than was charged.
 */
const STATUSES = "('pending', 'succeeded', 'declined', 'failed', 'canceled', 'partially_refunded', 'refunded')"

const paymentColumns = (d: Dialect): string => `
  failure_code TEXT,
  amount_refunded_minor ${d.bigint} NOT NULL DEFAULT 0 CHECK (amount_refunded_minor >= 0),
  refund_pending_minor ${d.bigint} NOT NULL DEFAULT 0 CHECK (refund_pending_minor >= 0),
  metadata TEXT NOT NULL DEFAULT '{}',
  merchant_id TEXT`

/** SQLite cannot change a CHECK constraint: the table is rebuilt (its documented 12-step procedure). */
const rebuildSqlitePayments = (d: Dialect): string => `
  CREATE TABLE payments_new (
    id TEXT PRIMARY KEY,
    amount_minor ${d.bigint} NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ${STATUSES}),
    decline_code TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    recovery_lease_until ${d.bigint},
    ${paymentColumns(d)},
    CHECK (amount_refunded_minor + refund_pending_minor <= amount_minor)
  )${d.table};
  INSERT INTO payments_new (id, amount_minor, currency, status, decline_code, created_at, updated_at, recovery_lease_until)
    SELECT id, amount_minor, currency, status, decline_code, created_at, updated_at, recovery_lease_until FROM payments;
  DROP TABLE payments;
  ALTER TABLE payments_new RENAME TO payments;
  CREATE INDEX payments_pending ON payments (created_at) WHERE status = 'pending';
`

const alterPostgresPayments = (d: Dialect): string => `
  ALTER TABLE payments DROP CONSTRAINT payments_status_check;
  ALTER TABLE payments
    ADD CONSTRAINT payments_status_check CHECK (status IN ${STATUSES}),
    ${paymentColumns(d).split(',\n').map((column) => `ADD COLUMN ${column.trim()}`).join(',\n    ')},
    ADD CONSTRAINT payments_refunds_within_amount CHECK (amount_refunded_minor + refund_pending_minor <= amount_minor);
`

export const lifecycleSchema: SchemaChange[] = [
  {
    version: 4,
    name: 'payment lifecycle: refunds, failed and canceled payments, metadata, listing',
    ddl: (d) => `
      ${d.kind === 'sqlite' ? rebuildSqlitePayments(d) : alterPostgresPayments(d)}
      -- Listing: every page query is an equality prefix (merchant, status) and a range on
      -- (created_at, id), so a page is one index range scan of limit + 1 entries at any size.
      CREATE INDEX payments_created ON payments (created_at, id);
      CREATE INDEX payments_merchant_created ON payments (merchant_id, created_at, id);
      CREATE INDEX payments_merchant_status_created ON payments (merchant_id, status, created_at, id);
      CREATE TABLE refunds (
        id TEXT PRIMARY KEY,
        payment_id TEXT NOT NULL REFERENCES payments (id),
        amount_minor ${d.bigint} NOT NULL CHECK (amount_minor > 0),
        currency TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
        reason TEXT,
        failure_code TEXT,
        metadata TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        recovery_lease_until ${d.bigint}
      )${d.table};
      CREATE INDEX refunds_payment_created ON refunds (payment_id, created_at, id);
      CREATE INDEX refunds_pending ON refunds (created_at) WHERE status = 'pending';
    `
  },
  {
    version: 14,
    name: 'merchant metadata and listing',
    ddl: () => `
      ALTER TABLE merchants ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
      CREATE INDEX merchants_created ON merchants (created_at, id);
    `
  }
]
