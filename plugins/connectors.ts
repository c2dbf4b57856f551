import fp from 'fastify-plugin'
import type { ConnectorDirectory, ConnectorFactory } from '../src/gateway/connectors'
import { connectorFactory } from '../src/gateway/connectors'
import type { ConnectorModule } from '../src/gateway/connector'
import { BUILT_IN_CONNECTORS, connectorRegistry, type ConnectorRegistry } from '../src/gateway/registry'
import { connectorDirectory } from '../src/gateway/directory'
import { withTimeout } from '../src/gateway/with-timeout'
import { cachedAccountSource, connectorAccountService, connectorAccountSource, type ConnectorAccountService } from '../src/services/connectors'
import { readCache } from '../src/services/read-cache'
import type { RoutableAccount } from '../src/gateway/directory'
import { instrumentGateway } from './metrics'
import { simulatedBankAddress } from '../schemas/checkout'
import { isServiceProblem } from './http/errors/problem'

declare module 'fastify' {
  interface FastifyInstance {
    /** Routing: which connectors a merchant's payment goes to, and the gateway of a payment's connector. */
    connectors: ConnectorDirectory
    /** The connector modules (PSPs) this instance has: types, capabilities, credential checks. */
    connectorRegistry: ConnectorRegistry
    /** Builds a connector (PSP client) from an account's type and credentials. */
    connectorFactory: ConnectorFactory
    /** Merchants' connector accounts: create (credentials checked with the PSP, then sealed), list, read, change, delete. */
    connectorAccounts: ConnectorAccountService
  }
}

export interface ConnectorsPluginOptions {
  /** A factory to use instead of the real PSP clients (tests). */
  factory?: ConnectorFactory
  /** The connector modules instead of the built-in ones (tests add a PSP of their own). */
  modules?: readonly ConnectorModule[]
}

/**
 * What the registry cannot check alone: a module's URL settings were read with the configuration (loadConfig was given
 * the same modules), and its problem types are not the service's own (they would change how the service's errors read).
 */
function checkModulesAgainstService (registry: ConnectorRegistry, urlNamesRead: readonly string[]): void {
  for (const module of registry.modules) {
    for (const { name } of module.urlSettings ?? []) {
      if (!urlNamesRead.includes(name)) throw new Error(`the ${module.type} connector module's setting ${name} was not read: give loadConfig the modules given to buildApp`)
    }
  }
  for (const own of registry.problemTypes.values()) {
    if (isServiceProblem(own)) throw new Error(`the problem type ${own.code} (${own.type}) of a connector module is one of the service's own`)
  }
}

/** Merchants whose routing accounts an instance keeps at most (least recently used forgotten first). */
const ROUTING_CACHE_MAX_MERCHANTS = 10_000

/**
 * The connector directory: merchants' connector accounts in priority order, the instance default gateway otherwise.
 * Each instance keeps a merchant's enabled accounts for CONNECTOR_CACHE_TTL_MS; a write through the connector
 * accounts API forgets them before it is answered, on the other instances through Redis (as the product cache).
 */
export default fp<ConnectorsPluginOptions>(async (app, opts) => {
  const publicBaseUrl = app.config.PUBLIC_BASE_URL
  const registry = connectorRegistry(opts.modules ?? BUILT_IN_CONNECTORS)
  checkModulesAgainstService(registry, app.config.connectorUrlNames)
  app.decorate('connectorRegistry', registry)
  for (const module of registry.modules) {
    for (const note of module.settingsNotes?.(app.config) ?? []) app.log.warn(note.details, note.message)
  }
  const factory = opts.factory ?? connectorFactory({
    ledger: app.db.ledger,
    ...(publicBaseUrl === undefined ? {} : { simulatedBankUrl: (page: { key: string, returnUrl: string, account: string | null }) => simulatedBankAddress(publicBaseUrl, page) }),
    config: app.config
  }, registry)
  app.decorate('connectorFactory', factory)
  const routing = readCache<RoutableAccount[]>({ ttlMs: app.config.CONNECTOR_CACHE_TTL_MS, maxEntries: ROUTING_CACHE_MAX_MERCHANTS })
  // Where instances announce connector account writes (a message: the merchant whose routing to forget).
  const announce = routing.enabled
    ? await app.invalidationChannel('connector-invalidations', { onMessage: (merchantId) => { routing.forget(merchantId) }, onMissed: () => { routing.clear() } })
    : async () => {}
  const onChange = async (merchantId: string): Promise<void> => {
    routing.forget(merchantId)
    await announce(merchantId)
  }
  app.decorate('connectorAccounts', connectorAccountService({ db: app.db, factory, registry, secrets: app.secretBox, clock: app.clock, log: app.log, onChange }))
  app.decorate('connectors', connectorDirectory({
    accounts: cachedAccountSource(connectorAccountSource(app.db.connectors, app.secretBox), routing, app.clock),
    factory,
    defaultConnector: app.config.GATEWAY === 'none' ? 'none' : { type: 'simulated', gateway: app.gateway },
    legacyDefaultGateway: app.gateway,
    wrap: (gateway) => instrumentGateway(withTimeout(gateway, app.config.GATEWAY_TIMEOUT_MS), app.metrics)
  }))
}, { name: 'connectors', dependencies: ['config', 'clock', 'database', 'metrics', 'gateway', 'secrets', 'redis'], fastify: '5.x' })
