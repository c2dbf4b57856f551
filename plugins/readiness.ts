import fp from 'fastify-plugin'
import { StoreUnavailableError } from '../src/domain/errors'

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

/** A probe answers within this time even when a dependency hangs (a paused database server). */
export const READINESS_CHECK_TIMEOUT_MS = 2_000

/** Runs one check: its answer, 'timeout' when it takes too long, or why it failed. */
async function bounded (check: ReadinessCheck): Promise<string> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<string>((resolve) => { timer = setTimeout(() => { resolve('timeout') }, READINESS_CHECK_TIMEOUT_MS) })
  try {
    return await Promise.race([check(), timeout])
  } catch (err) {
    // The database says why (unreachable, timeout, busy, io, full); anything else is just unreachable.
    return err instanceof StoreUnavailableError ? err.reason : 'unreachable'
  } finally {
    clearTimeout(timer)
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
      results[name] = await bounded(check)
    }))
    const ready = Object.entries(results).every(([name, state]) => state === 'ok' || nonCritical.has(name))
    return { ready, checks: results }
  })
  /*
   * The database's state as every call's answers tell it (src/store/health.ts), not this probe's
   * alone: a full disk shows with the first failed write, and the state turns 'ok' again only once
   * the database has answered without failure for DATABASE_SETTLE_MS, so readiness changes state
   * once per outage instead of following each call. The ping adds its own answer; while the database
   * is away it is refused at once and the heartbeat probes instead.
   */
  app.addReadinessCheck('database', async () => {
    const health = app.db.health
    try {
      await app.db.ping()
    } catch (err) {
      // An answer the tracker does not count as an outage (a closed connection) still fails the probe.
      if (health === undefined || health.state === 'ok') throw err
    }
    return health?.state ?? 'ok'
  })
}, { name: 'readiness', dependencies: ['database'], fastify: '5.x' })
