import type BetterSqlite3 from 'better-sqlite3'
import type { ClaimResult, IdempotencyKeyRef, IdempotencyRecord, IdempotencyStore, ResourceCreation, RowInsert, StoredResponse } from '../types'
import { classifyExistingKey, holderMayHaveStopped, holderStopped, idempotencyRecordFromRow, newIdempotencyRecord, settledClaim, type IdempotencyRow } from '../rows'
import type { SqliteHandle } from './connection'
import { immediateWrites, type WriteQueue } from './group-commit'

const KEY_MATCH = 'scope = @scope AND method = @method AND path = @path AND key = @key'

function refParams (ref: IdempotencyKeyRef) {
  return { scope: ref.scope, method: ref.method, path: ref.path, key: ref.key }
}

/** Statements other stores run inside their own transactions to move a key along. */
export function sqliteKeyStatements (db: SqliteHandle) {
  const markResource = db.prepare(`UPDATE idempotency_keys SET recovery_point = 'resource_created', resource_id = @resourceId WHERE ${KEY_MATCH}`)
  const finish = db.prepare(`
    UPDATE idempotency_keys
    SET recovery_point = 'finished', response_status = @status, response_headers = @headers, response_body = @body, locked_until = NULL, locked_by = NULL
    WHERE ${KEY_MATCH} AND recovery_point <> 'finished'`)
  return {
    markResourceCreated (ref: IdempotencyKeyRef, resourceId: string): void {
      markResource.run({ ...refParams(ref), resourceId })
    },
    storeResponse (ref: IdempotencyKeyRef, response: StoredResponse): void {
      finish.run({ ...refParams(ref), status: response.statusCode, headers: JSON.stringify(response.headers), body: response.body })
    }
  }
}

