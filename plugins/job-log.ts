import type { FastifyBaseLogger } from 'fastify'
import { StoreUnavailableError } from '../src/domain/errors'

/**
 * How a repeating background job reports its runs. A job that fails because the database cannot
 * serve is paused, not broken: one warning when it starts failing so and one line when it runs
 * again (the outage itself is logged by the database plugin, once). Any other failure is a bug:
 * an error, every time.
 */
export function backgroundJobLog (log: FastifyBaseLogger, job: string): { failed: (err: unknown) => void, succeeded: () => void } {
  let paused = false
  return {
    failed (err) {
      if (!(err instanceof StoreUnavailableError)) {
        log.error({ err, job }, 'background job failed')
      } else if (!paused) {
        paused = true
        log.warn({ job, reason: err.reason }, 'background job paused: the database is unavailable; it retries every interval')
      }
    },
    succeeded () {
      if (!paused) return
      paused = false
      log.info({ job }, 'background job running again')
    }
  }
}
