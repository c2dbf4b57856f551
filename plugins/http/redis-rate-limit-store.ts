import type { Redis } from 'ioredis'
import type { FastifyRateLimitOptions, FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'

/**
 * One fixed window per key, counted atomically in Redis so every instance shares
 * it: INCR, and on the first hit of a window PEXPIRE (or, with continueExceeding,
 * again on every hit over the limit). Returns the count and the window's time left.
 * The same algorithm as @fastify/rate-limit's own Redis store.
 */
const WINDOW_SCRIPT = `
local current = redis.call('INCR', KEYS[1])
local ttl = tonumber(ARGV[1])
if current == 1 or (ARGV[3] == 'true' and current > tonumber(ARGV[2])) then
  redis.call('PEXPIRE', KEYS[1], ttl)
else
  ttl = redis.call('PTTL', KEYS[1])
end
return {current, ttl}
`

const COMMAND = 'ppsRateLimitWindow'

type IncrCallback = (error: Error | null, result?: { current: number, ttl: number }) => void
type WindowCommand = (key: string, timeWindow: number, max: number, continueExceeding: string) => Promise<[number, number]>

/**
 * A @fastify/rate-limit store on a shared ioredis client under `prefix`. Unlike
 * the built-in one it tells `onError` about every failed count, so the plugin can
 * log that it is failing open (`skipOnError`) instead of doing so silently.
 */
export function redisRateLimitStore (redis: Redis, prefix: string, onError: (err: Error) => void): FastifyRateLimitStoreCtor {
  if (!(COMMAND in redis)) redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: WINDOW_SCRIPT })
  const countWindow = (redis as unknown as Record<typeof COMMAND, WindowCommand>)[COMMAND].bind(redis)

  class RedisWindowStore implements FastifyRateLimitStore {
    private readonly continueExceeding: boolean
    constructor (options: FastifyRateLimitOptions, private readonly keyPrefix = prefix) {
      // The plugin passes its merged settings (continueExceeding included) here and to child().
      this.continueExceeding = (options as { continueExceeding?: boolean }).continueExceeding === true
    }

    // @fastify/rate-limit calls incr(key, callback, timeWindow, max); its typings list only the first two.
    incr (key: string, callback: IncrCallback, timeWindow?: number, max?: number): void {
      countWindow(this.keyPrefix + key, timeWindow ?? 60_000, max ?? 0, String(this.continueExceeding))
        .then(([current, ttl]) => { callback(null, { current, ttl }) }, (err: Error) => {
          onError(err)
          callback(err)
        })
    }

    child (routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
      const route = (routeOptions as { routeInfo?: { method?: string, url?: string } }).routeInfo ?? {}
      return new RedisWindowStore(routeOptions as FastifyRateLimitOptions, `${this.keyPrefix}${String(route.method ?? '')}${String(route.url ?? '')}-`)
    }
  }
  return RedisWindowStore
}
