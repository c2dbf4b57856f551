import fp from 'fastify-plugin'
import { newId } from '../src/domain/ids'

export interface InstanceIdentity {
  /** This process's id: the holder named on the idempotency locks it takes. */
  readonly id: string
  /**
   * Locks whose holder last beat before this time may be taken over; undefined while this
   * instance cannot judge (it has not itself beaten without a gap for INSTANCE_DEAD_AFTER_MS:
   * just started, or the database was away and every instance's beats stopped alike).
   */
  takeoverBefore: () => number | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    instance: InstanceIdentity
  }
}

/** Beats this often while the database is away: the beat is the probe that finds it back. */
const AWAY_BEAT_MS = 250
/** Rows of instances silent for this long are deleted (each clean shutdown sweeps them). */
const FORGET_AFTER_MS = 24 * 3600 * 1000

/**
 * Instance identity and heartbeat: each process gets an id and writes its heartbeat to the
 * database every INSTANCE_HEARTBEAT_MS (a row in `instances`). A lock whose holder has been silent
 * for INSTANCE_DEAD_AFTER_MS belongs to a stopped process (crashed, SIGKILLed, cut off), and another
 * instance may resume its key; a live holder keeps beating and its locks are never taken.
 */
export default fp(async (app) => {
  const { INSTANCE_HEARTBEAT_MS: intervalMs, INSTANCE_DEAD_AFTER_MS: deadAfterMs } = app.config
  const id = newId()
  const startedAt = app.clock()
  /** Start of the current run of successful beats; undefined after a failed one. */
  let beatingSince: number | undefined = startedAt
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  let beating: Promise<void> = Promise.resolve()

  async function beat (): Promise<void> {
    lastBeat = Date.now()
    try {
      await app.db.instances.beat(id, startedAt, app.clock())
      beatingSince ??= app.clock()
    } catch {
      // The database plugin logs the outage once (its health changed); the next beats probe it.
      beatingSince = undefined
    }
  }
  let lastBeat = 0
  /** Ticks every AWAY_BEAT_MS at most; beats when one is due, and at every tick while the database is away. */
  function schedule (): void {
    if (stopped) return
    timer = setTimeout(() => {
      const due = app.db.health?.away === true || Date.now() - lastBeat >= intervalMs
      beating = (due ? beat() : Promise.resolve()).finally(schedule)
    }, Math.min(AWAY_BEAT_MS, intervalMs))
    timer.unref()
  }

  app.decorate('instance', {
    id,
    takeoverBefore () {
      const now = app.clock()
      return beatingSince !== undefined && now - beatingSince >= deadAfterMs ? now - deadAfterMs : undefined
    }
  })
  // The row exists before the first request can name this instance on a lock.
  await beat()
  app.addHook('onReady', async () => { schedule() })
  app.addHook('onClose', async () => {
    stopped = true
    clearTimeout(timer)
    await beating
    // Requests have drained: nothing of ours is locked any more. Gone at once, and a sweep of long-silent rows.
    try {
      await app.db.instances.remove(id, app.clock() - FORGET_AFTER_MS)
    } catch (err) {
      app.log.warn({ err }, 'could not remove this instance\'s heartbeat row; it expires by itself')
    }
  })
  app.log.info({ instanceId: id }, 'instance identity')
}, { name: 'instance', dependencies: ['config', 'database', 'clock'], fastify: '5.x' })
