import type { SchemaChange } from './ddl'

/*
 * Issue 14: the transactional outbox (events), webhook endpoints and deliveries.
 * Versions 30-39. Events and deliveries are written in the transaction of the change
 * they describe; a delivery row per (event, endpoint) that wanted it at that moment.
 * Times that the worker compares (next attempt, lease) are epoch milliseconds.
 */
export const webhookSchema: SchemaChange[] = [
  {
    version: 30,
    name: 'events and webhooks',
    ddl: (d) => `
      CREATE TABLE events (
        id TEXT PRIMARY KEY,
        merchant_id TEXT NOT NULL,
        type TEXT NOT NULL,
        resource_type TEXT NOT NULL,
        resource_id TEXT NOT NULL,
        sequence INTEGER NOT NULL CHECK (sequence >= 1),
        data TEXT NOT NULL,
        created_at TEXT NOT NULL
      )${d.table};
      -- One number per resource and position: two writers can never hand out the same one.
      CREATE UNIQUE INDEX events_resource_sequence ON events (resource_id, sequence);
      CREATE INDEX events_merchant_created ON events (merchant_id, created_at, id);
      CREATE INDEX events_merchant_type_created ON events (merchant_id, type, created_at, id);
      CREATE INDEX events_created ON events (created_at);
      CREATE TABLE webhook_endpoints (
        id TEXT PRIMARY KEY,
        merchant_id TEXT NOT NULL REFERENCES merchants (id),
        url TEXT NOT NULL,
        description TEXT,
        enabled_events TEXT,
        secret TEXT NOT NULL,
        previous_secret TEXT,
        previous_secret_expires_at TEXT,
        disabled_reason TEXT CHECK (disabled_reason IN ('manual', 'gone', 'failing')),
        last_success_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )${d.table};
      CREATE INDEX webhook_endpoints_merchant ON webhook_endpoints (merchant_id, created_at);
      CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY,
        endpoint_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        merchant_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        round_start INTEGER NOT NULL DEFAULT 0,
        next_attempt_at ${d.bigint},
        lease_until ${d.bigint},
        attempt_log TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )${d.table};
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_endpoint_created ON webhook_deliveries (endpoint_id, created_at, id);
      CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
    `
  }
]
