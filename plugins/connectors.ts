import fp from 'fastify-plugin'
import type { ConnectorDirectory, ConnectorFactory } from '../src/gateway/connectors'
import { connectorFactory } from '../src/gateway/connectors'
import { connectorDirectory } from '../src/gateway/directory'
import { STRIPE_DEFAULT_API_URL } from '../src/gateway/stripe'
import { withTimeout } from '../src/gateway/with-timeout'
import { connectorAccountService, connectorAccountSource, type ConnectorAccountService } from '../src/services/connectors'
import { instrumentGateway } from './metrics'

declare module 'fastify' {
  interface FastifyInstance {
    /** Routing: which connectors a merchant's payment goes to, and the gateway of a payment's connector. */
    connectors: ConnectorDirectory
    /** Builds a connector (PSP client) from an account's type and credentials. */
    connectorFactory: ConnectorFactory
    /** Merchants' connector accounts: create (credentials checked with the PSP, then sealed), list, read, change, delete. */
    connectorAccounts: ConnectorAccountService
  }
}

export interface ConnectorsPluginOptions {
  /** A factory to use instead of the real PSP clients (tests). */
  factory?: ConnectorFactory
}

/** The connector directory: merchants' connector accounts in priority order, the instance default gateway otherwise. */
export default fp<ConnectorsPluginOptions>(async (app, opts) => {
  if (new URL(app.config.STRIPE_API_URL).origin !== new URL(STRIPE_DEFAULT_API_URL).origin) {
    app.log.warn({ stripeApiUrl: app.config.STRIPE_API_URL }, 'STRIPE_API_URL is not Stripe\'s API: Stripe connectors talk to this server instead')
  }
  if (app.config.ADYEN_CHECKOUT_URL !== undefined) {
    app.log.warn({ adyenCheckoutUrl: app.config.ADYEN_CHECKOUT_URL }, 'ADYEN_CHECKOUT_URL is set: every Adyen connector talks to this server instead of its own test or live endpoint')
  }
  const factory = opts.factory ?? connectorFactory({
    ledger: app.db.ledger,
    simulatedLatencyMs: app.config.GATEWAY_SIM_LATENCY_MS,
    stripeApiUrl: app.config.STRIPE_API_URL,
    ...(app.config.ADYEN_CHECKOUT_URL === undefined ? {} : { adyenCheckoutUrl: app.config.ADYEN_CHECKOUT_URL }),
    timeoutMs: app.config.GATEWAY_TIMEOUT_MS
  })
  app.decorate('connectorFactory', factory)
  app.decorate('connectorAccounts', connectorAccountService({ db: app.db, factory, secrets: app.secretBox, clock: app.clock, log: app.log }))
  app.decorate('connectors', connectorDirectory({
    accounts: connectorAccountSource(app.db.connectors, app.secretBox),
    factory,
    defaultConnector: app.config.GATEWAY === 'none' ? 'none' : { type: 'simulated', gateway: app.gateway },
    legacyDefaultGateway: app.gateway,
    wrap: (gateway) => instrumentGateway(withTimeout(gateway, app.config.GATEWAY_TIMEOUT_MS), app.metrics)
  }))
}, { name: 'connectors', dependencies: ['config', 'clock', 'database', 'metrics', 'gateway', 'secrets'], fastify: '5.x' })
