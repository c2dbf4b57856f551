import { sqliteAuditWriter } from './audit'
import { auditEntry } from '../audit-scope'
import { apiKeySql, apiKeyStore } from '../api-keys'
import type { ApiKey, ApiKeyStore, KeyCompletion } from '../types'
import type { SqliteHandle } from './connection'
import { immediateWrites, type WriteQueue } from './group-commit'
import { sqliteKeyStatements } from './idempotency'
import { prepare, sqliteRunner } from './runner'

/** The shared API key store; a batch of uses is one write running a statement per key. */
export function sqliteApiKeyStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): ApiKeyStore {
  const use = prepare(db, apiKeySql.recordUse)
  const insert = prepare(db, apiKeySql.insert)
  const keys = sqliteKeyStatements(db)
  const audit = sqliteAuditWriter(db)
  const insertCompleting = db.transaction((key: ApiKey, completion: KeyCompletion) => {
    insert.run(key)
    audit(auditEntry(key.id, 'succeeded', key.merchantId))
    keys.storeResponse(completion.ref, completion.response)
  })
  return apiKeyStore(sqliteRunner(db, writes), async (uses) => {
    if (uses.length === 0) return
    await writes.run(() => { for (const entry of uses) use.run(entry) })
  }, async (key, completion) => { await writes.run(() => { insertCompleting(key, completion) }) })
}
