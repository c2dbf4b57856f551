import fp from 'fastify-plugin'
import { openDatabase } from '../src/store'
import type { Database } from '../src/store/types'

declare module 'fastify' {
  interface FastifyInstance {
    db: Database
  }
}

export interface DatabasePluginOptions {
  /** A ready database to use instead of opening one from DATABASE_URL (tests). */
  database?: Database
}

export default fp<DatabasePluginOptions>(async (app, opts) => {
  const db = opts.database ?? await openDatabase(app.config, {
    // An idle connection the server dropped (a restart drops every one): replaced by itself. The outage, if it is
    // one, is logged once when calls or the heartbeat find it (below).
    onBackgroundError: (err) => { app.log.debug({ err }, 'database connection error outside a request; the connection is replaced') }
  })
  app.decorate('db', db)
  // One line per change of the database's state; each failed call in between is counted (metrics), not logged.
  db.health?.onChange((change) => {
    if (change.state === 'ok') {
      app.log.info({ previous: change.previous, downMs: change.downMs, failedCalls: change.failures }, 'database available again')
    } else {
      const cause = (change.error as { cause?: unknown } | undefined)?.cause ?? change.error
      app.log.warn({ reason: change.state, err: cause }, 'database unavailable: answering 503 with Retry-After until it is back')
    }
  })
  app.addHook('onClose', async () => { await db.close() })
}, { name: 'database', dependencies: ['config'], fastify: '5.x' })
