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
  }
]
