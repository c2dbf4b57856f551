import { LRUCache } from 'lru-cache'

export interface ReadCacheOptions {
  /** How long a value is reused; 0 turns the cache off. */
  ttlMs: number
  /** Values remembered at most (least recently used forgotten first). */
  maxEntries: number
}

interface Entry<Value> {
  value: Value
  /** Reused until this time (ms since the epoch). */
  until: number
}

/**
 * Reads kept for a short time by key (a rendered product, a merchant's routing accounts), so a read
 * needs no store access. Writes forget the key (`forget`, on other instances through the plugin's Redis
 * channel); the TTL bounds how long an instance that missed the write may use the old value. A read that
 * started before a write must not store what it read after the write forgot the key: `epoch()` is taken
 * before reading the store and `remember` ignores a value from an older epoch. Times come from the
 * caller's clock.
 */
export interface ReadCache<Value> {
  get: (key: string, now: number) => Value | undefined
  /** The current epoch, taken before reading the value that will be remembered. */
  epoch: () => number
  /** Kept for the TTL, or until `notAfter` (ms since the epoch) if that is sooner. */
  remember: (key: string, value: Value, readSince: number, now: number, notAfter?: number) => void
  forget: (key: string) => void
  clear: () => void
  readonly enabled: boolean
}

export function readCache<Value> (options: ReadCacheOptions): ReadCache<Value> {
  if (options.ttlMs <= 0) {
    return { get: () => undefined, epoch: () => 0, remember: () => {}, forget: () => {}, clear: () => {}, enabled: false }
  }
  const entries = new LRUCache<string, Entry<Value>>({ max: options.maxEntries })
  // Any forget moves the epoch: coarse (a write of one key keeps a read of another out once) but never stale.
  let epoch = 0
  return {
    enabled: true,
    get (key, now) {
      const entry = entries.get(key)
      if (entry === undefined) return undefined
      if (now >= entry.until) {
        entries.delete(key)
        return undefined
      }
      return entry.value
    },
    epoch: () => epoch,
    remember (key, value, readSince, now, notAfter = Number.POSITIVE_INFINITY) {
      const until = Math.min(now + options.ttlMs, notAfter)
      if (readSince === epoch && until > now) entries.set(key, { value, until })
    },
    forget (key) {
      epoch++
      entries.delete(key)
    },
    clear () {
      epoch++
      entries.clear()
    }
  }
}

/**
 * The value under `key`: from the cache while it is fresh (synchronously: a hit costs no promise), else
 * from `read`, remembered unless a write forgot anything while it was read.
 */
export function cachedRead<Value> (cache: ReadCache<Value>, key: string, now: () => number, read: () => Promise<Value>): Value | Promise<Value> {
  const hit = cache.get(key, now())
  if (hit !== undefined) return hit
  const readSince = cache.epoch()
  return read().then((value) => {
    cache.remember(key, value, readSince, now())
    return value
  })
}
