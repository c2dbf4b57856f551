import { ConflictError, NotFoundError, ValidationError } from '../domain/errors'
import {
  MAX_ACTIVE_API_KEYS,
  SECRET_PATTERN,
  describeSecret,
  generateSecret,
  hashSecret,
  isKeyUsable,
  sameHash,
  type ApiKey,
  type Principal
} from '../domain/api-keys'
import { isGuid, newId } from '../domain/ids'
import { merchantNotFoundMessage } from '../domain/merchants'
import type { ApiKeyMatch, ApiKeyStore, MerchantStore } from '../store/types'
import type { CredentialCache } from './credential-cache'
import type { OwnedKey } from './keys'

export interface ApiKeyServiceDeps {
  apiKeys: ApiKeyStore
  merchants: MerchantStore
  /** Milliseconds since the epoch. */
  clock: () => number
  /** ADMIN_API_KEY; when unset, the admin key generated on first start (SQLite only) is the operator's. */
  adminApiKey?: string
  /** Told about failures of the background lastUsedAt writes (they never fail a request). */
  onBackgroundError?: (err: unknown) => void
  /** lastUsedAt is written at most once per this many ms per key and instance (default one minute). */
  usageGranularityMs?: number
  /** Recorded uses are written together this long after the first of a batch (default one second). */
  usageFlushDelayMs?: number
  newId?: () => string
  /** Successful lookups reused for a short time; cleared here when a key is revoked. */
  cache?: CredentialCache
  /** Called after a revocation, so other instances forget their cached lookups too. */
  onCredentialsChanged?: () => Promise<void>
}

export interface CreateApiKeyInput {
  name?: string
  expiresAt?: string
}

/** A new key and its secret: the only time the secret exists outside the client. */
export interface CreatedApiKey {
  key: ApiKey
  secret: string
}

export const DEFAULT_KEY_NAME = 'API key'
/** The credential id of the configured ADMIN_API_KEY (rate limits, logs). */
const ADMIN_CREDENTIAL_ID = 'ADMIN_API_KEY'
/** Bounds the per-instance memory of when each key's use was last written. */
const MAX_TRACKED_KEYS = 10_000

export interface ApiKeyService {
  /** With `idempotencyKey`, its response (built by the caller, sealed) is stored in the transaction that inserts the key. */
  create: (merchantId: string, input: CreateApiKeyInput, idempotencyKey?: OwnedKey<CreatedApiKey>) => Promise<CreatedApiKey>
  list: (merchantId: string) => Promise<ApiKey[]>
  /** Refused from the next request on this instance; on others once they hear of it (see apiKeyService). */
  revoke: (merchantId: string, keyId: string) => Promise<void>
  /** The principal `token` authenticates, or undefined for an unknown, revoked or expired one. */
  authenticate: (token: string) => Promise<Principal | undefined>
  /**
   * A reference to the credential `principal` authenticated with, to be resolved again later by
   * `principalOf` (dashboard sessions): a key's id, or for ADMIN_API_KEY a fingerprint of its hash, so
   * that setting another ADMIN_API_KEY retires what the previous one made. Never the key itself.
   */
  credentialOf: (principal: Principal) => string
  /** The principal the credential `credentialOf` named stands for now; undefined once revoked, expired or retired. */
  principalOf: (credential: string) => Promise<Principal | undefined>
  /**
   * Without ADMIN_API_KEY: generates the admin key if the database has none, stores only its hash
   * and returns the secret (to be shown once). Undefined when there is nothing to show.
   */
  bootstrapAdminKey: () => Promise<string | undefined>
  /** Writes the recorded uses now (before shutdown). */
  flushUsage: () => Promise<void>
}

function merchantNotFound (id: string): NotFoundError {
  return new NotFoundError(merchantNotFoundMessage(id))
}

