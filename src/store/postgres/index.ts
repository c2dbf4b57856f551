import type { Database } from '../types'
import { productStore } from '../products'
import { ledgerStore } from '../ledger'
import { guardDatabase } from '../guard'
import { migratePostgres, openPool, type PostgresOptions } from './connection'
import { postgresMigrations } from './migrations'
import { postgresMerchantStore } from './merchants'
import { postgresPaymentStore } from './payments'
import { postgresRefundStore } from './refunds'
import { postgresCaptureStore } from './captures'
import { postgresIdempotencyStore } from './idempotency'
import { postgresApiKeyStore } from './api-keys'
import { postgresRunner } from './runner'
import { postgresEventStore, postgresWebhookStore } from './events'

export type { PostgresOptions } from './connection'

/**
 * Opens a pool on `url` (postgres:// or postgresql://; libpq parameters such as
 * `?options=-c%20search_path%3Dtenant` pass through) and applies pending
 * migrations under an advisory lock before answering.
 */
export async function createPostgresDatabase (url: string, options: PostgresOptions): Promise<Database> {
  // Migrations run on their own connection without time-outs: DDL, and waiting for another instance's migration lock, may take long.
  const setup = openPool(url, { poolSize: 1, onIdleError: options.onIdleError })
  try {
    await migratePostgres(setup, postgresMigrations)
  } finally {
    await setup.end()
  }
  const pool = openPool(url, options)
  let closed = false
  return guardDatabase({
    kind: 'postgres',
    products: productStore(postgresRunner(pool)),
    merchants: postgresMerchantStore(pool),
    payments: postgresPaymentStore(pool),
    refunds: postgresRefundStore(pool),
    captures: postgresCaptureStore(pool),
    idempotency: postgresIdempotencyStore(pool),
    ledger: ledgerStore(postgresRunner(pool)),
    apiKeys: postgresApiKeyStore(pool),
    events: postgresEventStore(pool),
    webhooks: postgresWebhookStore(pool),
    async ping () {
      await pool.query('SELECT 1')
    },
    instrumentation: {
      pool: () => ({ max: options.poolSize, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount })
    },
    async close () {
      if (closed) return
      closed = true
      await pool.end()
    }
  })
}
