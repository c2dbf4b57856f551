import type { Config } from '../config'
import type { Database } from './types'
import { createSqliteDatabase } from './sqlite'

/** Picks the store implementation from DATABASE_URL. */
export async function openDatabase (config: Config): Promise<Database> {
  if (config.DATABASE_URL.startsWith('file:')) {
    return createSqliteDatabase(config.DATABASE_URL, { synchronous: config.SQLITE_SYNCHRONOUS })
  }
  throw new Error('PostgreSQL support is not available yet')
}
