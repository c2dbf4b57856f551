import type { Dialect } from './ddl'

/*
 * Issue 27: instance identity and heartbeat. Version 50.
 * Each running instance has a row it beats (epoch milliseconds); an idempotency key's lock names
 * the instance that holds it (locked_by), so another instance can take over a lock whose holder
 * stopped beating instead of waiting for locked_until. NULL: a lock without a known holder (taken
 * before this migration, or by the recovery worker's lease), which only locked_until ends.
 */
export const instanceSchema: Array<{ version: number, name: string, ddl: (d: Dialect) => string }> = [
  {
    version: 50,
    name: 'instances and idempotency lock holders',
    ddl: (d) => `
      CREATE TABLE instances (
        id TEXT PRIMARY KEY,
        started_at ${d.bigint} NOT NULL,
        heartbeat_at ${d.bigint} NOT NULL
      )${d.table};
      ALTER TABLE idempotency_keys ADD COLUMN locked_by TEXT;
    `
  }
]
