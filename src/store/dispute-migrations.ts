import type { SchemaChange } from './ddl'

/*
 * Issue 40: disputes a PSP reports (Stripe's charge.dispute.*, Adyen's chargeback notifications), one row per dispute
 * at its connector account (the PSP's id of the dispute is unique there), listed per merchant like payments and refunds.
 * stage / funds_stage order what the PSP reports (see src/domain/disputes.ts). Version 130.
 *
 * Version 131: the payment's side. amount_disputed_minor: money the PSP took back and has not reinstated (NULL while the
 * payment never had a dispute); dispute_open: 1 while one of its disputes is not won (a refund is refused). The CHECK
 * holds refunded + disputed within what was captured, in both databases (a column CHECK naming other columns: both
 * accept it, and SQLite can add no table constraint to an existing table). And refunds made at the PSP (a Stripe
 * Dashboard or Customer Area refund): origin 'connector' (ours 'api'), with the PSP's id of the refund, unique per
 * payment, so a repeated report records it once.
 */
export const disputeSchema: SchemaChange[] = [
  {
    version: 130,
    name: 'disputes',
    ddl: (d) => `
      CREATE TABLE disputes (
        id TEXT PRIMARY KEY,
        merchant_id TEXT,
        payment_id TEXT NOT NULL REFERENCES payments (id),
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
      CREATE UNIQUE INDEX disputes_connector_reference ON disputes (connector_id, connector_reference);
      CREATE INDEX disputes_merchant ON disputes (merchant_id, created_at, id);
      CREATE INDEX disputes_merchant_status ON disputes (merchant_id, status, created_at, id);
      CREATE INDEX disputes_payment ON disputes (payment_id, created_at, id);
    `
  },
  {
    version: 131,
    name: 'payments: amount disputed',
    ddl: (d) => `
      ALTER TABLE payments ADD COLUMN amount_disputed_minor ${d.bigint}
        CONSTRAINT payments_refunded_disputed_within_captured CHECK (amount_refunded_minor + COALESCE(amount_disputed_minor, 0) <= amount_captured_minor);
      ALTER TABLE payments ADD COLUMN dispute_open INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE refunds ADD COLUMN origin TEXT NOT NULL DEFAULT 'api' CHECK (origin IN ('api', 'connector'));
      ALTER TABLE refunds ADD COLUMN connector_reference TEXT;
      CREATE UNIQUE INDEX refunds_connector_reference ON refunds (payment_id, connector_reference) WHERE connector_reference IS NOT NULL;
    `
  }
]
