import type { SchemaChange } from './ddl'

/*
 * Issue 26: a payment that may fail over between PSPs carries one payment method per connector
 * (a PSP's token means nothing at another PSP) and the shopper its stored methods belong to
 * (Adyen's shopperReference). Version 90. payment_methods: JSON object, connector id or type → token.
 */
export const paymentMethodSchema: SchemaChange[] = [
  {
    version: 90,
    name: 'payment methods per connector and shopper reference',
    ddl: () => `
      ALTER TABLE payments ADD COLUMN payment_methods TEXT NOT NULL DEFAULT '{}';
      ALTER TABLE payments ADD COLUMN shopper_reference TEXT;
    `
  }
]
