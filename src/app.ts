import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { trustProxySetting, type Config } from './config'
import type { Database } from './store/types'
import { envelopeErrorHandler, envelopeNotFound } from '../plugins/http/envelope'
import { areaOf, frameworkErrorHandler, type AreaErrors } from '../plugins/http/framework-errors'
import { problemNotFound } from '../plugins/http/problem'
import { clientErrorHandler } from '../plugins/http/client-error'
import { AccessLogController } from '../plugins/http/access-log'
import { closeIdleBeforeFirstRequest, httpServerOptions, MAX_PARAM_LENGTH } from '../plugins/http/server-limits'
import { rejectUnsafeBody } from '../plugins/http/body-guard'
import { throwNotedFieldErrors } from '../plugins/http/field-errors'
import { rejectUnacceptableRequest } from '../plugins/http/request-hygiene'
import { utf8JsonParser } from '../plugins/http/json-body'
import { lingerAfterRefusedBody } from '../plugins/http/lingering-close'
import allowedMethodsPlugin, { answerUnservedMethod } from '../plugins/http/allowed-methods'
import configPlugin from '../plugins/config'
import requestIdPlugin, { requestIdFor } from '../plugins/request-id'
import databasePlugin from '../plugins/database'
import readinessPlugin from '../plugins/readiness'
import securityPlugin from '../plugins/security'
import authPlugin from '../plugins/auth'
import redisPlugin from '../plugins/redis'
import credentialCachePlugin from '../plugins/credential-cache'
import docsPlugin from '../plugins/docs'
import schemasPlugin from '../plugins/schemas'
import servicesPlugin from '../plugins/services'
import healthRoutes from '../routes/health'
import rootRoutes from '../routes/root'
import productRoutes, { unroutableProductRequest } from '../routes/products'
import paymentRoutes from '../routes/payments'
import { renderRefund, renderSettled, toPublicPayment, toPublicRefund } from '../routes/payments/responses'
import { toMerchantResource } from './domain/merchants'
import merchantRoutes from '../routes/merchants'
import { MERCHANTS_PATH, renderMerchantCreated } from '../routes/merchants/responses'
import clockPlugin, { type Clock } from '../plugins/clock'
import gatewayPlugin from '../plugins/gateway'
import idempotencyPlugin from '../plugins/idempotency'
import instancePlugin from '../plugins/instance'
import workersPlugin from '../plugins/workers'
import webhooksPlugin, { type WebhooksPluginOptions } from '../plugins/webhooks'
import metricsPlugin from '../plugins/metrics'
import { lazySchemaCompilers } from '../plugins/http/lazy-schemas'
import type { PaymentGateway } from './gateway/types'

/** What tests (and embedders) may replace. */
export interface AppOverrides {
  logger?: FastifyServerOptions['logger']
  database?: Database
  gateway?: PaymentGateway
  clock?: Clock
  /** Webhook delivery test doubles (DNS answers, client). */
  webhooks?: WebhooksPluginOptions
}

export type App = FastifyInstance

interface Area extends AreaErrors {
  routes: FastifyPluginAsyncTypebox
}

/**
 * The areas of the API: where each is mounted, its routes, and its error shape. This table drives
 * both the registration below and the framework-level errors (requests the router cannot route).
 */
export const areas: readonly Area[] = [
  { prefix: '/health', routes: healthRoutes, errorShape: 'envelope' },
  { prefix: '/products', routes: productRoutes, errorShape: 'envelope', unroutable: unroutableProductRequest },
  { prefix: '/api', routes: paymentRoutes, errorShape: 'problem' },
  { prefix: MERCHANTS_PATH, routes: merchantRoutes, errorShape: 'problem' }
]

/** Credentials never reach the logs, whatever logs a request's headers. */
export const REDACTED_LOG_PATHS = ['req.headers.authorization', 'headers.authorization', 'request.headers.authorization', 'authorization']

