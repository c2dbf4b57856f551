import { LRUCache } from 'lru-cache'
import type { Principal } from '../domain/api-keys'

export interface CredentialCacheOptions {
  /** How long a successful lookup is reused; 0 turns the cache off. */
  ttlMs: number
  /** Keys remembered at most (least recently used forgotten first). */
  maxEntries: number
}

interface Entry {
  principal: Principal
  /** Reused until this time (ms since the epoch): the TTL, or the key's own expiry if sooner. */
  until: number
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
  if (options.ttlMs <= 0) {
    return { get: () => undefined, set: () => {}, clear: () => {}, enabled: false }
  }
  const entries = new LRUCache<string, Entry>({ max: options.maxEntries })
  return {
    enabled: true,
    get (hash, now) {
      const entry = entries.get(hash)
      if (entry === undefined) return undefined
      if (now >= entry.until) {
        entries.delete(hash)
        return undefined
      }
      return entry.principal
    },
    set (hash, principal, keyExpiresAt, now) {
      const until = Math.min(now + options.ttlMs, keyExpiresAt ?? Number.POSITIVE_INFINITY)
      if (until > now) entries.set(hash, { principal, until })
    },
    clear () { entries.clear() }
  }
}
