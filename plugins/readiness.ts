import fp from 'fastify-plugin'

export type ReadinessCheck = () => Promise<'ok' | string>

declare module 'fastify' {
  interface FastifyInstance {
    /** Adds a named dependency check to GET /health/ready. */
    addReadinessCheck: (name: string, check: ReadinessCheck) => void
    readinessChecks: () => Promise<Record<string, string>>
  }
}

/** Collects dependency checks (database, Redis, …) for the readiness probe. */
export default fp(async (app) => {
  const checks = new Map<string, ReadinessCheck>()
  app.decorate('addReadinessCheck', (name: string, check: ReadinessCheck) => { checks.set(name, check) })
  app.decorate('readinessChecks', async () => {
    const results: Record<string, string> = {}
    await Promise.all([...checks].map(async ([name, check]) => {
      try {
        results[name] = await check()
      } catch {
        results[name] = 'unreachable'
      }
    }))
    return results
  })
  app.addReadinessCheck('database', async () => { await app.db.ping(); return 'ok' })
}, { name: 'readiness', dependencies: ['database'], fastify: '5.x' })
