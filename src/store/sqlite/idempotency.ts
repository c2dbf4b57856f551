import type BetterSqlite3 from 'better-sqlite3'
import type { ClaimResult, IdempotencyKeyRef, IdempotencyRecord, IdempotencyStore, ResourceCreation, RowInsert, StoredResponse } from '../types'
import { classifyExistingKey, holderMayHaveStopped, holderStopped, idempotencyRecordFromRow, newIdempotencyRecord, settledClaim, type IdempotencyRow } from '../rows'
import { finishParams, idempotencySql, keyParams, sharedIdempotencyStore } from '../idempotency'
import { instanceSql } from '../instances'
import { insertText } from '../sql'
import type { SqliteHandle } from './connection'
import { immediateWrites, type WriteQueue } from './group-commit'
import { prepare, sqliteRunner } from './runner'

/** Statements other stores run inside their own transactions to move a key along. */
export function sqliteKeyStatements (db: SqliteHandle) {
  const markResource = prepare(db, idempotencySql.markResourceCreated)
  const finish = prepare(db, idempotencySql.finish)
  return {
    markResourceCreated (ref: IdempotencyKeyRef, resourceId: string): void {
      markResource.run({ ...keyParams(ref), resourceId })
    },
    storeResponse (ref: IdempotencyKeyRef, response: StoredResponse): void {
      finish.run(finishParams(ref, response))
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
  const select = prepare(db, idempotencySql.get)
  const remove = prepare(db, idempotencySql.remove)
  const lock = prepare(db, idempotencySql.lock)
  const heartbeatOf = prepare(db, instanceSql.heartbeat)
  const heartbeatAt = (id: string | null): number | undefined => {
    const row = id === null ? undefined : heartbeatOf.get({ id })
    return row === undefined ? undefined : Number(row.heartbeat_at)
  }

  // By the row's column list (a constant of the resource's store, so the text is built once), then its table.
  const inserts = new WeakMap<readonly string[], Map<string, BetterSqlite3.Statement>>()
  const insertRow = (row: RowInsert): void => {
    let byTable = inserts.get(row.columns)
    if (byTable === undefined) inserts.set(row.columns, byTable = new Map())
    let statement = byTable.get(row.table)
    if (statement === undefined) byTable.set(row.table, statement = db.prepare(insertText('sqlite', row.table, row.columns)))
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
    const params = { ...keyParams(request.ref), fingerprint: request.fingerprint, now: request.now, lockUntil: request.lockUntil, expiresAt: request.expiresAt, owner: request.owner ?? null }
    const takeLock = (): IdempotencyRecord => idempotencyRecordFromRow(lock.get({ ...keyParams(request.ref), lockUntil: request.lockUntil, owner: params.owner }) as IdempotencyRow)
    const read = () => idempotencyRecordFromRow(select.get(keyParams(request.ref)) as IdempotencyRow)
    const insertNew = (): boolean => (resourceId === undefined ? insert.run(params) : insertCreated.run({ ...params, resourceId })).changes === 1
    const fresh = (): { result: ClaimResult, insertedWith?: string } =>
      ({ result: { kind: 'new', record: newIdempotencyRecord(request) }, ...(resourceId === undefined ? {} : { insertedWith: resourceId }) })
    if (insertNew()) return fresh()
    const existing = read()
    const decision = classifyExistingKey(existing, request.fingerprint, request.now)
    switch (decision) {
      case 'expired':
        remove.run(keyParams(request.ref))
        insertNew()
        return fresh()
      case 'mismatch': return { result: { kind: 'mismatch', record: existing } }
      case 'replay': return { result: { kind: 'replay', record: existing as typeof existing & { response: StoredResponse } } }
      case 'in_flight':
        // A live lock whose holder (another instance) stopped beating: its request is gone with it.
        if (!holderMayHaveStopped(existing, request) || !holderStopped(heartbeatAt(existing.lockedBy), request)) return { result: { kind: 'in_flight', record: existing } }
        return { result: { kind: 'resumed', record: takeLock(), takenOverFrom: existing.lockedBy } }
      case 'resumable': return { result: { kind: 'resumed', record: takeLock() } }
    }
  }

  return {
    ...sharedIdempotencyStore(sqliteRunner(db, writes)),
    async claim (request, creation) {
      // A replay (or a mismatch) of a finished key is answered from a read, without waiting for a write.
      const row = select.get(keyParams(request.ref))
      const settled = settledClaim(row === undefined ? undefined : idempotencyRecordFromRow(row), request.fingerprint, request.now)
      if (settled !== undefined) return settled
      return await writes.run(() => claim(request, creation))
    }
  }
}
