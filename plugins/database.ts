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
    onBackgroundError: (err) => { app.log.warn({ err }, 'database connection error outside a request; the connection is replaced') }
  })
  app.decorate('db', db)
  app.addHook('onClose', async () => { await db.close() })
}, { name: 'database', dependencies: ['config'], fastify: '5.x' })