/**
 * API keys: issue, list, revoke, and authenticate a Bearer token.
 *
 * Authentication reads the key by its hash (one indexed lookup, joined with the merchant's
 * status) and, with a cache, reuses a successful answer for a short time. A revocation clears
 * this instance's cache before it returns and tells the others through `onCredentialsChanged`;
 * an instance that misses the message still stops accepting the key when the cache's TTL ends.
 * lastUsedAt is written at most once per minute per key and instance, in batches, off the
 * request path.
 */
export function apiKeyService (deps: ApiKeyServiceDeps): ApiKeyService {
  const adminHash = deps.adminApiKey === undefined ? undefined : hashSecret(deps.adminApiKey)
  const newRecordId = deps.newId ?? newId
  const usage = usageRecorder(deps)
  const adminCredential = adminHash === undefined ? undefined : `${ADMIN_CREDENTIAL_ID}#${hashSecret(adminHash).slice(0, 32)}`

  /** Who a stored key stands for now (undefined: unusable, or a generated admin key retired by ADMIN_API_KEY). */
  function principalOfMatch (match: ApiKeyMatch | undefined, now: number): Principal | undefined {
    if (match === undefined || !isKeyUsable(match.key, now)) return undefined
    const { key, merchantStatus, merchantApiVersion } = match
    if (key.role === 'merchant' && key.merchantId !== null && merchantStatus !== null && merchantApiVersion !== null) {
      return { kind: 'merchant', credentialId: key.id, merchantId: key.merchantId, merchantStatus, apiVersion: merchantApiVersion, keyLabel: `${key.name} (${key.prefix}…)` }
    }
    // The generated admin key counts only while no ADMIN_API_KEY is configured: setting one retires it.
    if (key.role === 'admin' && adminHash === undefined) return { kind: 'admin', credentialId: key.id }
    return undefined
  }

  async function requireMerchant (merchantId: string): Promise<string> {
    const merchant = isGuid(merchantId) ? await deps.merchants.get(merchantId.toLowerCase()) : undefined
    if (merchant === undefined) throw merchantNotFound(merchantId)
    return merchant.id
  }

  return {
    async create (merchantId, input, idempotencyKey) {
      const id = await requireMerchant(merchantId)
      const now = deps.clock()
      if (input.expiresAt !== undefined && Date.parse(input.expiresAt) <= now) {
        throw new ValidationError({ expiresAt: ['The expiresAt field must be a time in the future.'] })
      }
      // Bounded, so the key list (not paginated) stays small: rotation needs two keys at once, not hundreds.
      if ((await deps.apiKeys.listForMerchant(id)).length >= MAX_ACTIVE_API_KEYS) {
        throw new ConflictError(`A merchant may hold at most ${MAX_ACTIVE_API_KEYS} API keys that are not revoked; revoke one first.`)
      }
      const secret = generateSecret()
      const key: ApiKey = {
        id: newRecordId(),
        merchantId: id,
        role: 'merchant',
        name: input.name ?? DEFAULT_KEY_NAME,
        ...describeSecret(secret),
        createdAt: new Date(now).toISOString(),
        expiresAt: input.expiresAt === undefined ? null : new Date(input.expiresAt).toISOString(),
        lastUsedAt: null,
        revokedAt: null
      }
      const created = { key, secret }
      await deps.apiKeys.create(key, idempotencyKey === undefined ? undefined : { ref: idempotencyKey.ref, response: idempotencyKey.respond(created) })
      return created
    },

    async list (merchantId) {
      return await deps.apiKeys.listForMerchant(await requireMerchant(merchantId))
    },

    async revoke (merchantId, keyId) {
      const id = await requireMerchant(merchantId)
      const revoked = isGuid(keyId) && await deps.apiKeys.revoke(id, keyId.toLowerCase(), new Date(deps.clock()).toISOString())
      if (!revoked) throw new NotFoundError(`Merchant '${id}' has no active API key with the id '${keyId.slice(0, 64)}'.`)
      deps.cache?.clear()
      await deps.onCredentialsChanged?.()
    },

    async authenticate (token) {
      const hash = hashSecret(token)
      // The configured key is compared in constant time; its hash never reaches the database.
      if (adminHash !== undefined && sameHash(hash, adminHash)) return { kind: 'admin', credentialId: ADMIN_CREDENTIAL_ID }
      // Anything that is not shaped like a key cannot be one: no lookup.
      if (!SECRET_PATTERN.test(token)) return undefined
      const now = deps.clock()
      const cached = deps.cache?.get(hash, now)
      if (cached !== undefined) {
        usage.record(cached.credentialId, now)
        return cached
      }
      const match = await deps.apiKeys.findByHash(hash)
      if (match === undefined || !sameHash(match.key.secretHash, hash)) return undefined
      const principal = principalOfMatch(match, now)
      const key = match.key
      if (principal !== undefined) {
        usage.record(key.id, now)
        deps.cache?.set(hash, principal, key.expiresAt === null ? null : Date.parse(key.expiresAt), now)
      }
      return principal
    },

    credentialOf (principal) {
      return principal.credentialId === ADMIN_CREDENTIAL_ID && adminCredential !== undefined ? adminCredential : principal.credentialId
    },

    async principalOf (credential) {
      if (credential.startsWith(`${ADMIN_CREDENTIAL_ID}#`)) {
        return adminCredential !== undefined && credential === adminCredential ? { kind: 'admin', credentialId: ADMIN_CREDENTIAL_ID } : undefined
      }
      if (!isGuid(credential)) return undefined
      const now = deps.clock()
      // Cached beside the hashes (a different key space), so revocations and status changes clear it too.
      const cacheKey = `id:${credential}`
      const cached = deps.cache?.get(cacheKey, now)
      if (cached !== undefined) return cached
      const match = await deps.apiKeys.findById(credential)
      const principal = principalOfMatch(match, now)
      if (principal !== undefined && match !== undefined) {
        usage.record(match.key.id, now)
        deps.cache?.set(cacheKey, principal, match.key.expiresAt === null ? null : Date.parse(match.key.expiresAt), now)
      }
      return principal
    },

    async bootstrapAdminKey () {
      if (adminHash !== undefined) return undefined
      const secret = generateSecret()
      const at = new Date(deps.clock()).toISOString()
      const stored = await deps.apiKeys.createBootstrapAdmin({
        id: newRecordId(),
        merchantId: null,
        role: 'admin',
        name: 'Generated admin key',
        ...describeSecret(secret),
        createdAt: at,
        expiresAt: null,
        lastUsedAt: null,
        revokedAt: null
      })
      return stored ? secret : undefined
    },

    flushUsage: usage.flush
  }
}

/** Remembers key uses and writes them in batches, at most once per granularity per key. */
function usageRecorder (deps: ApiKeyServiceDeps): { record: (keyId: string, now: number) => void, flush: () => Promise<void> } {
  const granularity = deps.usageGranularityMs ?? 60_000
  const delay = deps.usageFlushDelayMs ?? 1000
  const lastWritten = new Map<string, number>()
  let pending = new Map<string, string>()
  let timer: NodeJS.Timeout | undefined

  async function flush (): Promise<void> {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    if (pending.size === 0) return
    const batch = [...pending].map(([id, at]) => ({ id, at }))
    pending = new Map()
    try {
      await deps.apiKeys.recordUse(batch)
    } catch (err) {
      deps.onBackgroundError?.(err)
    }
  }

  return {
    record (keyId, now) {
      const last = lastWritten.get(keyId)
      if (last !== undefined && now - last < granularity) return
      if (lastWritten.size >= MAX_TRACKED_KEYS) lastWritten.clear()
      lastWritten.set(keyId, now)
      pending.set(keyId, new Date(now).toISOString())
      timer ??= setTimeout(() => { flush().catch(() => {}) }, delay).unref()
    },
    flush
  }
}
