import type { MerchantStatus } from '../../domain/merchants'
import { API_KEY_COLUMNS, apiKeyFromRow, apiKeyValues, type ApiKeyRow } from '../rows'
import type { ApiKeyStore } from '../types'
import type { SqliteHandle } from './connection'
import { immediateWrites, type WriteQueue } from './group-commit'

const PLACEHOLDERS = API_KEY_COLUMNS.split(', ').map(() => '?').join(', ')

export function sqliteApiKeyStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): ApiKeyStore {
  const columns = API_KEY_COLUMNS.split(', ').map((column) => `k.${column}`).join(', ')
  const insert = db.prepare(`INSERT INTO api_keys (${API_KEY_COLUMNS}) VALUES (${PLACEHOLDERS})`)
  const insertAdmin = db.prepare(`INSERT INTO api_keys (${API_KEY_COLUMNS}) VALUES (${PLACEHOLDERS}) ON CONFLICT DO NOTHING`)
  const hasAdmin = db.prepare("SELECT 1 FROM api_keys WHERE role = 'admin'").pluck()
  const byHash = db.prepare<[string], ApiKeyRow & { merchant_status: MerchantStatus | null }>(
    `SELECT ${columns}, m.status AS merchant_status FROM api_keys k LEFT JOIN merchants m ON m.id = k.merchant_id WHERE k.secret_hash = ?`)
  const list = db.prepare<[string], ApiKeyRow>(
    `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE merchant_id = ? AND revoked_at IS NULL ORDER BY created_at, id`)
  const revoke = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND merchant_id = ? AND revoked_at IS NULL')
  const use = db.prepare('UPDATE api_keys SET last_used_at = @at WHERE id = @id AND (last_used_at IS NULL OR last_used_at < @at)')

  return {
    async create (key) { await writes.run(() => insert.run(apiKeyValues(key))) },
    async createBootstrapAdmin (key) {
      return await writes.run(() => insertAdmin.run(apiKeyValues(key)).changes === 1)
    },
    async hasBootstrapAdmin () { return hasAdmin.get() !== undefined },
    async findByHash (secretHash) {
      const row = byHash.get(secretHash)
      return row === undefined ? undefined : { key: apiKeyFromRow(row), merchantStatus: row.merchant_status }
    },
    async listForMerchant (merchantId) { return list.all(merchantId).map(apiKeyFromRow) },
    async revoke (merchantId, keyId, at) {
      return await writes.run(() => revoke.run(at, keyId, merchantId).changes === 1)
    },
    async recordUse (uses) {
      if (uses.length === 0) return
      await writes.run(() => { for (const entry of uses) use.run(entry) })
    }
  }
}
