import type { SchemaChange } from './ddl'

/*
 * Issue 25: routing to connector accounts. Version 70.
 * A payment records the connector it is on (connector_id NULL: the instance default gateway, the
 * only one before this version, hence the default type), the connector's reference of its charge
 * (found again when the PSP's own webhooks name it), its payment method token and the attempts
 * made (JSON, oldest first).
 */
export const routingSchema: SchemaChange[] = [
  {
    version: 70,
    name: 'payment connectors and attempts',
    ddl: () => `
      ALTER TABLE payments ADD COLUMN payment_method TEXT;
      ALTER TABLE payments ADD COLUMN connector_id TEXT;
      ALTER TABLE payments ADD COLUMN connector_type TEXT NOT NULL DEFAULT 'simulated';
      ALTER TABLE payments ADD COLUMN connector_reference TEXT;
      ALTER TABLE payments ADD COLUMN attempts TEXT NOT NULL DEFAULT '[]';
      CREATE INDEX payments_connector_reference ON payments (connector_reference) WHERE connector_reference IS NOT NULL;
    `
  }
]
