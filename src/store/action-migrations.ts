import type { Dialect, SchemaChange } from './ddl'

/*
 * Issue 37: customer-present payments. A payment may wait for its shopper (`requires_action`, 3-D Secure or a
 * bank's page): return_url is where the shopper goes back to (the merchant's page), action_token the unguessable
 * token of the payment's return address on this service (unique: the return endpoint finds the payment by it),
 * next_action the JSON of where the shopper must go meanwhile. The status CHECK gains requires_action and the
 * cancellation reason CHECK gains abandoned (a shopper who never came back). The recovery worker asks the PSP
 * about payments waiting for their shopper: a partial index on their last change. Version 125 (before the disputes of 130 and 131: its SQLite rebuild of payments runs before a table references payments or a column is added to it).
 */
const STATUSES = "('pending', 'requires_action', 'requires_capture', 'succeeded', 'declined', 'failed', 'canceled', 'partially_refunded', 'refunded')"
const REASONS = "('requested', 'authorization_expired', 'abandoned')"
const AMOUNTS_AGREE = 'amount_refunded_minor + refund_pending_minor <= amount_captured_minor AND amount_captured_minor + COALESCE(capture_pending_minor, 0) <= amount_minor'

const NEW_INDEXES = `
  CREATE UNIQUE INDEX payments_action_token ON payments (action_token) WHERE action_token IS NOT NULL;
  CREATE INDEX payments_awaiting_action ON payments (updated_at) WHERE status = 'requires_action';
`

/** Every column of payments as migrations 10-120 left it, in the order SQLite holds them. */
const PAYMENT_COLUMNS = [
  'id', 'amount_minor', 'currency', 'status', 'decline_code', 'created_at', 'updated_at', 'recovery_lease_until', 'failure_code',
  'amount_refunded_minor', 'refund_pending_minor', 'metadata', 'merchant_id',
  'capture_method', 'amount_captured_minor', 'capture_pending_minor', 'capture_attempts', 'capture_before', 'cancellation_reason',
  'payment_method', 'connector_id', 'connector_type', 'connector_reference', 'attempts',
  'payment_methods', 'shopper_reference', 'money_held', 'customer', 'customer_email', 'payment_method_details', 'card_last4'
].join(', ')

const REFUND_COLUMNS = 'id, payment_id, amount_minor, currency, status, reason, failure_code, metadata, created_at, updated_at, recovery_lease_until'

/**
 * SQLite cannot change a CHECK: payments is rebuilt with every column and index the earlier migrations gave it
 * (40's rebuild, 70's routing, 90's payment methods, 111's money_held, 120's customers), and refunds, which
 * references it, with it (as migration 40 did: a referenced table cannot be dropped with foreign keys on).
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
    CONSTRAINT payments_amounts_agree CHECK (${AMOUNTS_AGREE})
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
    recovery_lease_until ${d.bigint}
  )${d.table};
  INSERT INTO refunds_new (${REFUND_COLUMNS}) SELECT ${REFUND_COLUMNS} FROM refunds;
  DROP TABLE refunds;
  DROP TABLE payments;
  ALTER TABLE payments_new RENAME TO payments;
  ALTER TABLE refunds_new RENAME TO refunds;
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
  CREATE INDEX refunds_payment_created ON refunds (payment_id, created_at, id);
  CREATE INDEX refunds_pending ON refunds (created_at) WHERE status = 'pending';
`

const alterPostgres = (): string => `
  ALTER TABLE payments DROP CONSTRAINT payments_status_check;
  ALTER TABLE payments DROP CONSTRAINT payments_cancellation_reason_check;
  ALTER TABLE payments
    ADD CONSTRAINT payments_status_check CHECK (status IN ${STATUSES}),
    ADD CONSTRAINT payments_cancellation_reason_check CHECK (cancellation_reason IN ${REASONS}),
    ADD COLUMN return_url TEXT,
    ADD COLUMN action_token TEXT,
    ADD COLUMN next_action TEXT;
`

export const actionSchema: SchemaChange[] = [
  {
    version: 125,
    name: 'customer-present payments: requires_action, return addresses',
    ddl: (d) => `${d.kind === 'sqlite' ? rebuildSqlite(d) : alterPostgres()}${NEW_INDEXES}`
  },
  {
    // What a customer-present payment's charge must send again if its answer is lost (Adyen's Web Components
    // paymentMethod, browserInfo, origin): kept only while the payment is pending, erased when the PSP answers.
    version: 140,
    name: 'customer-present payments: checkout data while pending',
    ddl: () => 'ALTER TABLE payments ADD COLUMN checkout_data TEXT;'
  }
]
