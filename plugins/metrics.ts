import fp from 'fastify-plugin'
import Fastify, { LogController, type FastifyInstance, type onResponseHookHandler } from 'fastify'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { GatewayError, type PaymentGateway } from '../src/gateway/types'
import type { ClaimResult } from '../src/store/types'
// The decorations this plugin reads (app.config, app.db), typed even where those plugins are not compiled (bench).
import type {} from './config'
import type {} from './database'

export type IdempotencyOutcome = ClaimResult['kind']
/** `pending`: the gateway's answer is unknown (unavailable, timed out); the payment stays pending. */
export type SettlementOutcome = 'succeeded' | 'declined' | 'pending'
export type GatewayCallResult = 'succeeded' | 'requires_action' | 'authorized' | 'captured' | 'declined' | 'failed' | 'voided' | 'charged' | 'read' | 'received' |
  'accepted' | 'refused' | 'unavailable' | 'timeout' | 'aborted' | 'not_processed' | 'error'
export type GatewayOperation = 'charge' | 'refund' | 'void' | 'capture' | 'retrieve' | 'accept_dispute'
export type WebhookAttemptResult = 'succeeded' | 'retry' | 'failed'

export interface ServiceMetrics {
  /** This app's own registry (never prom-client's global one: tests build many apps in one process). */
  readonly registry: Registry
  /** METRICS_PORT is set: requests are timed, process metrics collected and the listener can start. */
  readonly enabled: boolean
  /** The metrics listener (`GET /metrics`), built when enabled; started by `listen`. */
  readonly server: FastifyInstance | undefined
  /** Starts the metrics listener on METRICS_HOST:METRICS_PORT; resolves with its address. */
  listen: () => Promise<string>
  idempotencyClaim: (outcome: IdempotencyOutcome) => void
  gatewayCall: (operation: GatewayOperation, result: GatewayCallResult, seconds: number) => void
  /** One webhook attempt: succeeded (2xx), retry (failed, another attempt scheduled), failed (no more attempts). */
  webhookAttempt: (result: WebhookAttemptResult) => void
  /** What an asynchronous connector (Adyen) accepted long ago and never reported on, by kind (the recovery worker's count). */
  connectorOutcomesAwaiting: (counts: Record<'capture' | 'refund' | 'void', number>) => void
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ServiceMetrics
  }
}

/** The route label of requests no route matched: one series, whatever the URL. */
export const UNMATCHED_ROUTE = 'unmatched'

const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]

/** Times every gateway call (charge, refund, void, capture, retrieve, acceptDispute) and counts its outcome; wraps the bounded (time-out) gateway so time-outs are seen. */
export function instrumentGateway (gateway: PaymentGateway, metrics: ServiceMetrics): PaymentGateway {
  async function timed<T extends { outcome: GatewayCallResult }> (operation: GatewayOperation, call: () => Promise<T>): Promise<T> {
    const started = performance.now()
    let result: GatewayCallResult = 'error'
    try {
      const outcome = await call()
      result = outcome.outcome
      return outcome
    } catch (err) {
      if (err instanceof GatewayError) result = err.kind
      throw err
    } finally {
      metrics.gatewayCall(operation, result, (performance.now() - started) / 1000)
    }
  }
  return {
    async charge (request, options) { return await timed('charge', async () => await gateway.charge(request, options)) },
    async refund (request) { return await timed('refund', async () => await gateway.refund(request)) },
    async void (request) { return await timed('void', async () => await gateway.void(request)) },
    async capture (request) { return await timed('capture', async () => await gateway.capture(request)) },
    async retrieve (request) {
      return await timed('retrieve', async () => ({ outcome: 'read' as const, state: await gateway.retrieve(request) })).then((read) => read.state)
    },
    ...(gateway.acceptDispute === undefined
      ? {}
      : { acceptDispute: async (request) => await timed('accept_dispute', async () => await (gateway.acceptDispute as Required<PaymentGateway>['acceptDispute'])(request)) })
  }
}

