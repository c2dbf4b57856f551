import type { Config } from '../config'
import type { Database } from './types'
import { createSqliteDatabase } from './sqlite'

export interface OpenDatabaseOptions {
  /** Told about errors the database reports outside any request (PostgreSQL: idle pooled connections). */
  onBackgroundError?: (err: Error) => void
}

/** Picks the store implementation from DATABASE_URL: `file:` → SQLite, `postgres(ql)://` → PostgreSQL. */
export async function openDatabase (config: Config, options: OpenDatabaseOptions = {}): Promise<Database> {
  if (config.DATABASE_URL.startsWith('file:')) {
    return await createSqliteDatabase(config.DATABASE_URL, { synchronous: config.SQLITE_SYNCHRONOUS, settleMs: config.DATABASE_SETTLE_MS })
  }
  // Loaded only when configured: the PostgreSQL driver is a large module and start-up time counts.
  const { createPostgresDatabase } = require('./postgres') as typeof import('./postgres')
  return await createPostgresDatabase(config.DATABASE_URL, {
    poolSize: config.DATABASE_POOL_SIZE,
    queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
    settleMs: config.DATABASE_SETTLE_MS,
    ...(options.onBackgroundError === undefined ? {} : { onIdleError: options.onBackgroundError })
  })
}
