import { apiKeySql, apiKeyStore } from '../api-keys'
import type { ApiKeyStore } from '../types'
import type { SqliteHandle } from './connection'
import { immediateWrites, type WriteQueue } from './group-commit'
import { prepare, sqliteRunner } from './runner'

/** The shared API key store; a batch of uses is one write running a statement per key. */
export function sqliteApiKeyStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): ApiKeyStore {
  const use = prepare(db, apiKeySql.recordUse)
  return apiKeyStore(sqliteRunner(db, writes), async (uses) => {
    if (uses.length === 0) return
    await writes.run(() => { for (const entry of uses) use.run(entry) })
  })
}
