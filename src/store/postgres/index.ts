import type { Database } from '../types'
import { productStore } from '../products'
import { connectorStore } from '../connectors'
import { connectorEventStore } from '../connector-events'
import { dashboardSessionStore } from '../dashboard-sessions'
import { signInFailureStore, userStore } from '../users'
import { auditLogStore } from '../audit-log'
import { ledgerStore } from '../ledger'
import { instanceStore } from '../instances'
import { guardDatabase } from '../guard'
import { postgresDisputeStore } from './disputes'
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
 * Time-outs of the heartbeat's connection: a new connection within 2 s, a beat within 1 s on the server
 * (statement_timeout) and 2 s on the client (a paused server): then the database counts as not answering.
 */
const HEARTBEAT_CONNECT_TIMEOUT_MS = 2_000
const HEARTBEAT_QUERY_TIMEOUT_MS = 1_000

/**
 * Opens a pool on `url` (postgres:// or postgresql://; libpq parameters such as
 * `?options=-c%20search_path%3Dtenant` pass through) and applies pending
 * migrations under an advisory lock before answering.
 */
export async function createPostgresDatabase (url: string, options: PostgresOptions): Promise<Database> {
  // Migrations run on their own connection without time-outs: DDL, and waiting for another instance's migration lock, may take long.
  const setup = openPool(url, { poolSize: 1, ...(options.onIdleError === undefined ? {} : { onIdleError: options.onIdleError }) })
  try {
    await migratePostgres(setup, postgresMigrations)
  } finally {
    await setup.end()
  }
  const pool = openPool(url, options)
  // Heartbeats on their own connection with short time-outs: a beat is never queued behind requests
  // waiting for the pool, and a paused server shows within about 2 s (see health.ts).
  const heartbeatPool = openPool(url, { poolSize: 1, queryTimeoutMs: HEARTBEAT_QUERY_TIMEOUT_MS, connectTimeoutMs: HEARTBEAT_CONNECT_TIMEOUT_MS, ...(options.onIdleError === undefined ? {} : { onIdleError: options.onIdleError }) })
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
    // Heartbeats on their own connection (see above): a saturated request pool never delays a beat.
    instances: instanceStore(postgresRunner(heartbeatPool)),
    connectors: connectorStore(postgresRunner(pool)),
    connectorEvents: connectorEventStore(postgresRunner(pool)),
    disputes: postgresDisputeStore(pool),
    dashboardSessions: dashboardSessionStore(postgresRunner(pool)),
    users: userStore(postgresRunner(pool)),
    signInFailures: signInFailureStore(postgresRunner(pool)),
    auditLog: auditLogStore(postgresRunner(pool)),
    async ping () {
      await pool.query('SELECT 1')
    },
    instrumentation: {
      pool: () => ({ max: options.poolSize, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount })
    },
    async close () {
      if (closed) return
      closed = true
      await Promise.all([pool.end(), heartbeatPool.end()])
    }
  }, options.settleMs === undefined ? {} : { settleMs: options.settleMs })
}
