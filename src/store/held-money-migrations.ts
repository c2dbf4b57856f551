import type { SchemaChange } from './ddl'

/*
 * Issue 36: money a connector reported for an attempt a payment had left (or for a payment that holds none) is
 * given back; while that is not confirmed the payment is flagged, so the recovery worker retries it without
 * scanning every payment. Version 111.
 */
export const heldMoneySchema: SchemaChange[] = [
  {
    version: 111,
    name: 'payments holding money to give back',
    ddl: () => `
      ALTER TABLE payments ADD COLUMN money_held INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX payments_money_held ON payments (updated_at) WHERE money_held = 1;
    `
  }
]
