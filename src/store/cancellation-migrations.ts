import type { Dialect, SchemaChange } from './ddl'

/*
 * Issue 40: a cancel made at the PSP (Stripe's Dashboard, Adyen's Customer Area) ends a payment `canceled` with
 * cancellation_reason 'connector'. The reason CHECK gains it. PostgreSQL swaps the constraint; SQLite cannot change a
 * CHECK, so payments is rebuilt with every column and index the earlier migrations gave it, and refunds and disputes,
 * which reference it, with it (a referenced table cannot be dropped with foreign keys on; RENAME rewrites the
 * references to payments_new). Version 141.
 */
const REASONS = "('requested', 'authorization_expired', 'abandoned', 'connector')"

const PAYMENT_COLUMNS = [
  'id', 'amount_minor', 'currency', 'status', 'decline_code', 'created_at', 'updated_at', 'recovery_lease_until', 'failure_code',
  'amount_refunded_minor', 'refund_pending_minor', 'metadata', 'merchant_id',
  'capture_method', 'amount_captured_minor', 'capture_pending_minor', 'capture_attempts', 'capture_before', 'cancellation_reason',
  'payment_method', 'connector_id', 'connector_type', 'connector_reference', 'attempts',
  'payment_methods', 'shopper_reference', 'money_held', 'customer', 'customer_email', 'payment_method_details', 'card_last4',
  'return_url', 'action_token', 'next_action', 'amount_disputed_minor', 'dispute_open', 'checkout_data'
].join(', ')

const REFUND_COLUMNS = 'id, payment_id, amount_minor, currency, status, reason, failure_code, metadata, created_at, updated_at, recovery_lease_until, origin, connector_reference'

const DISPUTE_COLUMNS = 'id, merchant_id, payment_id, amount_minor, currency, reason, status, funds_withdrawn, evidence_due_by, connector_id, connector_type, ' +
  'connector_reference, stage, funds_stage, created_at, updated_at'

