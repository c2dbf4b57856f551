import type { Principal } from '../domain/api-keys'
import { readCache } from './read-cache'

export interface CredentialCacheOptions {
  /** How long a successful lookup is reused; 0 turns the cache off. */
  ttlMs: number
  /** Keys remembered at most (least recently used forgotten first). */
  maxEntries: number
}

/**
 * Successful API key lookups, by the key's hash, for a short time: authentication
 * then costs a hash and a map lookup instead of a database read. Only keys that
 * authenticated are kept (unknown keys are not, so guessing cannot fill the cache),
 * the size is bounded, and `clear` forgets everything at once when a key is revoked
 * or a merchant's status changes. Times come from the caller's clock.
 */
export interface CredentialCache {
  get: (hash: string, now: number) => Principal | undefined
  set: (hash: string, principal: Principal, keyExpiresAt: number | null, now: number) => void
  clear: () => void
  readonly enabled: boolean
}

export function credentialCache (options: CredentialCacheOptions): CredentialCache {
  const lookups = readCache<Principal>(options)
  return {
    enabled: lookups.enabled,
    get: (hash, now) => lookups.get(hash, now),
    // Reused for the TTL, or until the key's own expiry if sooner.
    set (hash, principal, keyExpiresAt, now) { lookups.remember(hash, principal, lookups.epoch(), now, keyExpiresAt ?? undefined) },
    clear () { lookups.clear() }
  }
}
