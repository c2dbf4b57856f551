import type { SchemaChange } from './ddl'

/*
 * Issue 28: API versions. Merchants and webhook endpoints are pinned to a version; those that
 * existed before versioning keep what they had, the first version (2026-11-01). Version 100.
 */
export const apiVersionSchema: SchemaChange[] = [
  {
    version: 100,
    name: 'api versions of merchants and webhook endpoints',
    ddl: () => `
      ALTER TABLE merchants ADD COLUMN api_version TEXT NOT NULL DEFAULT '2026-11-01';
      ALTER TABLE webhook_endpoints ADD COLUMN api_version TEXT NOT NULL DEFAULT '2026-11-01';
    `
  }
]
