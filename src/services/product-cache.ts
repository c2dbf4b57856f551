import { LRUCache } from 'lru-cache'

export interface ProductCacheOptions {
  /** How long a rendered product is reused; 0 turns the cache off. */
  ttlMs: number
  /** Products remembered at most (least recently used forgotten first). */
  maxEntries: number
}

interface Entry<Rendered> {
  rendered: Rendered
  /** Reused until this time (ms since the epoch). */
  until: number
}

/**
 * Rendered product reads (whatever the caller renders a product to: the HTTP layer keeps its answer), by id,
 * for a short time: a product read then needs no store read and no rendering. Writes forget the product (`forget`, on other instances through the
 * plugin's Redis channel); the TTL bounds how long an instance that missed the write may answer the old
 * version. A read that started before a write must not store what it read after the write forgot the
 * product: `epoch()` is taken before reading the store and `remember` ignores a value from an older epoch.
 * Times come from the caller's clock.
 */
export interface ProductCache<Rendered> {
  get: (id: string, now: number) => Rendered | undefined
  /** The current epoch, taken before reading the product that will be remembered. */
  epoch: () => number
  remember: (id: string, rendered: Rendered, readSince: number, now: number) => void
  forget: (id: string) => void
  clear: () => void
  readonly enabled: boolean
}

export function productCache<Rendered> (options: ProductCacheOptions): ProductCache<Rendered> {
  if (options.ttlMs <= 0) {
    return { get: () => undefined, epoch: () => 0, remember: () => {}, forget: () => {}, clear: () => {}, enabled: false }
  }
  const entries = new LRUCache<string, Entry<Rendered>>({ max: options.maxEntries })
  // Any forget moves the epoch: coarse (a write of one product keeps a read of another out once) but never stale.
  let epoch = 0
  return {
    enabled: true,
    get (id, now) {
      const entry = entries.get(id)
      if (entry === undefined) return undefined
      if (now >= entry.until) {
        entries.delete(id)
        return undefined
      }
      return entry.rendered
    },
    epoch: () => epoch,
    remember (id, rendered, readSince, now) {
      if (readSince === epoch) entries.set(id, { rendered, until: now + options.ttlMs })
    },
    forget (id) {
      epoch++
      entries.delete(id)
    },
    clear () {
      epoch++
      entries.clear()
    }
  }
}