/**
 * The only work metrics add to every request: one histogram observation in onResponse, labelled by
 * method, route pattern (or "unmatched") and status, timed by Fastify's own reply.elapsedTime.
 * Exported for `npm run bench`, which measures it.
 */
export function requestTimer (registry: Registry): onResponseHookHandler {
  const requestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern (or "unmatched") and status code; _count is the request count.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [registry]
  })
  // A plain observe with a labels object: measured cheaper than caching prom-client's labelled children.
  return function timeRequest (request, reply, done) {
    requestDuration.observe({
      method: request.method,
      route: request.routeOptions.url ?? UNMATCHED_ROUTE,
      status_code: reply.statusCode
    }, reply.elapsedTime / 1000)
    done()
  }
}

/**
 * Prometheus metrics (prom-client) on a listener of their own: they are never
 * served on the API port, where they would reveal business volume to anyone.
 * Labels are bounded: route patterns (never raw URLs or ids), methods, status codes, outcomes.
 *
 * Webhook deliveries: attempts by result, and the age of the oldest due delivery
 * (how far behind the delivery workers are).
 */
export default fp(async (app) => {
  const config = app.config
  const enabled = config.METRICS_PORT !== undefined
  const registry = new Registry()
  const registers = [registry]

  const idempotencyClaims = new Counter({
    name: 'idempotency_requests_total',
    help: 'Requests with an Idempotency-Key by claim outcome: new, resumed (an earlier attempt stopped), replay, mismatch (same key, different body: 409), in_flight (409).',
    labelNames: ['outcome'] as const,
    registers
  })
  const settlements = new Counter({
    name: 'payment_settlements_total',
    help: 'Payment settlement attempts (requests and the recovery worker) by outcome: succeeded, declined, pending (the gateway\'s answer is unknown).',
    labelNames: ['outcome'] as const,
    registers
  })
  const gatewayDuration = new Histogram({
    name: 'gateway_request_duration_seconds',
    help: 'Payment gateway calls by operation (charge, refund, void) and result (succeeded, declined, failed, voided, charged, unavailable, timeout, aborted on shutdown, error).',
    labelNames: ['operation', 'result'] as const,
    buckets: SECONDS_BUCKETS,
    registers
  })
  const gatewayFailures = new Counter({
    name: 'gateway_failures_total',
    help: 'Payment gateway calls whose outcome is unknown, by kind: unavailable, timeout, aborted (shutdown), error (anything else thrown).',
    labelNames: ['operation', 'kind'] as const,
    registers
  })
  registry.registerMetric(new Gauge({
    name: 'payments_pending',
    help: 'Payments still pending (gateway answer unknown; the recovery worker settles them). NaN when the database did not answer.',
    registers: [],
    async collect () {
      try {
        this.set(await app.db.payments.countPending())
      } catch (err) {
        app.log.warn({ err }, 'metrics: could not count pending payments')
        this.set(Number.NaN)
      }
    }
  }))

  const webhookAttempts = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts by result: succeeded (2xx), retry (failed; another attempt is scheduled), failed (the delivery gave up: schedule exhausted, 410, or endpoint disabled).',
    labelNames: ['result'] as const,
    registers
  })
  registry.registerMetric(new Gauge({
    name: 'webhook_oldest_due_delivery_age_seconds',
    help: 'Seconds since the oldest due webhook delivery became due (0 when none is due): how far behind the delivery workers are. NaN when the database did not answer.',
    registers: [],
    async collect () {
      try {
        const now = Date.now()
        const oldest = await app.db.webhooks.oldestDueAt(now)
        this.set(oldest === undefined ? 0 : Math.max(0, now - oldest) / 1000)
      } catch (err) {
        app.log.warn({ err }, 'metrics: could not read the oldest due webhook delivery')
        this.set(Number.NaN)
      }
    }
  }))

  const awaitingNotification = new Gauge({
    name: 'connector_outcomes_awaiting_notification',
    help: 'Captures, refunds and voids that Adyen accepted over an hour ago without a notification yet, by kind (capture, refund, void), ' +
      'as the recovery worker last counted them: each needs a person (see the warning logged for it).',
    labelNames: ['kind'] as const,
    registers
  })

  const health = app.db.health
  if (health !== undefined) {
    registry.registerMetric(new Counter({
      name: 'database_unavailable_total',
      help: 'Database calls that failed because the database could not serve (answered 503 when a request made them), by reason: unreachable, timeout, busy, full, io.',
      labelNames: ['reason'] as const,
      registers: [],
      collect () {
        this.reset()
        for (const [reason, count] of Object.entries(health.failures)) this.inc({ reason }, count)
      }
    }))
    registry.registerMetric(new Gauge({
      name: 'database_available',
      help: '1 while the database answers (as readiness sees it, after DATABASE_SETTLE_MS of answers following a failure), 0 otherwise.',
      registers: [],
      collect () { this.set(health.state === 'ok' ? 1 : 0) }
    }))
  }

  const instrumentation = app.db.instrumentation
  const pool = instrumentation?.pool
  if (pool !== undefined) {
    registry.registerMetric(new Gauge({
      name: 'database_pool_connections',
      help: 'PostgreSQL pool connections by state: max (DATABASE_POOL_SIZE), open, idle, and requests waiting for one.',
      labelNames: ['state'] as const,
      registers: [],
      collect () {
        const stats = pool()
        this.set({ state: 'max' }, stats.max)
        this.set({ state: 'open' }, stats.total)
        this.set({ state: 'idle' }, stats.idle)
        this.set({ state: 'waiting' }, stats.waiting)
      }
    }))
  }

  let server: FastifyInstance | undefined
  if (enabled) {
    collectDefaultMetrics({ register: registry })

    if (instrumentation?.onWriteBatch !== undefined) {
      const batches = new Histogram({
        name: 'sqlite_group_commit_writes',
        help: 'Writes carried by each SQLite group commit (one transaction, one fsync).',
        buckets: BATCH_BUCKETS,
        registers
      })
      instrumentation.onWriteBatch((writes) => { batches.observe(writes) })
    }

    app.addHook('onResponse', requestTimer(registry))

    server = Fastify({ loggerInstance: app.log.child({ listener: 'metrics' }), logController: new LogController({ disableRequestLogging: true }) })
    server.get('/metrics', async (_request, reply) => {
      return await reply.type(registry.contentType).send(await registry.metrics())
    })
    const listener = server
    app.addHook('onClose', async () => { await listener.close() })
  }

  const metrics: ServiceMetrics = {
    registry,
    enabled,
    server,
    async listen () {
      if (server === undefined) throw new Error('metrics are disabled (METRICS_PORT is not set)')
      return await server.listen({ ...(config.METRICS_PORT === undefined ? {} : { port: config.METRICS_PORT }), host: config.METRICS_HOST })
    },
    idempotencyClaim (outcome) { idempotencyClaims.inc({ outcome }) },
    gatewayCall (operation, result, seconds) {
      gatewayDuration.observe({ operation, result }, seconds)
      const unknown = result === 'unavailable' || result === 'timeout' || result === 'aborted' || result === 'error'
      if (unknown) gatewayFailures.inc({ operation, kind: result })
      // Settlements count payments (charges); refunds and voids have their own operation label above.
      if (operation === 'charge') settlements.inc({ outcome: unknown ? 'pending' : result })
    },
    webhookAttempt (result) { webhookAttempts.inc({ result }) },
    connectorOutcomesAwaiting (counts) {
      for (const [kind, count] of Object.entries(counts)) awaitingNotification.set({ kind }, count)
    }
  }

  app.decorate('metrics', metrics)
}, { name: 'metrics', dependencies: ['config', 'database'], fastify: '5.x' })
