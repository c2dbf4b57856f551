import { auditWrites } from './audit-log'
import type { ApiVersion } from '../domain/api-versions'
import type { MerchantStatus } from '../domain/merchants'
import { API_KEY_COLUMNS, apiKeyFromRow, type ApiKeyRow } from './rows'
import { raw, sql, type SqlRunner } from './sql'
import type { ApiKey, ApiKeyMatch, ApiKeyStore, KeyCompletion } from './types'

const insertKey = (name: string, onConflict: string) => sql<ApiKey>(name)`
  INSERT INTO api_keys (${raw(API_KEY_COLUMNS)}) VALUES (${'id'}, ${'merchantId'}, ${'role'}, ${'name'}, ${'prefix'}, ${'last4'}, ${'secretHash'}, ${'createdAt'}, ${'expiresAt'}, ${'lastUsedAt'}, ${'revokedAt'})${raw(onConflict)}`

export const apiKeySql = {
  insert: insertKey('apikey-insert', ''),
  insertAdmin: insertKey('apikey-insert-admin', ' ON CONFLICT DO NOTHING'),
  hasAdmin: sql('apikey-has-admin')`SELECT 1 AS found FROM api_keys WHERE role = 'admin'`,
  byHash: sql<{ secretHash: string }, MatchRow>('apikey-by-hash')`
    SELECT ${raw(API_KEY_COLUMNS.split(', ').map((column) => `k.${column}`).join(', '))}, m.status AS merchant_status, m.api_version AS merchant_api_version
    FROM api_keys k LEFT JOIN merchants m ON m.id = k.merchant_id WHERE k.secret_hash = ${'secretHash'}`,
  byId: sql<{ id: string }, MatchRow>('apikey-by-id')`
    SELECT ${raw(API_KEY_COLUMNS.split(', ').map((column) => `k.${column}`).join(', '))}, m.status AS merchant_status, m.api_version AS merchant_api_version
    FROM api_keys k LEFT JOIN merchants m ON m.id = k.merchant_id WHERE k.id = ${'id'}`,
  listForMerchant: sql<{ merchantId: string }, ApiKeyRow>('apikey-list')`
    SELECT ${raw(API_KEY_COLUMNS)} FROM api_keys WHERE merchant_id = ${'merchantId'} AND revoked_at IS NULL ORDER BY created_at, id`,
  revoke: sql<{ merchantId: string, keyId: string, at: string }>('apikey-revoke')`
    UPDATE api_keys SET revoked_at = ${'at'} WHERE id = ${'keyId'} AND merchant_id = ${'merchantId'} AND revoked_at IS NULL`,
  /** One key's use; the comparison never moves lastUsedAt backwards. */
  recordUse: sql<{ id: string, at: string }>('apikey-record-use')`
    UPDATE api_keys SET last_used_at = ${'at'} WHERE id = ${'id'} AND (last_used_at IS NULL OR last_used_at < ${'at'})`
}

type MatchRow = ApiKeyRow & { merchant_status: MerchantStatus | null, merchant_api_version: ApiVersion | null }

function matchOf (row: MatchRow | undefined): ApiKeyMatch | undefined {
  return row === undefined ? undefined : { key: apiKeyFromRow(row), merchantStatus: row.merchant_status, merchantApiVersion: row.merchant_api_version }
}

/**
 * The API key store, the same on both databases except for `recordUse`, which batches in the
 * dialect's way (SQLite: one write running a statement per key; PostgreSQL: one statement over arrays),
 * and `createCompleting`: the insert and the Idempotency-Key's response in one transaction.
 */
export function apiKeyStore (db: SqlRunner, recordUse: ApiKeyStore['recordUse'], createCompleting: (key: ApiKey, completion: KeyCompletion) => Promise<void>): ApiKeyStore {
  return {
    async create (key, completion) {
      if (completion === undefined) await db.writeThen(apiKeySql.insert, key, auditWrites(key.id, key.merchantId))
      else await createCompleting(key, completion)
    },
    async createBootstrapAdmin (key) { return await db.write(apiKeySql.insertAdmin, key) === 1 },
    async hasBootstrapAdmin () { return await db.get(apiKeySql.hasAdmin, {}) !== undefined },
    async findByHash (secretHash) { return matchOf(await db.get(apiKeySql.byHash, { secretHash })) },
    async findById (id) { return matchOf(await db.get(apiKeySql.byId, { id })) },
    async listForMerchant (merchantId) { return (await db.all(apiKeySql.listForMerchant, { merchantId })).map(apiKeyFromRow) },
    async revoke (merchantId, keyId, at) { return await db.writeThen(apiKeySql.revoke, { merchantId, keyId, at }, auditWrites(keyId, merchantId)) === 1 },
    recordUse
  }
}
