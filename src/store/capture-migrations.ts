import type { Dialect } from './ddl'

/*
 * Issue 24: manual capture. A payment records how it is captured, what was captured, the
 * capture in flight at the gateway (its reservation), the number of captures asked (each has its
 * own downstream key), when its authorization expires and why it was canceled. A CHECK keeps
 * captured, refunded and capturable amounts in agreement, whatever a bug above the store does:
 * amount_refunded_minor + refund_pending_minor <= amount_captured_minor <= amount_minor.
 * Existing payments: succeeded (and refunded) ones were captured automatically, in full.
 */
const STATUSES = "('pending', 'requires_capture', 'succeeded', 'declined', 'failed', 'canceled', 'partially_refunded', 'refunded')"
const CAPTURED_BEFORE = "CASE WHEN status IN ('succeeded', 'partially_refunded', 'refunded') THEN amount_minor ELSE 0 END"
const REASON_BEFORE = "CASE WHEN status = 'canceled' THEN 'requested' END"
const AMOUNTS_AGREE = 'amount_refunded_minor + refund_pending_minor <= amount_captured_minor AND amount_captured_minor + COALESCE(capture_pending_minor, 0) <= amount_minor'

const captureColumns = (d: Dialect): string[] => [
  "capture_method TEXT NOT NULL DEFAULT 'automatic' CHECK (capture_method IN ('automatic', 'manual'))",
  `amount_captured_minor ${d.bigint} NOT NULL DEFAULT 0 CHECK (amount_captured_minor >= 0)`,
  `capture_pending_minor ${d.bigint} CHECK (capture_pending_minor > 0)`,
  'capture_attempts INTEGER NOT NULL DEFAULT 0 CHECK (capture_attempts >= 0)',
  'capture_before TEXT',
  "cancellation_reason TEXT CHECK (cancellation_reason IN ('requested', 'authorization_expired'))"
]

const INDEXES = `
  -- The recovery worker's two questions: authorizations past captureBefore, captures left in flight.
  CREATE INDEX payments_authorizations ON payments (capture_before) WHERE status = 'requires_capture';
  CREATE INDEX payments_captures_in_flight ON payments (updated_at) WHERE capture_pending_minor IS NOT NULL;
`

/**
 * SQLite cannot change a CHECK: payments is rebuilt. refunds references it, and with foreign keys on
 * (they cannot be switched off inside the migration's transaction) a referenced table cannot be
 * dropped: refunds is rebuilt too, pointing at the new payments table, and the renames carry the
 * reference over (SQLite rewrites foreign keys on ALTER TABLE … RENAME).
 */
const rebuildSqlite = (d: Dialect): string => `
  CREATE TABLE payments_new (
    id TEXT PRIMARY KEY,
    amount_minor ${d.bigint} NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ${STATUSES}),
    decline_code TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    recovery_lease_until ${d.bigint},
    failure_code TEXT,
    amount_refunded_minor ${d.bigint} NOT NULL DEFAULT 0 CHECK (amount_refunded_minor >= 0),
    refund_pending_minor ${d.bigint} NOT NULL DEFAULT 0 CHECK (refund_pending_minor >= 0),
    metadata TEXT NOT NULL DEFAULT '{}',
    merchant_id TEXT,
    ${captureColumns(d).join(',\n    ')},
    CONSTRAINT payments_amounts_agree CHECK (${AMOUNTS_AGREE})
  )${d.table};
  INSERT INTO payments_new (id, amount_minor, currency, status, decline_code, created_at, updated_at, recovery_lease_until, failure_code,
      amount_refunded_minor, refund_pending_minor, metadata, merchant_id, amount_captured_minor, cancellation_reason)
    SELECT id, amount_minor, currency, status, decline_code, created_at, updated_at, recovery_lease_until, failure_code,
      amount_refunded_minor, refund_pending_minor, metadata, merchant_id, ${CAPTURED_BEFORE}, ${REASON_BEFORE} FROM payments;
  CREATE TABLE refunds_new (
    id TEXT PRIMARY KEY,
    payment_id TEXT NOT NULL REFERENCES payments_new (id),
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
  INSERT INTO refunds_new SELECT id, payment_id, amount_minor, currency, status, reason, failure_code, metadata, created_at, updated_at, recovery_lease_until FROM refunds;
  DROP TABLE refunds;
  DROP TABLE payments;
  ALTER TABLE payments_new RENAME TO payments;
  ALTER TABLE refunds_new RENAME TO refunds;
  CREATE INDEX payments_pending ON payments (created_at) WHERE status = 'pending';
  CREATE INDEX payments_created ON payments (created_at, id);
  CREATE INDEX payments_merchant_created ON payments (merchant_id, created_at, id);
  CREATE INDEX payments_merchant_status_created ON payments (merchant_id, status, created_at, id);
  CREATE INDEX refunds_payment_created ON refunds (payment_id, created_at, id);
  CREATE INDEX refunds_pending ON refunds (created_at) WHERE status = 'pending';
`

const alterPostgres = (d: Dialect): string => `
  ALTER TABLE payments DROP CONSTRAINT payments_status_check;
  ALTER TABLE payments DROP CONSTRAINT payments_refunds_within_amount;
  ALTER TABLE payments
    ADD CONSTRAINT payments_status_check CHECK (status IN ${STATUSES}),
    ${captureColumns(d).map((column) => `ADD COLUMN ${column}`).join(',\n    ')};
  UPDATE payments SET amount_captured_minor = ${CAPTURED_BEFORE}, cancellation_reason = ${REASON_BEFORE}
    WHERE status IN ('succeeded', 'partially_refunded', 'refunded', 'canceled');
  ALTER TABLE payments ADD CONSTRAINT payments_amounts_agree CHECK (${AMOUNTS_AGREE});
`

export const captureSchema: Array<{ version: number, name: string, ddl: (d: Dialect) => string }> = [
  {
    version: 40,
    name: 'manual capture: authorizations, captured amounts, expiry',
    ddl: (d) => `${d.kind === 'sqlite' ? rebuildSqlite(d) : alterPostgres(d)}${INDEXES}`
  }
]
