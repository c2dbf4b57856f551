import fp from 'fastify-plugin'
import { readCache, type ReadCache } from '../src/services/read-cache'

/** A product read as it is answered: the serialised body and its ETag. */
export interface RenderedProduct {
  body: string
  etag: string
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Rendered product reads (body and ETag), reused for PRODUCT_CACHE_TTL_MS. */
    productCache: ReadCache<RenderedProduct>
    /** Forgets a product on this instance and tells the other instances (through Redis) to forget it. */
    forgetProduct: (id: string) => Promise<void>
  }
}

/**
 * The rendered product cache and its invalidation across instances, as the credential cache's
 * (plugins/credential-cache.ts): a write forgets the product on its instance before it is answered and
 * announces the id on a Redis channel every instance subscribes to, so the others forget it within
 * milliseconds. Without Redis, or while an instance is cut off from it, PRODUCT_CACHE_TTL_MS (default 1 s)
 * bounds how long another instance may still answer the previous version; a subscriber that reconnects
 * clears its cache, since it may have missed announcements.
 */
export default fp(async (app) => {
  const cache = readCache<RenderedProduct>({ ttlMs: app.config.PRODUCT_CACHE_TTL_MS, maxEntries: app.config.PRODUCT_CACHE_MAX_ENTRIES })
  app.decorate('productCache', cache)
  if (!cache.enabled) {
    app.decorate('forgetProduct', async () => {})
    return
  }
  // Where instances announce product writes (a message: the id of the product to forget).
  const announce = await app.invalidationChannel('product-invalidations', { onMessage: (id) => { cache.forget(id) }, onMissed: () => { cache.clear() } })
  app.decorate('forgetProduct', async (id: string) => {
    cache.forget(id)
    await announce(id)
  })
}, { name: 'product-cache', dependencies: ['config', 'redis'], fastify: '5.x' })
