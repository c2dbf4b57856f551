import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'

declare module 'fastify' {
  interface FastifyInstance {
    /** The shared Redis client when REDIS_URL is set, otherwise null. */
    redis: Redis | null
    /** Logs (throttled) that a Redis call failed and the service is failing open. */
    reportRedisFailure: (err: Error) => void
    /**
     * Joins the instances' channel `name` (under REDIS_KEY_PREFIX) for cache invalidations and returns how to
     * announce one: `onMessage` hears every announcement, this instance's own included; `onMissed` runs when the
     * instance may have missed some (it reconnected to Redis). Without Redis the announcement reaches no one.
     */
    invalidationChannel: (name: string, handlers: InvalidationHandlers) => Promise<(message: string) => Promise<void>>
  }
}

export interface InvalidationHandlers {
  onMessage: (message: string) => void
  onMissed: () => void
}

/** A dependency that is slow is as bad as one that is away: every Redis call is bounded. */
export const REDIS_CONNECT_TIMEOUT_MS = 1000
export const REDIS_COMMAND_TIMEOUT_MS = 500
/** Warnings about an outage are repeated at most this often. */
const WARN_INTERVAL_MS = 30_000

export const REDIS_DEGRADED = 'degraded: Redis unreachable, rate limits are not enforced (fail open) and other instances ' +
  'hear of API key revocations only when their cached lookups expire (AUTH_CACHE_TTL_MS)'

/**
 * The Redis client (REDIS_URL) shared by the instances' rate limiting and API key cache invalidation. Redis is
 * not critical: when it is away requests are still served (the rate limit fails
 * open), a warning is logged, and /health/ready reports `redis: degraded` but
 * stays 200. The client never queues commands and gives up quickly, so an outage
 * costs a request at most REDIS_COMMAND_TIMEOUT_MS; it reconnects in the background.
 */
export default fp(async (app) => {
  const url = app.config.REDIS_URL
  if (url === undefined) {
    app.decorate('redis', null)
    app.decorate('reportRedisFailure', () => {})
    app.decorate('invalidationChannel', async () => async () => {})
    return
  }
  // Loaded only when configured: ioredis is a large module and start-up time counts.
  const { Redis: RedisClient } = require('ioredis') as typeof import('ioredis')
  const redis = new RedisClient(url, {
    lazyConnect: true,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000)
  })

  let down = false
  let lastWarning = 0
  const reportFailure = (err: Error): void => {
    const now = Date.now()
    if (!down || now - lastWarning >= WARN_INTERVAL_MS) {
      app.log.warn({ err: { message: err.message } }, 'Redis unreachable: serving requests without the shared rate limit (fail open); ' +
        'other instances hear of API key revocations only when their cached lookups expire (AUTH_CACHE_TTL_MS)')
      lastWarning = now
    }
    down = true
  }
  redis.on('error', reportFailure)
  redis.on('ready', () => {
    if (down) app.log.info('Redis reachable again: the shared rate limit applies again')
    down = false
  })

  app.decorate('redis', redis)
  app.decorate('reportRedisFailure', reportFailure)
  app.addReadinessCheck('redis', async () => {
    if (redis.status !== 'ready') return REDIS_DEGRADED
    try {
      await redis.ping()
      return 'ok'
    } catch {
      return REDIS_DEGRADED
    }
  }, { critical: false })
  app.addHook('onClose', async () => {
    if (redis.status === 'ready') await redis.quit().catch(() => { redis.disconnect() })
    else redis.disconnect()
  })

  // Start with the connection up when Redis is there; start anyway (and keep retrying) when it is not.
  await redis.connect().catch(reportFailure)

  // One subscriber connection (a connection in subscriber mode can do nothing else) for every channel, made on the
  // first join. Channels are joined before the instance is ready; after a reconnect it joins them again and tells
  // each that it may have missed announcements.
  const channels = new Map<string, InvalidationHandlers>()
  let subscriber: Redis | undefined
  app.addHook('onClose', async () => { subscriber?.disconnect() })
  const joinAll = async (to: Redis): Promise<void> => { await to.subscribe(...channels.keys()) }
  const startSubscriber = async (): Promise<Redis> => {
    const connection = redis.duplicate({ autoResubscribe: false, lazyConnect: true, connectionName: `${app.config.REDIS_KEY_PREFIX}invalidations` })
    connection.on('error', reportFailure)
    connection.on('message', (channel: string, message: string) => { channels.get(channel)?.onMessage(message) })
    await connection.connect().catch(reportFailure)
    connection.on('ready', () => {
      for (const handlers of channels.values()) handlers.onMissed()
      joinAll(connection).catch(reportFailure)
    })
    return connection
  }
  app.decorate('invalidationChannel', async (name: string, handlers: InvalidationHandlers) => {
    const channel = `${app.config.REDIS_KEY_PREFIX}${name}`
    channels.set(channel, handlers)
    subscriber ??= await startSubscriber()
    if (subscriber.status === 'ready') await joinAll(subscriber).catch(reportFailure)
    return async (message: string) => {
      try {
        await redis.publish(channel, message)
      } catch (err) {
        reportFailure(err as Error)
      }
    }
  })
}, { name: 'redis', dependencies: ['config', 'readiness'], fastify: '5.x' })
