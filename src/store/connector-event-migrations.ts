import type { SchemaChange } from './ddl'

/*
 * Issue 25: the inbox of the PSPs' own webhooks (Stripe events). Version 80.
 * An event is recorded (by the PSP's event id, per connector account) before it is acted on, and
 * marked processed once acted on: a redelivery of a processed event does nothing again, and one
 * recorded but never processed (a crash in between) is processed when it comes again.
 */
export const connectorEventSchema: SchemaChange[] = [
  {
    version: 80,
    name: 'connector events inbox',
    ddl: (d) => `
      CREATE TABLE connector_events (
        connector_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        type TEXT NOT NULL,
        received_at TEXT NOT NULL,
        processed_at TEXT,
        PRIMARY KEY (connector_id, event_id)
      )${d.table};
    `
  },
  {
    // Issue 26: Adyen notifications are acted on from the stored item, so one recorded but never
    // processed (a crash in between) is finished by the recovery worker without waiting for Adyen's retry.
    version: 81,
    name: 'connector events payload',
    ddl: () => `
      ALTER TABLE connector_events ADD COLUMN payload TEXT;
      CREATE INDEX connector_events_unprocessed ON connector_events (received_at) WHERE processed_at IS NULL AND payload IS NOT NULL;
    `
  },
  {
    // Issue 38: refunds a connector reports that the service never asked for (its dashboard, another integration), by the
    // charge they are of. Money held for a payment is given back by refunding what these left of the charge, whichever
    // arrived first: the report or the charge's own (the extra charge a release gives back may be refunded there too).
    version: 82,
    name: 'refunds made at connectors',
    ddl: (d) => `
      CREATE TABLE connector_refunds (
        connector_id TEXT NOT NULL,
        refund_reference TEXT NOT NULL,
        charge_reference TEXT NOT NULL,
        amount_minor ${d.bigint} NOT NULL CHECK (amount_minor > 0),
        currency TEXT NOT NULL,
        received_at TEXT NOT NULL,
        PRIMARY KEY (connector_id, refund_reference)
      )${d.table};
      CREATE INDEX connector_refunds_charge ON connector_refunds (connector_id, charge_reference);
    `
  },
  {
    // Issue 44 (Dashboard II): every charge call to a connector, its outcome and how long the PSP took to answer it (by
    // the service's clock), for the per-connector success rate and latency. Written once, right after the call: the
    // payment's own attempts (a JSON list on the payment) stay its record; these rows are the calls' log, by merchant
    // and start time. connector_id is NULL for the service's default gateway (a merchant without connector accounts).
    version: 83,
    name: 'connector call log',
    ddl: (d) => `
      CREATE TABLE connector_attempts (
        id TEXT PRIMARY KEY,
        payment_id TEXT NOT NULL,
        merchant_id TEXT,
        connector_id TEXT,
        connector_type TEXT NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('succeeded', 'authorized', 'requires_action', 'declined', 'not_processed', 'unknown')),
        code TEXT,
        started_at TEXT NOT NULL,
        answered_at TEXT NOT NULL,
        duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0)
      )${d.table};
      CREATE INDEX connector_attempts_merchant ON connector_attempts (merchant_id, started_at);
    `
  }
]
