import { ConflictError, GatewayUnavailableError, NotFoundError, ValidationError } from '../domain/errors'
import { isGuid, newId } from '../domain/ids'
import { merchantNotFoundMessage } from '../domain/merchants'
import {
  ConnectorCredentialsRefusedError, DEFAULT_PRIORITY, MAX_CONNECTORS_PER_MERCHANT, publicAccount,
  type ConnectorAccount, type ConnectorCredentialsInput, type ConnectorInput, type ConnectorPatch, type ConnectorType, type StoredConnectorAccount
} from '../domain/connectors'
import { CredentialsRefusedError, type ConnectorFactory } from '../gateway/connectors'
import type { ConnectorModule, ConnectorRegistry } from '../gateway/connector'
import type { ConnectorAccountSource, RoutableAccount } from '../gateway/directory'
import { GatewayError } from '../gateway/types'
import { isSealed, SEALED_PREFIX, type SecretBox } from '../secrets/encryption'
import type { ConnectorAccountStore, Database, StoredCredentials } from '../store/types'
import type { Logger } from './payments'
import { cachedRead, type ReadCache } from './read-cache'
import { statsEntry, statsRange, zeroCounts, type ConnectorStats, type ConnectorStatsEntry } from '../domain/connector-stats'

/** Seconds a client waits before retrying when the PSP could not be reached to check credentials. */
export const VERIFY_RETRY_AFTER_SECONDS = 5

export interface ConnectorAccountService {
  /** Checks the credentials with the PSP, then stores the account with its credentials sealed. */
  create: (merchantId: string, input: ConnectorInput) => Promise<ConnectorAccount>
  /** The merchant's accounts (not deleted) in routing order. */
  list: (merchantId: string) => Promise<ConnectorAccount[]>
  get: (merchantId: string, id: string) => Promise<ConnectorAccount>
  /** New credentials are checked with the PSP first; priority, status and description alone are not. */
  update: (merchantId: string, id: string, patch: ConnectorPatch) => Promise<ConnectorAccount>
  /** Soft delete: out of routing and of the API; its payments keep working through it. */
  remove: (merchantId: string, id: string) => Promise<void>
  /**
   * How the charge calls of the merchant's payments went per connector over a range of start times (see statsRange;
   * ValidationError for a bad one): every account not deleted, in routing order (zeros when it had no call), then
   * the deleted accounts and the default gateway that had calls in the range. Another merchant's account never appears.
   */
  stats: (merchantId: string, query: { createdGte?: string, createdLt?: string }) => Promise<ConnectorStats>
}

export interface ConnectorAccountDeps {
  db: Pick<Database, 'merchants' | 'connectors'>
  factory: ConnectorFactory
  /** The connector types this instance has: their credential checks and hints. */
  registry: ConnectorRegistry
  secrets: SecretBox
  clock: () => number
  log: Logger
  /** Told the merchant whose accounts were written (after the write): routing caches forget what they hold. */
  onChange?: (merchantId: string) => Promise<void>
}

function shortId (id: string): string {
  return id.length <= 64 ? id : `${id.slice(0, 64)}…`
}

function throwIfAny (errors: Record<string, string[]>): void {
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
}

