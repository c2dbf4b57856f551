import fp from 'fastify-plugin'
import { captureResponse, paymentResponse, refundResponse } from './stored-responses'
import { backgroundJobLog } from './job-log'
import type { InboundRecovery } from '../src/gateway/inbound'

export interface BackgroundJobs {
  reapExpiredKeys: () => Promise<number>
  recoverPendingPayments: () => Promise<{ settled: number, stillPending: number }>
  recoverPendingRefunds: () => Promise<{ settled: number, stillPending: number }>
  /** Payments waiting for their shopper: asked about after a minute, canceled (abandoned) after ACTION_TTL_SECONDS. */
  recoverActions: () => Promise<{ settled: number, abandoned: number, waiting: number }>
  /** Finishes captures left in flight and voids authorizations past captureBefore (manual capture). */
  recoverAuthorizations: () => Promise<{ captured: number, expired: number, stillPending: number }>
  /** Deletes events (and their deliveries) older than EVENT_RETENTION_DAYS. */
  reapOldEvents: () => Promise<number>
  /** Deletes dashboard sessions past their idle timeout or absolute lifetime. */
  reapDashboardSessions: () => Promise<number>
  /**
   * The PSPs whose events are kept with their payload (Adyen's notifications): acts on those recorded but never
   * processed (a crash in between), then counts (metric) and logs what waits on the PSP's word for over an hour.
   */
  reconcileConnectorEvents: () => Promise<InboundRecovery>
}

declare module 'fastify' {
  interface FastifyInstance {
    backgroundJobs: BackgroundJobs
  }
}

interface RepeatingTask { stop: () => Promise<void> }

/** Runs `task` every `intervalMs` (0 disables it), never overlapping itself. */
function repeat (intervalMs: number, task: () => Promise<unknown>, report: { failed: (err: unknown) => void, succeeded: () => void }): RepeatingTask {
  if (intervalMs === 0) return { stop: async () => {} }
  let stopped = false
  let running: Promise<unknown> = Promise.resolve()
  let timer: NodeJS.Timeout
  const schedule = (): void => {
    timer = setTimeout(() => {
      running = task().then(report.succeeded, report.failed).finally(() => { if (!stopped) schedule() })
    }, intervalMs)
    timer.unref()
  }
  schedule()
  return {
    async stop () {
      stopped = true
      clearTimeout(timer)
      await running
    }
  }
}

/** A payment waiting for its shopper is asked about at its connector once unchanged for this long (its webhook may have been lost). */
const ACTION_ASK_AFTER_SECONDS = 60

/** The idempotency-key reaper and the pending-payment recovery worker. Both stop on close. */
export default fp(async (app) => {
  // Aborted when the app closes: the recovery worker abandons its gateway calls and frees their keys.
  const shutdown = new AbortController()
  const jobs: BackgroundJobs = {
    // Deletes idempotency keys past retention (never one whose payment is pending).
    reapExpiredKeys: async () => await app.db.idempotency.reap(app.clock()),
    async recoverPendingPayments () {
      const recovered = await app.payments.recoverPending({
        ageSeconds: app.config.RECOVERY_AGE_SECONDS,
        maxAgeSeconds: app.config.PENDING_PAYMENT_MAX_AGE,
        leaseMs: app.config.IDEMPOTENCY_LOCK_SECONDS * 1000,
        concurrency: app.config.RECOVERY_CONCURRENCY,
        signal: shutdown.signal,
        respond: paymentResponse
      })
      // Money a connector holds for a payment that does not own it, not given back yet: asked again every pass.
      await app.payments.releaseHeldMoney()
      return recovered
    },
    reapOldEvents: async () => await app.events.reap(app.config.EVENT_RETENTION_DAYS),
    // The session service is decorated by the auth plugin, registered after this one; jobs run once the app is ready.
    reapDashboardSessions: async () => await app.dashboardSessions.deleteEnded(),
    recoverPendingRefunds: async () => await app.refunds.recoverPending({
      ageSeconds: app.config.RECOVERY_AGE_SECONDS,
      leaseMs: app.config.IDEMPOTENCY_LOCK_SECONDS * 1000,
      respond: refundResponse
    }),
    recoverActions: async () => await app.payments.recoverActions({ askAfterSeconds: ACTION_ASK_AFTER_SECONDS, ttlSeconds: app.config.ACTION_TTL_SECONDS }),
    recoverAuthorizations: async () => await app.captures.recover({
      ageSeconds: app.config.RECOVERY_AGE_SECONDS,
      leaseMs: app.config.IDEMPOTENCY_LOCK_SECONDS * 1000,
      respond: captureResponse
    }),
    async reconcileConnectorEvents () {
      const total: InboundRecovery = { processed: 0, awaiting: { capture: 0, refund: 0, void: 0 } }
      for (const receiver of app.connectorEvents.values()) {
        if (receiver.recover === undefined) continue
        const { processed, awaiting } = await receiver.recover({ ageSeconds: app.config.RECOVERY_AGE_SECONDS })
        total.processed += processed
        for (const kind of ['capture', 'refund', 'void'] as const) total.awaiting[kind] += awaiting[kind]
      }
      app.metrics.connectorOutcomesAwaiting(total.awaiting)
      return total
    }
  }
  app.decorate('backgroundJobs', jobs)

  let tasks: RepeatingTask[] = []
  app.addHook('onReady', async () => {
    tasks = [
      repeat(app.config.REAPER_INTERVAL_MS, jobs.reapExpiredKeys, backgroundJobLog(app.log, 'reaper')),
      repeat(app.config.REAPER_INTERVAL_MS, jobs.reapOldEvents, backgroundJobLog(app.log, 'event reaper')),
      repeat(app.config.REAPER_INTERVAL_MS, jobs.reapDashboardSessions, backgroundJobLog(app.log, 'dashboard session reaper')),
      repeat(app.config.RECOVERY_INTERVAL_MS, jobs.recoverPendingPayments, backgroundJobLog(app.log, 'recovery')),
      repeat(app.config.RECOVERY_INTERVAL_MS, jobs.recoverPendingRefunds, backgroundJobLog(app.log, 'refund recovery')),
      repeat(app.config.RECOVERY_INTERVAL_MS, jobs.recoverActions, backgroundJobLog(app.log, 'action recovery')),
      repeat(app.config.RECOVERY_INTERVAL_MS, jobs.recoverAuthorizations, backgroundJobLog(app.log, 'capture recovery')),
      repeat(app.config.RECOVERY_INTERVAL_MS, jobs.reconcileConnectorEvents, backgroundJobLog(app.log, 'connector events'))
    ]
  })

  app.addHook('preClose', async () => {
    shutdown.abort()
    await Promise.all(tasks.map(async (task) => { await task.stop() }))
  })
}, { name: 'workers', dependencies: ['config', 'database', 'clock', 'services', 'metrics'], fastify: '5.x' })
