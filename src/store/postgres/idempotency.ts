import type { ClaimRequest, ClaimResult, IdempotencyKeyRef, IdempotencyRecord, IdempotencyStore, ResourceCreation, StoredResponse } from '../types'
import { classifyExistingKey, holderMayHaveStopped, holderStopped, idempotencyRecordFromRow, settledClaim, type IdempotencyRow } from '../rows'
import { finishParams, idempotencySql, keyParams, sharedIdempotencyStore } from '../idempotency'
import { instanceSql } from '../instances'
import { insertText } from '../sql'
import { inTransaction, onlyRow, Params, statement, type PgClient, type PgPool, type Queryable } from './connection'
import { postgresRunner, query } from './runner'

const KEY_MATCH = 'scope = $1 AND method = $2 AND path = $3 AND key = $4'

function refValues (ref: IdempotencyKeyRef): [string, string, string, string] {
  return [ref.scope, ref.method, ref.path, ref.key]
}

/** The key statements other stores' statements embed (as CTE members, or as their main query) to move a key along. */
export const keySql = {
  /** Records the key's resource (recovery point 'resource_created'). */
  markResourceCreated: (p: Params, ref: IdempotencyKeyRef, resourceId: string): string =>
    p.embed(idempotencySql.markResourceCreated, { ...keyParams(ref), resourceId }),
  /** Stores the response and unlocks the key, unless it is finished already. */
  finish: (p: Params, ref: IdempotencyKeyRef, response: StoredResponse): string => p.embed(idempotencySql.finish, finishParams(ref, response))
}

/** The same, each run as a statement of its own. */
export const postgresKeyStatements = {
  async markResourceCreated (db: Queryable, ref: IdempotencyKeyRef, resourceId: string): Promise<void> {
    await postgresRunner(db).write(idempotencySql.markResourceCreated, { ...keyParams(ref), resourceId })
  },
  async storeResponse (db: Queryable, ref: IdempotencyKeyRef, response: StoredResponse): Promise<void> {
    await postgresRunner(db).write(idempotencySql.finish, finishParams(ref, response))
  }
}

/**
 * A fresh key and its resource in ONE statement (one round trip, one commit): the key is inserted at
 * 'resource_created' and each row of the resource is inserted only if the key's insert did (a
 * data-modifying CTE is one atomic statement). RETURNING nothing: the key exists, decide under a lock.
 */
function claimCreatingStatement (request: ClaimRequest, creation: ResourceCreation): { name: string, text: string, values: unknown[] } {
  const values: unknown[] = [...refValues(request.ref), request.fingerprint, request.lockUntil, request.now, request.expiresAt, creation.resourceId, request.owner ?? null]
  const members = creation.rows.map((row, i) => {
    const member = `r${i} AS (${insertText('postgres', row.table, row.columns, values.length + 1).replace(/ VALUES \((.*)\)$/, ' SELECT $1 WHERE EXISTS (SELECT 1 FROM claimed)')})`
    values.push(...row.values)
    return member
  })
  const text = `WITH claimed AS (
      INSERT INTO idempotency_keys (scope, method, path, key, fingerprint, recovery_point, resource_id, locked_until, locked_by, created_at, expires_at)
      VALUES ($1, $2, $3, $4, $5, 'resource_created', $9, $6, $10, $7, $8)
      ON CONFLICT DO NOTHING
      RETURNING *
    )${members.map((member) => `, ${member}`).join('')}
    SELECT * FROM claimed`
  return statement(text, values)
}

/** How often a claim retries when the key it collided with vanished before it could lock it. */
const CLAIM_ATTEMPTS = 5