export function connectorAccountService (deps: ConnectorAccountDeps): ConnectorAccountService {
  const store = deps.db.connectors
  const nowIso = (): string => new Date(deps.clock()).toISOString()
  const changed = deps.onChange ?? (async () => {})

  async function requireMerchant (merchantId: string): Promise<string> {
    const merchant = isGuid(merchantId) ? await deps.db.merchants.get(merchantId.toLowerCase()) : undefined
    if (merchant === undefined) throw new NotFoundError(merchantNotFoundMessage(merchantId))
    return merchant.id
  }

  /** The merchant's account; another merchant's or a deleted one is as absent as an unknown id. */
  async function accountOf (merchantId: string, id: string): Promise<StoredConnectorAccount> {
    const owner = await requireMerchant(merchantId)
    const account = isGuid(id) ? await store.get(id.toLowerCase()) : undefined
    if (account === undefined || account.merchantId !== owner || account.deletedAt !== null) {
      throw new NotFoundError(`The merchant has no connector account with the id '${shortId(id)}'.`)
    }
    return account
  }

  /** One read-only, authenticated call to the PSP; its refusal or absence in domain words (never quoting the credentials). */
  async function verify (type: ConnectorType, credentials: ConnectorCredentialsInput, id: string): Promise<void> {
    try {
      await deps.factory(type, credentials, id).verify()
    } catch (err) {
      if (err instanceof CredentialsRefusedError) {
        deps.log.info({ connectorId: id, connectorType: type, code: err.code }, 'connector credentials refused by the PSP; nothing stored')
        throw new ConnectorCredentialsRefusedError(type)
      }
      if (err instanceof GatewayError) {
        deps.log.warn({ connectorId: id, connectorType: type, gatewayFailure: err.kind, code: err.code }, 'PSP unreachable while checking connector credentials')
        throw new GatewayUnavailableError(`The ${type} API could not be reached to check the credentials; nothing was stored. Retry later.`, undefined, VERIFY_RETRY_AFTER_SECONDS)
      }
      throw err
    }
  }

  /** The module of `type`, whose credentials are checked first; a type this instance does not have is a field error. */
  function checkedModule (type: ConnectorType, credentials: unknown): ConnectorModule {
    const module = deps.registry.moduleOf(type)
    if (module === undefined) throw new ValidationError({ type: [`This service has no connector of type '${type.slice(0, 32)}': it has ${deps.registry.types.join(', ')}.`] })
    throwIfAny(module.credentialErrors(credentials))
    return module
  }

  const seal = (credentials: ConnectorCredentialsInput | undefined, id: string): string => deps.secrets.seal(JSON.stringify(credentials ?? {}), id)

  return {
    async create (merchantId, input) {
      const owner = await requireMerchant(merchantId)
      const module = checkedModule(input.type, input.credentials)
      const id = newId()
      const credentials = input.credentials ?? {}
      await verify(input.type, credentials, id)
      const at = nowIso()
      const account: StoredConnectorAccount = {
        id,
        merchantId: owner,
        type: input.type,
        priority: input.priority ?? DEFAULT_PRIORITY,
        status: 'enabled',
        description: input.description ?? null,
        credentialsHint: module.credentialsHint(credentials),
        credentials: seal(credentials, id),
        createdAt: at,
        updatedAt: at,
        deletedAt: null
      }
      if (!await store.insert(account, MAX_CONNECTORS_PER_MERCHANT)) {
        throw new ValidationError({ type: [`A merchant may have at most ${MAX_CONNECTORS_PER_MERCHANT} connector accounts; delete one first.`] })
      }
      await changed(owner)
      return publicAccount(account)
    },

    async list (merchantId) {
      return (await store.listForMerchant(await requireMerchant(merchantId))).map(publicAccount)
    },

    async get (merchantId, id) {
      return publicAccount(await accountOf(merchantId, id))
    },

    async update (merchantId, id, patch) {
      let current = await accountOf(merchantId, id)
      if (Object.values(patch).every((value) => value === undefined)) return publicAccount(current)
      const hint = patch.credentials === undefined ? undefined : checkedModule(current.type, patch.credentials).credentialsHint(patch.credentials)
      if (patch.credentials !== undefined) {
        await verify(current.type, patch.credentials, current.id)
      }
      // Compare-and-set on updatedAt; re-applied to a newer version a few times (concurrent patches), then 409.
      for (let attempt = 1; ; attempt++) {
        const updated: StoredConnectorAccount = {
          ...current,
          ...(patch.priority !== undefined ? { priority: patch.priority } : {}),
          ...(patch.status !== undefined ? { status: patch.status } : {}),
          ...(patch.description !== undefined ? { description: patch.description } : {}),
          ...(patch.credentials !== undefined
            ? { credentials: seal(patch.credentials, current.id), credentialsHint: hint ?? null }
            : {}),
          updatedAt: new Date(Math.max(deps.clock(), Date.parse(current.updatedAt) + 1)).toISOString()
        }
        if (await store.update(updated, current.updatedAt)) {
          await changed(updated.merchantId)
          return publicAccount(updated)
        }
        if (attempt >= 5) throw new ConflictError('The connector account kept changing while this change was applied; read it again and retry.')
        current = await accountOf(merchantId, id)
      }
    },

    async remove (merchantId, id) {
      const account = await accountOf(merchantId, id)
      if (!await store.softDelete(account.merchantId, account.id, nowIso())) {
        throw new NotFoundError(`The merchant has no connector account with the id '${shortId(id)}'.`)
      }
      await changed(account.merchantId)
    },

    async stats (merchantId, query) {
      const owner = await requireMerchant(merchantId)
      const range = statsRange(query, deps.clock())
      const [accounts, figures] = await Promise.all([store.listForMerchant(owner), store.attemptStats({ merchantId: owner, ...range })])
      const figuresOf = new Map(figures.map((row) => [`${row.connectorType}:${row.connectorId ?? ''}`, row]))
      const entries: ConnectorStatsEntry[] = accounts.map((account) => {
        const key = `${account.type}:${account.id}`
        const row = figuresOf.get(key) ?? { connectorId: account.id, connectorType: account.type, counts: zeroCounts(), p50Ms: null, p95Ms: null }
        figuresOf.delete(key)
        return statsEntry(row, { description: account.description, deleted: false })
      })
      // Calls through accounts deleted since, or through the default gateway: counted too, after the accounts.
      for (const row of figuresOf.values()) {
        if (row.connectorId === null) {
          entries.push(statsEntry(row, { description: null, deleted: false }))
          continue
        }
        const account = await store.get(row.connectorId)
        // The calls were the merchant's own payments' (merchant_id); an account that is not the merchant's is left out all the same.
        if (account === undefined || account.merchantId !== owner) continue
        entries.push(statsEntry(row, { description: account.description, deleted: account.deletedAt !== null }))
      }
      return { ...range, connectors: entries }
    }
  }
}

