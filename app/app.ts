import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from '../src/config'
import type { Database } from '../src/store/types'
import { serverOptions, type AreaErrors } from '../plugins/http/server-options'
import errorsPlugin from '../plugins/http/errors'
import notFoundPlugin from '../plugins/http/errors/not-found'
import { setAreaHandlers } from '../plugins/http/errors/area-handlers'
import serverLimitsPlugin from '../plugins/http/server-limits'
import requestBodyPlugin from '../plugins/http/request-body'
import requestHygienePlugin from '../plugins/http/request-hygiene'
import allowedMethodsPlugin from '../plugins/http/allowed-methods'
import configPlugin from '../plugins/config'
import requestIdPlugin from '../plugins/request-id'
import databasePlugin from '../plugins/database'
import readinessPlugin from '../plugins/readiness'
import securityPlugin from '../plugins/security'
import authPlugin from '../plugins/auth'
import apiVersionPlugin from '../plugins/api-version'
import redisPlugin from '../plugins/redis'
import credentialCachePlugin from '../plugins/credential-cache'
import productCachePlugin from '../plugins/product-cache'
import docsPlugin from '../plugins/docs'
import dashboardPlugin, { type DashboardOptions } from '../plugins/dashboard'
import schemasPlugin from '../plugins/schemas'
import servicesPlugin from '../plugins/services'
import healthRoutes from '../routes/health'
import rootRoutes from '../routes/root'
import productRoutes, { productNotFound, unroutableProductRequest } from '../routes/products'
import paymentRoutes from '../routes/payments'
import disputeRoutes from '../routes/disputes'
import auditLogRoutes from '../routes/audit'
import merchantRoutes from '../routes/merchants'
import connectorEventRoutes from '../routes/connectors'
import checkoutRoutes from '../routes/checkout'
import { CHECKOUT_PATH } from '../schemas/checkout'
import dashboardRoutes from '../routes/dashboard'
import { DASHBOARD_PATH } from '../schemas/dashboard'
import { CONNECTORS_PATH } from '../schemas/connector-events'
import { MERCHANTS_PATH } from '../schemas/merchants'
import clockPlugin, { type Clock } from '../plugins/clock'
import gatewayPlugin from '../plugins/gateway'
import idempotencyPlugin from '../plugins/idempotency'
import instancePlugin from '../plugins/instance'
import workersPlugin from '../plugins/workers'
import webhooksPlugin, { type WebhooksPluginOptions } from '../plugins/webhooks'
import secretsPlugin from '../plugins/secrets'
import metricsPlugin from '../plugins/metrics'
import type { PaymentGateway } from '../src/gateway/types'
import type { ConnectorFactory } from '../src/gateway/connectors'
import type { ConnectorModule } from '../src/gateway/connector'
import connectorsPlugin from '../plugins/connectors'

/** What tests (and embedders) may replace. */
export interface AppOverrides {
  logger?: FastifyServerOptions['logger']
  database?: Database
  gateway?: PaymentGateway
  /** Builds connector accounts' PSP clients (tests: a fake Stripe). */
  connectorFactory?: ConnectorFactory
  /** The connector modules (PSPs) instead of the built-in ones (src/gateway/registry.ts): a test adds a PSP of its own. */
  connectorModules?: readonly ConnectorModule[]
  clock?: Clock
  /** Webhook delivery test doubles (DNS answers, client). */
  webhooks?: WebhooksPluginOptions
  /** Where the dashboard's build is read from (tests: a fixture). */
  dashboard?: DashboardOptions
}

export type App = FastifyInstance

interface Area extends AreaErrors {
  routes: FastifyPluginAsyncTypebox
}

/**
 * The areas of the API: where each is mounted, its routes, and its error shape. This table is the one
 * source of the areas' error answers: it drives the registration below, which gives each area's scope
 * the error and not-found handlers of its shape (plugins/http/errors/area-handlers.ts), and the shape of
 * answers given outside any route (a request the router cannot route, that Node's parser refuses, or
 * that no route serves).
 */
export const areas: readonly Area[] = [
  { prefix: '/health', routes: healthRoutes, errorShape: 'envelope' },
  { prefix: '/products', routes: productRoutes, errorShape: 'envelope', unroutable: unroutableProductRequest, notFound: productNotFound },
  { prefix: '/api', routes: paymentRoutes, errorShape: 'problem' },
  { prefix: '/api/disputes', routes: disputeRoutes, errorShape: 'problem' },
  { prefix: '/api/audit-log', routes: auditLogRoutes, errorShape: 'problem' },
  { prefix: MERCHANTS_PATH, routes: merchantRoutes, errorShape: 'problem' },
  { prefix: CONNECTORS_PATH, routes: connectorEventRoutes, errorShape: 'problem' },
  { prefix: CHECKOUT_PATH, routes: checkoutRoutes, errorShape: 'problem' },
  { prefix: DASHBOARD_PATH, routes: dashboardRoutes, errorShape: 'problem' }
]

/** An area's routes in their own scope, behind the error and not-found handlers its row of the table names. */
function areaScope (area: Area): FastifyPluginAsyncTypebox {
  return async (scope, options) => {
    setAreaHandlers(scope, area)
    await area.routes(scope, options)
  }
}

/** Builds the whole service, ready but not listening. */
export async function buildApp (config: Config, overrides: AppOverrides = {}): Promise<App> {
  const app = Fastify(serverOptions(config, areas, overrides.logger)).withTypeProvider<TypeBoxTypeProvider>()

  // Plugins in the order their hooks run; each names the plugins it needs before it (fastify-plugin checks).
  await app.register(configPlugin, { config })
  await app.register(errorsPlugin)
  await app.register(serverLimitsPlugin)
  await app.register(requestBodyPlugin)
  // Before any route: it records every route, for 405 + Allow and OPTIONS.
  await app.register(allowedMethodsPlugin)
  await app.register(requestIdPlugin)
  await app.register(clockPlugin, overrides.clock === undefined ? {} : { clock: overrides.clock })
  await app.register(databasePlugin, overrides.database === undefined ? {} : { database: overrides.database })
  await app.register(readinessPlugin)
  await app.register(metricsPlugin)
  await app.register(gatewayPlugin, overrides.gateway === undefined ? {} : { gateway: overrides.gateway })
  await app.register(secretsPlugin)
  await app.register(redisPlugin)
  await app.register(connectorsPlugin, {
    ...(overrides.connectorFactory === undefined ? {} : { factory: overrides.connectorFactory }),
    ...(overrides.connectorModules === undefined ? {} : { modules: overrides.connectorModules })
  })
  await app.register(credentialCachePlugin)
  await app.register(productCachePlugin)
  await app.register(servicesPlugin)
  await app.register(instancePlugin)
  await app.register(idempotencyPlugin)
  await app.register(workersPlugin)
  await app.register(webhooksPlugin, overrides.webhooks ?? {})
  await app.register(authPlugin)
  await app.register(apiVersionPlugin)
  await app.register(securityPlugin)
  await app.register(requestHygienePlugin)
  await app.register(schemasPlugin)
  await app.register(docsPlugin)
  await app.register(dashboardPlugin, overrides.dashboard ?? {})
  await app.register(notFoundPlugin, { areas })

  await app.register(rootRoutes)
  for (const area of areas) await app.register(areaScope(area), { prefix: area.prefix })

  await app.ready()
  return app
}
