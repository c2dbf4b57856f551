import fp from 'fastify-plugin'

export type ReadinessCheck = () => Promise<'ok' | string>

export interface ReadinessCheckOptions {
  /**
   * Whether anything but 'ok' makes the instance not ready (503). Default true.
   * A dependency the service degrades gracefully without (Redis: rate limiting
   * fails open) is reported but does not take the instance out of rotation.
   */
  critical?: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Adds a named dependency check to GET /health/ready. */
    addReadinessCheck: (name: string, check: ReadinessCheck, options?: ReadinessCheckOptions) => void
    /** Runs every check; ready unless a critical one is not 'ok'. */
    readinessReport: () => Promise<{ ready: boolean, checks: Record<string, string> }>
  }
}

/** Collects dependency checks (database, Redis, …) for the readiness probe. */
export default fp(async (app) => {
  const checks = new Map<string, ReadinessCheck>()
  const nonCritical = new Set<string>()
  app.decorate('addReadinessCheck', (name: string, check: ReadinessCheck, options: ReadinessCheckOptions = {}) => {
    checks.set(name, check)
    if (options.critical === false) nonCritical.add(name)
    else nonCritical.delete(name)
  })
  app.decorate('readinessReport', async () => {
    const results: Record<string, string> = {}
    await Promise.all([...checks].map(async ([name, check]) => {
      try {
        results[name] = await check()
      } catch {
        results[name] = 'unreachable'
      }
    }))
    const ready = Object.entries(results).every(([name, state]) => state === 'ok' || nonCritical.has(name))
    return { ready, checks: results }
  })
  app.addReadinessCheck('database', async () => { await app.db.ping(); return 'ok' })
}, { name: 'readiness', dependencies: ['database'], fastify: '5.x' })
