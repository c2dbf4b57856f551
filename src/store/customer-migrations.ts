import type { SchemaChange } from './ddl'

/*
 * Issue 44: who paid and with what. customer: JSON { email, name?, reference? } as sent; customer_email:
 * its email trimmed and in lower case (what the list's customerEmail filter compares); payment_method_details:
 * JSON of what the connector's answer said (type, card brand/last4/expiry/country); card_last4 for the last4
 * filter. Both filters go through an index led by the merchant, like every list. Version 120.
 */
export const customerSchema: SchemaChange[] = [
  {
    version: 120,
    name: 'payment customers and payment method details',
    ddl: () => `
      ALTER TABLE payments ADD COLUMN customer TEXT;
      ALTER TABLE payments ADD COLUMN customer_email TEXT;
      ALTER TABLE payments ADD COLUMN payment_method_details TEXT;
      ALTER TABLE payments ADD COLUMN card_last4 TEXT;
      CREATE INDEX payments_customer_email ON payments (merchant_id, customer_email, created_at, id) WHERE customer_email IS NOT NULL;
      CREATE INDEX payments_card_last4 ON payments (merchant_id, card_last4, created_at, id) WHERE card_last4 IS NOT NULL;
    `
  }
]
