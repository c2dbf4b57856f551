import type { MerchantStatus } from '../../domain/merchants'
import { API_KEY_COLUMNS, apiKeyFromRow, apiKeyValues, type ApiKeyRow } from '../rows'
import type { ApiKeyStore } from '../types'
import type { PgPool } from './connection'

const PLACEHOLDERS = API_KEY_COLUMNS.split(', ').map((_, i) => `$${i + 1}`).join(', ')
const JOINED_COLUMNS = API_KEY_COLUMNS.split(', ').map((column) => `k.${column}`).join(', ')

export function postgresApiKeyStore (pool: PgPool): ApiKeyStore {
  return {
    async create (key) {
      await pool.query({ name: 'apikey-insert', text: `INSERT INTO api_keys (${API_KEY_COLUMNS}) VALUES (${PLACEHOLDERS})`, values: apiKeyValues(key) })
    },
    async createBootstrapAdmin (key) {
      const { rowCount } = await pool.query({
        name: 'apikey-insert-admin',
        text: `INSERT INTO api_keys (${API_KEY_COLUMNS}) VALUES (${PLACEHOLDERS}) ON CONFLICT DO NOTHING`,
        values: apiKeyValues(key)
      })
      return rowCount === 1
    },
    async hasBootstrapAdmin () {
      const { rows } = await pool.query({ name: 'apikey-has-admin', text: "SELECT 1 FROM api_keys WHERE role = 'admin'" })
      return rows.length > 0
    },
    async findByHash (secretHash) {
      const { rows } = await pool.query<ApiKeyRow & { merchant_status: MerchantStatus | null }>({
        name: 'apikey-by-hash',
        text: `SELECT ${JOINED_COLUMNS}, m.status AS merchant_status FROM api_keys k LEFT JOIN merchants m ON m.id = k.merchant_id WHERE k.secret_hash = $1`,
        values: [secretHash]
      })
      return rows.length === 0 ? undefined : { key: apiKeyFromRow(rows[0]), merchantStatus: rows[0].merchant_status }
    },
    async listForMerchant (merchantId) {
      const { rows } = await pool.query<ApiKeyRow>({
        name: 'apikey-list',
        text: `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE merchant_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`,
        values: [merchantId]
      })
      return rows.map(apiKeyFromRow)
    },
    async revoke (merchantId, keyId, at) {
      const { rowCount } = await pool.query({
        name: 'apikey-revoke',
        text: 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND merchant_id = $3 AND revoked_at IS NULL',
        values: [at, keyId, merchantId]
      })
      return rowCount === 1
    },
    async recordUse (uses) {
      if (uses.length === 0) return
      // One statement for the whole batch; the comparison never moves lastUsedAt backwards.
      await pool.query({
        name: 'apikey-record-use',
        text: `UPDATE api_keys k SET last_used_at = u.at
          FROM unnest($1::text[], $2::text[]) AS u(id, at)
          WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`,
        values: [uses.map((u) => u.id), uses.map((u) => u.at)]
      })
    }
  }
}
