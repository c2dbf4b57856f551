import fp from 'fastify-plugin'
import { credentialCache, type CredentialCache } from '../src/services/credential-cache'

declare module 'fastify' {
  interface FastifyInstance {
    /** Successful API key lookups, reused for AUTH_CACHE_TTL_MS. */
    credentialCache: CredentialCache
    /** Clears this instance's cache and tells the other instances (through Redis) to clear theirs. */
    forgetCredentials: () => Promise<void>
  }
}

/**
 * The API key cache and its invalidation across instances. A revocation or a merchant's
 * suspension clears the local cache before the request that made it is answered, and is
 * published on a Redis channel every instance subscribes to, so other instances clear
 * theirs within milliseconds. Without Redis, or while an instance is cut off from it, the
 * TTL (AUTH_CACHE_TTL_MS, default 2 s) bounds how long another instance may still accept
 * the key; a subscriber that reconnects clears its cache, since it may have missed messages.
 */
export default fp(async (app) => {
  const cache = credentialCache({ ttlMs: app.config.AUTH_CACHE_TTL_MS, maxEntries: app.config.AUTH_CACHE_MAX_ENTRIES })
  app.decorate('credentialCache', cache)
  const redis = app.redis
  if (redis === null || !cache.enabled) {
    app.decorate('forgetCredentials', async () => { cache.clear() })
    return
  }

  // Where instances announce revocations and status changes (a message means: forget every cached lookup).
  const channel = `${app.config.REDIS_KEY_PREFIX}api-key-invalidations`
  // A connection in subscriber mode can do nothing else: a second one. Subscribed before the
  // instance is ready; after a reconnect it subscribes again and forgets what it may have missed.
  const subscriber = redis.duplicate({ autoResubscribe: false })
  const subscribe = async () => { await subscriber.subscribe(channel) }
  subscriber.on('error', (err) => { app.reportRedisFailure(err) })
  subscriber.on('message', (from) => { if (from === channel) cache.clear() })
  app.addHook('onClose', async () => { subscriber.disconnect() })
  await subscriber.connect().then(subscribe).catch((err: Error) => { app.reportRedisFailure(err) })
  subscriber.on('ready', () => {
    cache.clear()
    subscribe().catch((err: Error) => { app.reportRedisFailure(err) })
  })

  app.decorate('forgetCredentials', async () => {
    cache.clear()
    try {
      await redis.publish(channel, 'clear')
    } catch (err) {
      app.reportRedisFailure(err as Error)
    }
  })
}, { name: 'credential-cache', dependencies: ['config', 'redis'], fastify: '5.x' })
