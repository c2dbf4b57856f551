import fp from 'fastify-plugin'
import { backgroundJobLog } from './job-log'
import { parseRetryDelays } from '../src/domain/webhooks'
import { webhookService, type WebhookService } from '../src/services/webhooks'
import { sealStoredSecrets } from '../src/services/webhook-secrets'
import { webhookClient, type WebhookClient } from '../src/webhooks/client'
import type { Lookup } from '../src/webhooks/addresses'
import { renderEventData } from '../schemas/events'

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookService
  }
}

export interface WebhooksPluginOptions {
  /** Tests: a resolver for the registration-time SSRF check (DNS answers of their choosing). */
  lookup?: Lookup
  /** Tests: a delivery client of their own. */
  client?: WebhookClient
}

/**
 * Webhook endpoints and the delivery worker. Every instance runs the worker: each
 * pass claims due deliveries (the store makes a claim exclusive: SKIP LOCKED on
 * PostgreSQL, the single writer on SQLite), sends them at once through undici and
 * records each outcome. A pass that found work starts the next one at once.
 */
export default fp<WebhooksPluginOptions>(async (app, options) => {
  const config = app.config
  const client = options.client ?? webhookClient({ timeoutMs: config.WEBHOOK_TIMEOUT_MS, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS })
  const service = webhookService({
    db: app.db,
    clock: app.clock,
    log: app.log,
    client,
    events: app.eventFactory,
    renderData: renderEventData,
    retryDelays: parseRetryDelays(config.WEBHOOK_RETRY_DELAYS) ?? [],
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS,
    secrets: app.secretBox,
    ...(options.lookup === undefined ? {} : { lookup: options.lookup })
  })
  app.decorate('webhooks', service)
  // Endpoint secrets stored in clear (before encryption at rest) are sealed on start; reads accept both meanwhile.
  try {
    const sealed = await sealStoredSecrets(app.db.webhooks, app.secretBox, 'plain')
    if (sealed > 0) app.log.info({ endpoints: sealed }, 'webhook endpoint secrets stored in clear were encrypted')
  } catch (err) {
    app.log.error({ err }, 'could not encrypt the webhook endpoint secrets stored in clear; they are read as they are, and encrypted on the next start')
  }

  let stopped = false
  // Aborted on close: attempts in flight are abandoned (their lease runs out; they are made again).
  const shutdown = new AbortController()
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  const report = backgroundJobLog(app.log, 'webhooks')
  const pass = async (): Promise<void> => {
    let busy = false
    try {
      const result = await service.deliverDue(config.WEBHOOK_CONCURRENCY, shutdown.signal)
      for (const { result: outcome } of result.results) app.metrics.webhookAttempt(outcome)
      busy = result.attempted === config.WEBHOOK_CONCURRENCY
      report.succeeded()
    } catch (err) {
      report.failed(err)
    }
    if (!stopped) schedule(busy ? 0 : config.WEBHOOK_POLL_INTERVAL_MS)
  }
  const schedule = (delay: number): void => {
    timer = setTimeout(() => { running = pass() }, delay)
    timer.unref()
  }
  app.addHook('onReady', async () => {
    if (config.WEBHOOK_POLL_INTERVAL_MS > 0) schedule(config.WEBHOOK_POLL_INTERVAL_MS)
  })
  app.addHook('preClose', async () => {
    stopped = true
    clearTimeout(timer)
    shutdown.abort()
    await running
  })
  app.addHook('onClose', async () => { await client.close() })
}, { name: 'webhooks', dependencies: ['config', 'database', 'clock', 'services', 'metrics', 'secrets'], fastify: '5.x' })
