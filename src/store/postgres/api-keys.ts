import { writeAudit } from './audit'
import { auditEntry } from '../audit-scope'
import { apiKeySql, apiKeyStore } from '../api-keys'
import type { ApiKeyStore } from '../types'
import { inTransaction, type PgPool } from './connection'
import { postgresKeyStatements } from './idempotency'
import { postgresRunner } from './runner'

/** The shared API key store; a batch of uses is one statement over arrays (one round trip). */
export function postgresApiKeyStore (pool: PgPool): ApiKeyStore {
  return apiKeyStore(postgresRunner(pool), async (uses) => {
    if (uses.length === 0) return
    // The comparison never moves lastUsedAt backwards.
    await pool.query({
      name: 'apikey-record-uses',
      text: `UPDATE api_keys k SET last_used_at = u.at
        FROM unnest($1::text[], $2::text[]) AS u(id, at)
        WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`,
      values: [uses.map((u) => u.id), uses.map((u) => u.at)]
    })
  }, async (key, completion) => {
    await inTransaction(pool, 'READ COMMITTED', async (client) => {
      await postgresRunner(client).write(apiKeySql.insert, key)
      await writeAudit(client, auditEntry(key.id, 'succeeded', key.merchantId))
      await postgresKeyStatements.storeResponse(client, completion.ref, completion.response)
    })
  })
}
