import { randomUUID } from 'node:crypto'
import { ConflictError, NotFoundError, PreconditionFailedError } from '../domain/errors'
import {
  applyMerchantPatch,
  buildMerchant,
  isGuid,
  isUnchanged,
  merchantEtag,
  toMerchantResource,
  type Merchant,
  type MerchantCreateInput,
  type MerchantPatch
} from '../domain/merchants'
import { ifMatchMatches } from '../http/conditional'
import type { IdempotencyKeyRef, MerchantStore, StoredResponse } from '../store/types'

export interface MerchantDeps {
  merchants: MerchantStore
  /** Milliseconds since the epoch. */
  clock: () => number
  /** Makes new ids; tests may pin it. */
  newId?: () => string
}

function nowOf (deps: MerchantDeps): string {
  return new Date(deps.clock()).toISOString()
}

/**
 * POST /merchants without the HTTP around it: validate → build the record →
 * insert. Throws ValidationError (400) or EmailTakenError (409); nothing is
 * stored when it throws. With an Idempotency-Key, the 201 response is stored
 * on the key in the same transaction, to be replayed.
 */
export async function createMerchant (deps: MerchantDeps, input: MerchantCreateInput, key?: IdempotencyKeyRef): Promise<Merchant> {
  const merchant = buildMerchant(input, (deps.newId ?? randomUUID)(), nowOf(deps))
  // The key's response is stored in the transaction that inserts the merchant.
  return await deps.merchants.create(merchant, key === undefined ? undefined : { ref: key, response: merchantCreatedResponse(merchant) })
}

/** The 201 response for a new merchant, exactly as sent (and as an idempotency layer would replay it). */
export function merchantCreatedResponse (merchant: Merchant): StoredResponse {
  return {
    statusCode: 201,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      location: `/merchants/${merchant.id}`,
      etag: merchantEtag(merchant)
    },
    body: JSON.stringify(toMerchantResource(merchant))
  }
}

function notFound (id: string): NotFoundError {
  return new NotFoundError(`No merchant has the id '${id.length <= 64 ? id : `${id.slice(0, 64)}…`}'.`)
}

/**
 * Reads a merchant by id. An id that is not a GUID cannot name a merchant, so
 * it is a 404 like an unknown GUID (not a 400). GUIDs are case-insensitive on
 * input; ids are stored in lower case.
 */
export async function getMerchant (deps: Pick<MerchantDeps, 'merchants'>, id: string): Promise<Merchant> {
  const merchant = isGuid(id) ? await deps.merchants.get(id.toLowerCase()) : undefined
  if (merchant === undefined) throw notFound(id)
  return merchant
}

/** How many times a PATCH without If-Match re-applies itself after losing a race before giving up with 409. */
export const PATCH_ATTEMPTS = 5

/**
 * PATCH /merchants/{id}: applies a JSON Merge Patch atomically.
 *
 * Concurrency: optimistic, a compare-and-set on the version
 * (`UPDATE … WHERE id = ? AND version = ?`), not a lock. Read the current
 * record, check If-Match against it, merge, then write only if the version is
 * still the one that was read. If another writer got in between, nothing was
 * written and:
 *  - with If-Match, the next round re-reads and the client's tag no longer
 *    matches → 412 (the client asked for "only if unchanged");
 *  - without If-Match, the patch is re-applied to the newer record (a merge
 *    patch only names the members it changes, so re-applying it is what the
 *    client meant and loses no other writer's change), up to PATCH_ATTEMPTS
 *    times, then 409 so the client retries later.
 * Chosen over a transaction holding a row lock because it works the same on
 * SQLite (no SELECT … FOR UPDATE) and PostgreSQL and never blocks readers.
 *
 * A patch that changes nothing (`{}`, or only current values) writes nothing:
 * version, ETag and updatedAt stay as they are.
 */
export async function patchMerchant (deps: MerchantDeps, id: string, patch: MerchantPatch, ifMatch?: string): Promise<Merchant> {
  let current = await getMerchant(deps, id)
  for (let attempt = 1; ; attempt++) {
    if (ifMatch !== undefined && !ifMatchMatches(ifMatch, merchantEtag(current))) {
      throw new PreconditionFailedError(`If-Match does not match the merchant's current ETag ${merchantEtag(current)}: ` +
        'it changed since you read it. Nothing was changed; read it again and retry.')
    }
    const fields = applyMerchantPatch(current, patch)
    if (isUnchanged(current, fields)) return current
    const result = await deps.merchants.update(current.id, current.version, fields, nowOf(deps))
    if (result.kind === 'updated') return result.merchant
    if (result.kind === 'not_found') throw notFound(id)
    if (attempt >= PATCH_ATTEMPTS) {
      throw new ConflictError('The merchant kept changing while this patch was applied; read it again and retry.')
    }
    current = result.current
  }
}
