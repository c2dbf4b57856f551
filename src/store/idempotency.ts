import { idempotencyRecordFromRow, type IdempotencyRow } from './rows'
import { raw, sqlOf, type RawSql, type SqlRunner } from './sql'
import type { IdempotencyKeyRef, IdempotencyStore, StoredResponse } from './types'

interface KeyParams { scope: string, method: string, path: string, key: string }
interface FinishParams extends KeyParams { status: number, headers: string, body: string }

/** `scope = … AND method = … AND path = … AND key = …`: one key. */
const KEY_MATCH: Array<RawSql | keyof KeyParams> = [raw('scope = '), 'scope', raw(' AND method = '), 'method', raw(' AND path = '), 'path', raw(' AND key = '), 'key']

/**
 * The idempotency key statements both databases agree on. The claim itself (its insert, and the
 * decision on an existing key under SQLite's write transaction or PostgreSQL's FOR UPDATE) is each
 * dialect's own (sqlite/ and postgres/idempotency.ts).
 */
export const idempotencySql = {
  get: sqlOf<KeyParams, IdempotencyRow>('idem-get', [raw('SELECT * FROM idempotency_keys WHERE '), ...KEY_MATCH]),
  remove: sqlOf<KeyParams>('idem-delete', [raw('DELETE FROM idempotency_keys WHERE '), ...KEY_MATCH]),
  removeIf: sqlOf<KeyParams & { lockedUntil: number }>('idem-delete-if', [raw('DELETE FROM idempotency_keys WHERE '), ...KEY_MATCH, raw(' AND locked_until = '), 'lockedUntil']),
  /** Takes the key's lock for `owner` (the claim decided it may), answering the key. */
  lock: sqlOf<KeyParams & { lockUntil: number, owner: string | null }, IdempotencyRow>('idem-lock', [
    raw('UPDATE idempotency_keys SET locked_until = '), 'lockUntil', raw(', locked_by = '), 'owner', raw(' WHERE '), ...KEY_MATCH, raw(' RETURNING *')]),
  unlock: sqlOf<KeyParams>('idem-unlock', [raw('UPDATE idempotency_keys SET locked_until = NULL, locked_by = NULL WHERE '), ...KEY_MATCH, raw(' AND locked_until IS NOT NULL')]),
  unlockIf: sqlOf<KeyParams & { lockedUntil: number }>('idem-unlock-if', [
    raw('UPDATE idempotency_keys SET locked_until = NULL, locked_by = NULL WHERE '), ...KEY_MATCH, raw(' AND locked_until = '), 'lockedUntil']),
  /** Records the key's resource (recovery point 'resource_created'). */
  markResourceCreated: sqlOf<KeyParams & { resourceId: string }>('idem-mark-created', [
    raw("UPDATE idempotency_keys SET recovery_point = 'resource_created', resource_id = "), 'resourceId', raw(' WHERE '), ...KEY_MATCH]),
  /** Stores the response and unlocks the key, unless it is finished already. */
  finish: sqlOf<FinishParams>('idem-finish', [
    raw("UPDATE idempotency_keys SET recovery_point = 'finished', response_status = "), 'status', raw(', response_headers = '), 'headers',
    raw(', response_body = '), 'body', raw(', locked_until = NULL, locked_by = NULL WHERE '), ...KEY_MATCH, raw(" AND recovery_point <> 'finished'")]),
  byResource: sqlOf<{ resourceId: string }, IdempotencyRow>('idem-by-resource', [raw('SELECT * FROM idempotency_keys WHERE resource_id = '), 'resourceId', raw(' LIMIT 1')]),
  /*
   * Safe when every instance reaps at once: a row another reaper deleted first is skipped (PostgreSQL: after
   * its lock is released), and a key whose payment or refund is still pending is never deleted (the recovery
   * worker needs it).
   */
  reap: sqlOf<{ now: number }>('idem-reap', [raw(`DELETE FROM idempotency_keys
    WHERE expires_at <= `), 'now', raw(`
      AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.id = idempotency_keys.resource_id AND p.status = 'pending')
      AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.id = idempotency_keys.resource_id AND r.status = 'pending')`)])
}

export function keyParams (ref: IdempotencyKeyRef): KeyParams {
  return { scope: ref.scope, method: ref.method, path: ref.path, key: ref.key }
}

export function finishParams (ref: IdempotencyKeyRef, response: StoredResponse): FinishParams {
  return { ...keyParams(ref), status: response.statusCode, headers: JSON.stringify(response.headers), body: response.body }
}

/** The idempotency store's one-statement methods, the same on both databases (each atomic on its own). */
export function sharedIdempotencyStore (db: SqlRunner): Pick<IdempotencyStore, 'release' | 'abandon' | 'finish' | 'get' | 'findByResource' | 'reap'> {
  const one = (row: IdempotencyRow | undefined) => row === undefined ? undefined : idempotencyRecordFromRow(row)
  return {
    async release (ref, lockedUntil) {
      const changes = lockedUntil === undefined ? await db.write(idempotencySql.unlock, keyParams(ref)) : await db.write(idempotencySql.unlockIf, { ...keyParams(ref), lockedUntil })
      return changes > 0
    },
    async abandon (ref, lockedUntil) {
      if (lockedUntil === undefined) await db.write(idempotencySql.remove, keyParams(ref))
      else await db.write(idempotencySql.removeIf, { ...keyParams(ref), lockedUntil })
    },
    async finish (ref, response) { await db.write(idempotencySql.finish, finishParams(ref, response)) },
    async get (ref) { return one(await db.get(idempotencySql.get, keyParams(ref))) },
    async findByResource (resourceId) { return one(await db.get(idempotencySql.byResource, { resourceId })) },
    async reap (now) { return await db.write(idempotencySql.reap, { now }) }
  }
}