export function sqliteIdempotencyStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): IdempotencyStore {
  const keys = sqliteKeyStatements(db)
  const insert = db.prepare(`
    INSERT INTO idempotency_keys (scope, method, path, key, fingerprint, recovery_point, locked_until, locked_by, created_at, expires_at)
    VALUES (@scope, @method, @path, @key, @fingerprint, 'started', @lockUntil, @owner, @now, @expiresAt)
    ON CONFLICT DO NOTHING`)
  // A new key claimed with the resource it creates: recorded as created in the insert itself (as PostgreSQL's claim does).
  const insertCreated = db.prepare(`
    INSERT INTO idempotency_keys (scope, method, path, key, fingerprint, recovery_point, resource_id, locked_until, locked_by, created_at, expires_at)
    VALUES (@scope, @method, @path, @key, @fingerprint, 'resource_created', @resourceId, @lockUntil, @owner, @now, @expiresAt)
    ON CONFLICT DO NOTHING`)
  const select = db.prepare<Record<string, string>, IdempotencyRow>(`SELECT * FROM idempotency_keys WHERE ${KEY_MATCH}`)
  const remove = db.prepare(`DELETE FROM idempotency_keys WHERE ${KEY_MATCH}`)
  const removeIf = db.prepare(`DELETE FROM idempotency_keys WHERE ${KEY_MATCH} AND locked_until = @lockedUntil`)
  const lock = db.prepare(`UPDATE idempotency_keys SET locked_until = @lockUntil, locked_by = @owner WHERE ${KEY_MATCH}`)
  const unlock = db.prepare(`UPDATE idempotency_keys SET locked_until = NULL, locked_by = NULL WHERE ${KEY_MATCH} AND locked_until IS NOT NULL`)
  const unlockIf = db.prepare(`UPDATE idempotency_keys SET locked_until = NULL, locked_by = NULL WHERE ${KEY_MATCH} AND locked_until = @lockedUntil`)
  const heartbeatOf = db.prepare<[string], number>('SELECT heartbeat_at FROM instances WHERE id = ?').pluck()
  const byResource = db.prepare<[string], IdempotencyRow>('SELECT * FROM idempotency_keys WHERE resource_id = ? LIMIT 1')
  const reap = db.prepare(`
    DELETE FROM idempotency_keys
    WHERE expires_at <= ?
      AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.id = idempotency_keys.resource_id AND p.status = 'pending')
      AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.id = idempotency_keys.resource_id AND r.status = 'pending')`)

  const inserts = new Map<string, BetterSqlite3.Statement>()
  const insertRow = (row: RowInsert): void => {
    const text = `INSERT INTO ${row.table} (${row.columns.join(', ')}) VALUES (${row.columns.map(() => '?').join(', ')})`
    let statement = inserts.get(text)
    if (statement === undefined) inserts.set(text, statement = db.prepare(text))
    statement.run(...row.values)
  }
  /**
   * Writes the resource a claim created, when the caller owns a key without one (same transaction). A key inserted
   * by this claim already names the resource (`markedBy`); one resumed is marked here.
   */
  const create = (result: ClaimResult, creation: ResourceCreation | undefined, markedBy: string | undefined): ClaimResult => {
    if (creation === undefined || (result.kind !== 'new' && result.kind !== 'resumed') || (result.record.resourceId !== null && markedBy === undefined)) return result
    for (const row of creation.rows) insertRow(row)
    if (markedBy === undefined) keys.markResourceCreated(result.record, creation.resourceId)
    const record: IdempotencyRecord = { ...result.record, recoveryPoint: 'resource_created', resourceId: creation.resourceId }
    return result.kind === 'resumed' && result.takenOverFrom !== undefined ? { kind: 'created', record, takenOverFrom: result.takenOverFrom } : { kind: 'created', record }
  }

  const claim = db.transaction((request: Parameters<IdempotencyStore['claim']>[0], creation?: ResourceCreation): ClaimResult => {
    const decided = decide(request, creation?.resourceId)
    return create(decided.result, creation, decided.insertedWith)
  })
  /** The claim's outcome, and the resource id the key was inserted with when this claim inserted it with one. */
  const decide = (request: Parameters<IdempotencyStore['claim']>[0], resourceId: string | undefined): { result: ClaimResult, insertedWith?: string } => {
    const params = { ...refParams(request.ref), fingerprint: request.fingerprint, now: request.now, lockUntil: request.lockUntil, expiresAt: request.expiresAt, owner: request.owner ?? null }
    const takeLock = (): IdempotencyRecord => {
      lock.run({ ...refParams(request.ref), lockUntil: request.lockUntil, owner: params.owner })
      return read()
    }
    const read = () => idempotencyRecordFromRow(select.get(refParams(request.ref)) as IdempotencyRow)
    const insertNew = (): boolean => (resourceId === undefined ? insert.run(params) : insertCreated.run({ ...params, resourceId })).changes === 1
    const fresh = (): { result: ClaimResult, insertedWith?: string } =>
      ({ result: { kind: 'new', record: newIdempotencyRecord(request) }, ...(resourceId === undefined ? {} : { insertedWith: resourceId }) })
    if (insertNew()) return fresh()
    const existing = read()
    const decision = classifyExistingKey(existing, request.fingerprint, request.now)
    switch (decision) {
      case 'expired':
        remove.run(refParams(request.ref))
        insertNew()
        return fresh()
      case 'mismatch': return { result: { kind: 'mismatch', record: existing } }
      case 'replay': return { result: { kind: 'replay', record: existing as typeof existing & { response: StoredResponse } } }
      case 'in_flight':
        // A live lock whose holder (another instance) stopped beating: its request is gone with it.
        if (!holderMayHaveStopped(existing, request) || !holderStopped(heartbeatOf.get(existing.lockedBy), request)) return { result: { kind: 'in_flight', record: existing } }
        return { result: { kind: 'resumed', record: takeLock(), takenOverFrom: existing.lockedBy } }
      case 'resumable': return { result: { kind: 'resumed', record: takeLock() } }
    }
  }

  return {
    async claim (request, creation) {
      // A replay (or a mismatch) of a finished key is answered from a read, without waiting for a write.
      const row = select.get(refParams(request.ref))
      const settled = settledClaim(row === undefined ? undefined : idempotencyRecordFromRow(row), request.fingerprint, request.now)
      if (settled !== undefined) return settled
      return await writes.run(() => claim(request, creation))
    },
    async release (ref, lockedUntil) {
      return await writes.run(() => (lockedUntil === undefined ? unlock.run(refParams(ref)) : unlockIf.run({ ...refParams(ref), lockedUntil })).changes > 0)
    },
    async abandon (ref, lockedUntil) {
      await writes.run(() => lockedUntil === undefined ? remove.run(refParams(ref)) : removeIf.run({ ...refParams(ref), lockedUntil }))
    },
    async finish (ref, response) { await writes.run(() => { keys.storeResponse(ref, response) }) },
    async get (ref) {
      const row = select.get(refParams(ref))
      return row === undefined ? undefined : idempotencyRecordFromRow(row)
    },
    async findByResource (resourceId) {
      const row = byResource.get(resourceId)
      return row === undefined ? undefined : idempotencyRecordFromRow(row)
    },
    async reap (now) { return await writes.run(() => reap.run(now).changes) }
  }
}