/**
 * Routing's view of the accounts (src/gateway/directory.ts): credentials opened with the account id
 * as associated data. `byId` finds disabled and deleted accounts too: their payments still settle there.
 */
export function connectorAccountSource (store: ConnectorAccountStore, box: SecretBox): ConnectorAccountSource {
  const routable = (account: StoredConnectorAccount): RoutableAccount => ({
    id: account.id,
    type: account.type,
    credentials: JSON.parse(box.open(account.credentials, account.id)) as Record<string, string>,
    updatedAt: account.updatedAt
  })
  return {
    enabledFor: async (merchantId) => (await store.enabledFor(merchantId)).map(routable),
    async byId (id) {
      const account = await store.get(id)
      return account === undefined ? undefined : routable(account)
    }
  }
}

/**
 * `source` with each merchant's enabled accounts kept in `cache` (every new payment reads them, its replays
 * too): the connector accounts service forgets a merchant on each write. `byId` is never cached: a payment
 * settles on its own account as it is stored.
 */
export function cachedAccountSource (source: ConnectorAccountSource, cache: ReadCache<RoutableAccount[]>, clock: () => number): ConnectorAccountSource {
  if (!cache.enabled) return source
  return {
    enabledFor: async (merchantId) => await cachedRead(cache, merchantId, clock, async () => await source.enabledFor(merchantId)),
    byId: source.byId
  }
}

const BATCH = 100

/**
 * Re-seals the stored connector credentials that are not under the current key (after a key
 * rotation). Each row is a compare-and-set, so a PATCH meanwhile is never undone. Returns how many
 * accounts were rewritten.
 */
export async function resealConnectorCredentials (store: ConnectorAccountStore, box: SecretBox): Promise<number> {
  const prefix = `${SEALED_PREFIX}${box.currentKeyId}:`
  let after = ''
  let rewritten = 0
  for (;;) {
    const batch: StoredCredentials[] = await store.credentialsNotUnder(prefix, after, BATCH)
    for (const stored of batch) {
      const plain = isSealed(stored.credentials) ? box.open(stored.credentials, stored.id) : stored.credentials
      if (await store.replaceCredentials(stored, box.seal(plain, stored.id))) rewritten++
    }
    const last = batch.at(-1)
    if (last === undefined || batch.length < BATCH) return rewritten
    after = last.id
  }
}