function withRedaction (logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (typeof logger !== 'object' || logger === null) return logger
  return { ...logger, redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' } }
}

/** Builds the whole service, ready but not listening. */
export async function buildApp (config: Config, overrides: AppOverrides = {}): Promise<App> {
  const app = Fastify({
    logger: withRedaction(overrides.logger ?? { level: config.LOG_LEVEL }),
    genReqId: requestIdFor,
    requestIdHeader: false,
    logController: new AccessLogController({ requestIdLogLabel: 'requestId' }),
    bodyLimit: config.BODY_LIMIT,
    trustProxy: trustProxySetting(config.TRUST_PROXY),
    // Never Node's socket inactivity time-out: it would cut long requests unanswered (closeIdleBeforeFirstRequest).
    connectionTimeout: 0,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    // Slow clients, oversized headers, unroutable URLs: answered in the envelope, never in Fastify's own JSON.
    http: httpServerOptions(config),
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler(areas),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // allErrors: every failing field at once (bodies are bounded by BODY_LIMIT, strings and arrays by the schemas).
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true } },
    // Schemas compiled on first use, not at start-up (plugins/http/lazy-schemas.ts).
    schemaController: { compilersFactory: lazySchemaCompilers() }
  }).withTypeProvider<TypeBoxTypeProvider>()
  closeIdleBeforeFirstRequest(app.server, config.CONNECTION_TIMEOUT_MS)

  // Only JSON bodies are accepted anywhere; areas add their own media types.
  app.removeContentTypeParser('text/plain')
  // JSON bodies must be UTF-8: invalid bytes are a 400, not U+FFFD in the database.
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, utf8JsonParser(app))
  app.setErrorHandler(envelopeErrorHandler)
  // Bodies nested too deeply or with unstorable text (NUL, unpaired surrogates) are a 400 in every area.
  app.addHook('preValidation', rejectUnsafeBody)
  // Domain errors a route noted before its schema ran: the schema passed, so they are the answer (plugins/http/field-errors.ts).
  app.addHook('preHandler', throwNotedFieldErrors)

  // A refused body (413, or an error answered before the body arrived): answer, then read and discard the rest for a while before closing.
  app.addHook('onSend', lingerAfterRefusedBody)

  // During shutdown, requests already in flight are answered with `Connection: close`:
  // server.close() only drops connections idle at that moment, so a keep-alive socket that
  // was busy would otherwise hold app.close() open until the client or keepAliveTimeout drops it.
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })

  await app.register(configPlugin, { config })
  // Before any route: it records every route, for 405 + Allow and OPTIONS.
  await app.register(allowedMethodsPlugin)
  await app.register(requestIdPlugin)
  await app.register(clockPlugin, { clock: overrides.clock })
  await app.register(databasePlugin, { database: overrides.database })
  await app.register(readinessPlugin)
  await app.register(metricsPlugin)
  await app.register(gatewayPlugin, { gateway: overrides.gateway })
  await app.register(redisPlugin)
  await app.register(credentialCachePlugin)
  await app.register(servicesPlugin, {
    renderSettledPayment: renderSettled,
    renderRefund,
    renderMerchantCreated,
    eventRenderers: { payment: toPublicPayment, refund: toPublicRefund, merchant: toMerchantResource }
  })
  await app.register(instancePlugin)
  await app.register(idempotencyPlugin)
  await app.register(workersPlugin)
  await app.register(webhooksPlugin, overrides.webhooks ?? {})
  await app.register(authPlugin)
  await app.register(securityPlugin)
  // Two Host headers, an encoded body, a charset other than UTF-8: refused before the body is read
  // (after the request id and the security headers are set, so the refusal carries them).
  app.addHook('onRequest', rejectUnacceptableRequest)
  await app.register(schemasPlugin)
  await app.register(docsPlugin)
  // Unknown routes count against the rate limit too (route guessing is throttled).
  // Requests sent here from a route outside their area (@fastify/cors's `OPTIONS *`) still get their area's 404.
  const notFound = envelopeNotFound('route not found')
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, (request, reply) =>
    answerUnservedMethod(request, reply, envelopeErrorHandler) ??
      (areaOf(areas, request.url.split('?')[0])?.errorShape === 'problem' ? problemNotFound(request, reply) : notFound(request, reply)))

  await app.register(rootRoutes)
  for (const area of areas) await app.register(area.routes, { prefix: area.prefix })

  await app.ready()
  return app
}
