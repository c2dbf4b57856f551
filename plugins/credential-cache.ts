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
  if (!cache.enabled) {
    app.decorate('forgetCredentials', async () => {})
    return
  }
  // Where instances announce revocations and status changes (a message means: forget every cached lookup).
  const announce = await app.invalidationChannel('api-key-invalidations', { onMessage: () => { cache.clear() }, onMissed: () => { cache.clear() } })
  app.decorate('forgetCredentials', async () => {
    cache.clear()
    await announce('clear')
  })
}, { name: 'credential-cache', dependencies: ['config', 'redis'], fastify: '5.x' })