export function postgresIdempotencyStore (pool: PgPool): IdempotencyStore {
  const one = ([row]: IdempotencyRow[]): IdempotencyRecord | undefined => row === undefined ? undefined : idempotencyRecordFromRow(row)

  /*
   * The claim runs in READ COMMITTED, deliberately not REPEATABLE READ or SERIALIZABLE:
   * - INSERT … ON CONFLICT DO NOTHING is the atomic claim. When another instance's
   *   transaction holds an uncommitted insert of the same key, ours waits for it and
   *   then does nothing (or inserts, if it rolled back); exactly one claimant inserts.
   * - Every decision about an existing key is made on the row read with SELECT … FOR
   *   UPDATE, which in READ COMMITTED returns the newest committed version and holds it
   *   until we commit, so nothing another instance does can slip in between the read and
   *   our write (delete + re-insert of an expired key, or the lock of a resumed one).
   * - The stricter levels would turn exactly these waits into serialization failures
   *   that every caller would have to retry, without adding safety.
   */
  async function claim (request: ClaimRequest, creation?: ResourceCreation): Promise<ClaimResult> {
    if (creation !== undefined) {
      const created = one((await pool.query<IdempotencyRow>(claimCreatingStatement(request, creation))).rows)
      if (created !== undefined) return { kind: 'created', record: created }
      // The key exists. A replay (or a mismatch) of a finished key needs no transaction and no row lock:
      // concurrent replays of one key would otherwise queue on its FOR UPDATE.
      const settled = settledClaim(await get(request.ref), request.fingerprint, request.now)
      if (settled !== undefined) return settled
    }
    return await claimExisting(request, creation)
  }

  const shared = sharedIdempotencyStore(postgresRunner(pool))
  const { get } = shared

  /** Writes the resource of a claim that owns a key without one, in the claim's transaction. */
  async function create (client: PgClient, result: ClaimResult, creation: ResourceCreation | undefined): Promise<ClaimResult> {
    if (creation === undefined || (result.kind !== 'new' && result.kind !== 'resumed') || result.record.resourceId !== null) return result
    for (const row of creation.rows) {
      await client.query(statement(insertText('postgres', row.table, row.columns), [...row.values]))
    }
    await postgresKeyStatements.markResourceCreated(client, result.record, creation.resourceId)
    const record: IdempotencyRecord = { ...result.record, recoveryPoint: 'resource_created', resourceId: creation.resourceId }
    return result.kind === 'resumed' && result.takenOverFrom !== undefined ? { kind: 'created', record, takenOverFrom: result.takenOverFrom } : { kind: 'created', record }
  }

  async function claimExisting (request: ClaimRequest, creation?: ResourceCreation): Promise<ClaimResult> {
    const ref = refValues(request.ref)
    const insertKey = {
      name: 'idem-claim-insert',
      text: `INSERT INTO idempotency_keys (scope, method, path, key, fingerprint, recovery_point, locked_until, locked_by, created_at, expires_at)
        VALUES ($1, $2, $3, $4, $5, 'started', $6, $9, $7, $8)
        ON CONFLICT DO NOTHING
        RETURNING *`,
      values: [...ref, request.fingerprint, request.lockUntil, request.now, request.expiresAt, request.owner ?? null]
    }
    // The usual case, a new key, is the atomic INSERT alone (autocommit, one round trip instead of
    // BEGIN/INSERT/COMMIT); only a key that exists needs the transaction below to decide under a row lock.
    if (creation === undefined) {
      const inserted = one((await pool.query<IdempotencyRow>(insertKey)).rows)
      if (inserted !== undefined) return { kind: 'new', record: inserted }
      const settled = settledClaim(await get(request.ref), request.fingerprint, request.now)
      if (settled !== undefined) return settled
    }
    return await inTransaction(pool, 'READ COMMITTED', async (client) => await create(client, await decide(client), creation))
    async function lock (client: PgClient): Promise<IdempotencyRecord> {
      const { rows } = await client.query<IdempotencyRow>(query(idempotencySql.lock, { ...keyParams(request.ref), lockUntil: request.lockUntil, owner: request.owner ?? null }))
      return idempotencyRecordFromRow(onlyRow(rows, 'the lock of a key held FOR UPDATE'))
    }
    /** A live lock whose holder (another instance) stopped beating: its request is gone with it. */
    async function holderHasStopped (client: PgClient, existing: IdempotencyRecord): Promise<boolean> {
      if (!holderMayHaveStopped(existing, request)) return false
      const { rows: [holder] } = await client.query<{ heartbeat_at: number | string }>(query(instanceSql.heartbeat, { id: existing.lockedBy }))
      return holderStopped(holder === undefined ? undefined : Number(holder.heartbeat_at), request)
    }
    async function decide (client: PgClient): Promise<ClaimResult> {
      const insert = async (): Promise<IdempotencyRecord | undefined> => one((await client.query<IdempotencyRow>(insertKey)).rows)
      for (let attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
        const created = await insert()
        if (created !== undefined) return { kind: 'new', record: created }
        const existing = one((await client.query<IdempotencyRow>({
          name: 'idem-claim-lock',
          text: `SELECT * FROM idempotency_keys WHERE ${KEY_MATCH} FOR UPDATE`,
          values: ref
        })).rows)
        // Deleted (abandoned or reaped) between our insert and our lock: try the insert again.
        if (existing === undefined) continue
        switch (classifyExistingKey(existing, request.fingerprint, request.now)) {
          case 'expired': {
            await client.query(query(idempotencySql.remove, keyParams(request.ref)))
            const fresh = await insert()
            if (fresh === undefined) throw new Error('idempotency claim: re-inserting an expired key failed')
            return { kind: 'new', record: fresh }
          }
          case 'mismatch': return { kind: 'mismatch', record: existing }
          case 'replay': return { kind: 'replay', record: existing as IdempotencyRecord & { response: StoredResponse } }
          case 'in_flight': {
            if (!await holderHasStopped(client, existing)) return { kind: 'in_flight', record: existing }
            return { kind: 'resumed', record: await lock(client), ...(existing.lockedBy === null ? {} : { takenOverFrom: existing.lockedBy }) }
          }
          case 'resumable': return { kind: 'resumed', record: await lock(client) }
        }
      }
      throw new Error(`idempotency claim: the key kept disappearing during ${CLAIM_ATTEMPTS} attempts`)
    }
  }

  return { ...shared, claim }
}