const rebuildSqlite = (d: Dialect): string => `
  CREATE TABLE payments_new (
    id TEXT PRIMARY KEY,
    amount_minor ${d.bigint} NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'requires_action', 'requires_capture', 'succeeded', 'declined', 'failed', 'canceled', 'partially_refunded', 'refunded')),
    decline_code TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    recovery_lease_until ${d.bigint},
    failure_code TEXT,
    amount_refunded_minor ${d.bigint} NOT NULL DEFAULT 0 CHECK (amount_refunded_minor >= 0),
    refund_pending_minor ${d.bigint} NOT NULL DEFAULT 0 CHECK (refund_pending_minor >= 0),
    metadata TEXT NOT NULL DEFAULT '{}',
    merchant_id TEXT,
    capture_method TEXT NOT NULL DEFAULT 'automatic' CHECK (capture_method IN ('automatic', 'manual')),
    amount_captured_minor ${d.bigint} NOT NULL DEFAULT 0 CHECK (amount_captured_minor >= 0),
    capture_pending_minor ${d.bigint} CHECK (capture_pending_minor > 0),
    capture_attempts INTEGER NOT NULL DEFAULT 0 CHECK (capture_attempts >= 0),
    capture_before TEXT,
    cancellation_reason TEXT CHECK (cancellation_reason IN ${REASONS}),
    payment_method TEXT,
    connector_id TEXT,
    connector_type TEXT NOT NULL DEFAULT 'simulated',
    connector_reference TEXT,
    attempts TEXT NOT NULL DEFAULT '[]',
    payment_methods TEXT NOT NULL DEFAULT '{}',
    shopper_reference TEXT,
    money_held INTEGER NOT NULL DEFAULT 0,
    customer TEXT,
    customer_email TEXT,
    payment_method_details TEXT,
    card_last4 TEXT,
    return_url TEXT,
    action_token TEXT,
    next_action TEXT,
    amount_disputed_minor ${d.bigint},
    dispute_open INTEGER NOT NULL DEFAULT 0,
    checkout_data TEXT,
    CONSTRAINT payments_refunded_disputed_within_captured CHECK (amount_refunded_minor + COALESCE(amount_disputed_minor, 0) <= amount_captured_minor),
    CONSTRAINT payments_amounts_agree CHECK (amount_refunded_minor + refund_pending_minor <= amount_captured_minor AND amount_captured_minor + COALESCE(capture_pending_minor, 0) <= amount_minor)
  )${d.table};
  INSERT INTO payments_new (${PAYMENT_COLUMNS}) SELECT ${PAYMENT_COLUMNS} FROM payments;
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
    recovery_lease_until ${d.bigint},
    origin TEXT NOT NULL DEFAULT 'api' CHECK (origin IN ('api', 'connector')),
    connector_reference TEXT
  )${d.table};
  INSERT INTO refunds_new (${REFUND_COLUMNS}) SELECT ${REFUND_COLUMNS} FROM refunds;
  CREATE TABLE disputes_new (
    id TEXT PRIMARY KEY,
    merchant_id TEXT,
    payment_id TEXT NOT NULL REFERENCES payments_new (id),
    amount_minor ${d.bigint} NOT NULL CHECK (amount_minor >= 0),
    currency TEXT NOT NULL,
    reason TEXT,
    status TEXT NOT NULL CHECK (status IN ('needs_response', 'under_review', 'won', 'lost', 'accepted')),
    funds_withdrawn INTEGER NOT NULL CHECK (funds_withdrawn IN (0, 1)),
    evidence_due_by TEXT,
    connector_id TEXT NOT NULL,
    connector_type TEXT NOT NULL,
    connector_reference TEXT NOT NULL,
    stage INTEGER NOT NULL,
    funds_stage INTEGER NOT NULL CHECK (funds_stage >= 0),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )${d.table};
  INSERT INTO disputes_new (${DISPUTE_COLUMNS}) SELECT ${DISPUTE_COLUMNS} FROM disputes;
  DROP TABLE disputes;
  DROP TABLE refunds;
  DROP TABLE payments;
  ALTER TABLE payments_new RENAME TO payments;
  ALTER TABLE refunds_new RENAME TO refunds;
  ALTER TABLE disputes_new RENAME TO disputes;
  CREATE INDEX payments_pending ON payments (created_at) WHERE status = 'pending';
  CREATE INDEX payments_created ON payments (created_at, id);
  CREATE INDEX payments_merchant_created ON payments (merchant_id, created_at, id);
  CREATE INDEX payments_merchant_status_created ON payments (merchant_id, status, created_at, id);
  CREATE INDEX payments_authorizations ON payments (capture_before) WHERE status = 'requires_capture';
  CREATE INDEX payments_captures_in_flight ON payments (updated_at) WHERE capture_pending_minor IS NOT NULL;
  CREATE INDEX payments_connector_reference ON payments (connector_reference) WHERE connector_reference IS NOT NULL;
  CREATE INDEX payments_money_held ON payments (updated_at) WHERE money_held = 1;
  CREATE INDEX payments_customer_email ON payments (merchant_id, customer_email, created_at, id) WHERE customer_email IS NOT NULL;
  CREATE INDEX payments_card_last4 ON payments (merchant_id, card_last4, created_at, id) WHERE card_last4 IS NOT NULL;
  CREATE UNIQUE INDEX payments_action_token ON payments (action_token) WHERE action_token IS NOT NULL;
  CREATE INDEX payments_awaiting_action ON payments (updated_at) WHERE status = 'requires_action';
  CREATE INDEX refunds_payment_created ON refunds (payment_id, created_at, id);
  CREATE INDEX refunds_pending ON refunds (created_at) WHERE status = 'pending';
  CREATE UNIQUE INDEX refunds_connector_reference ON refunds (payment_id, connector_reference) WHERE connector_reference IS NOT NULL;
  CREATE UNIQUE INDEX disputes_connector_reference ON disputes (connector_id, connector_reference);
  CREATE INDEX disputes_merchant ON disputes (merchant_id, created_at, id);
  CREATE INDEX disputes_merchant_status ON disputes (merchant_id, status, created_at, id);
  CREATE INDEX disputes_payment ON disputes (payment_id, created_at, id);
`

const alterPostgres = (): string => `
  ALTER TABLE payments DROP CONSTRAINT payments_cancellation_reason_check;
  ALTER TABLE payments ADD CONSTRAINT payments_cancellation_reason_check CHECK (cancellation_reason IN ${REASONS});
`

export const cancellationSchema: SchemaChange[] = [
  {
    version: 141,
    name: 'payments: canceled at the connector',
    ddl: (d) => d.kind === 'sqlite' ? rebuildSqlite(d) : alterPostgres()
  }
]
