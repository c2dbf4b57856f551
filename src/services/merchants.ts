import { newId } from '../domain/ids'
import { ConflictError, ForbiddenError, NotFoundError, PreconditionFailedError } from '../domain/errors'
import {
  applyMerchantPatch,
  buildMerchant,
  isGuid,
  isUnchanged,
  merchantNotFoundMessage,
  merchantEtag,
  type Merchant,
  type MerchantCreateInput,
  type MerchantPatch
} from '../domain/merchants'
import type { Page, PageRequest } from '../domain/pagination'
import type { MerchantStore } from '../store/types'
import type { OwnedKey } from './keys'
import type { EventOf } from '../domain/events'

export interface MerchantDeps {
  merchants: MerchantStore
  /** Milliseconds since the epoch. */
  clock: () => number
  /** Makes new ids; tests may pin it. */
  newId?: () => string
  /** merchant.updated, written with the update; undefined: no events. */
  updatedEvent?: EventOf<Merchant>
  /** Called after a merchant is suspended or reactivated, or changes API version (its keys' cached lookups carry both). */
  onStatusChanged?: () => Promise<void>
}

/** What a conditional write requires of the current merchant (the route derives it from If-Match). */
export type MerchantPrecondition = (current: Merchant) => boolean

function nowOf (deps: MerchantDeps): string {
  return new Date(deps.clock()).toISOString()
}

/**
 * Creates a merchant: validate → build the record → insert. Throws ValidationError
 * or EmailTakenError; nothing is stored when it throws. With an idempotency key,
 * the key's response is stored in the transaction that inserts the merchant, to be replayed.
 */
export async function createMerchant (deps: MerchantDeps, input: MerchantCreateInput, key?: OwnedKey<Merchant>): Promise<Merchant> {
  const merchant = buildMerchant(input, (deps.newId ?? newId)(), nowOf(deps))
  return await deps.merchants.create(merchant, key === undefined ? undefined : { ref: key.ref, response: key.respond(merchant) })
}

function notFound (id: string): NotFoundError {
  return new NotFoundError(merchantNotFoundMessage(id))
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
export async function patchMerchant (
  deps: MerchantDeps,
  id: string,
  patch: MerchantPatch,
  precondition?: MerchantPrecondition,
  options: { mayChangeStatus?: boolean } = {}
): Promise<Merchant> {
  let current = await getMerchant(deps, id)
  for (let attempt = 1; ; attempt++) {
    if (precondition !== undefined && !precondition(current)) {
      throw new PreconditionFailedError(`If-Match does not match the merchant's current ETag ${merchantEtag(current)}: ` +
        'it changed since you read it. Nothing was changed; read it again and retry.')
    }
    const fields = applyMerchantPatch(current, patch)
    if (options.mayChangeStatus === false && fields.status !== current.status) {
      throw new ForbiddenError('Only the admin key may change a merchant\'s status; nothing was changed.')
    }
    if (isUnchanged(current, fields)) return current
    const result = await deps.merchants.update(current.id, current.version, fields, nowOf(deps), deps.updatedEvent)
    if (result.kind === 'updated') {
      if (result.merchant.status !== current.status || result.merchant.apiVersion !== current.apiVersion) await deps.onStatusChanged?.()
      return result.merchant
    }
    if (result.kind === 'not_found') throw notFound(id)
    if (attempt >= PATCH_ATTEMPTS) {
      throw new ConflictError('The merchant kept changing while this patch was applied; read it again and retry.')
    }
    current = result.current
  }
}

export interface MerchantService {
  create: (input: MerchantCreateInput, key?: OwnedKey<Merchant>) => Promise<Merchant>
  get: (id: string) => Promise<Merchant>
  /** `mayChangeStatus: false`: a patch that changes `status` is refused (ForbiddenError) and writes nothing. */
  patch: (id: string, patch: MerchantPatch, precondition?: MerchantPrecondition, options?: { mayChangeStatus?: boolean }) => Promise<Merchant>
  /** A page of merchants, newest first (the operator's view). */
  list: (page: PageRequest) => Promise<Page<Merchant>>
}

export function merchantService (deps: MerchantDeps): MerchantService {
  return {
    create: async (input, key) => await createMerchant(deps, input, key),
    get: async (id) => await getMerchant(deps, id),
    patch: async (id, patch, precondition, options) => await patchMerchant(deps, id, patch, precondition, options),
    list: async (page) => await deps.merchants.list(page)
  }
}
