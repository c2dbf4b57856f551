import type { ConnectorCredentials, ConnectorDirectory, ConnectorFactory, ConnectorType, RoutedConnector } from './connectors'
import type { PaymentGateway } from './types'

/** A connector account as routing needs it: decrypted credentials, and `updatedAt` to know when a built connector is stale. */
export interface RoutableAccount {
  id: string
  type: ConnectorType
  credentials: ConnectorCredentials
  updatedAt: string
}

/** Where the directory finds the merchants' connector accounts (the connector accounts service). */
export interface ConnectorAccountSource {
  /** The merchant's enabled accounts in routing order: priority (lowest first), then the oldest first. */
  enabledFor: (merchantId: string) => Promise<RoutableAccount[]>
  /** An account by id whatever its status (disabled and deleted accounts keep serving their payments). */
  byId: (id: string) => Promise<RoutableAccount | undefined>
}

export const NO_ACCOUNTS: ConnectorAccountSource = {
  enabledFor: async () => [],
  byId: async () => undefined
}

export interface DirectoryOptions {
  accounts: ConnectorAccountSource
  factory: ConnectorFactory
  /** The instance default (GATEWAY) for merchants without connector accounts: a gateway, or none (they are refused). */
  defaultConnector: { type: ConnectorType, gateway: PaymentGateway } | 'none'
  /** The default's gateway for payments made through it before GATEWAY became none. */
  legacyDefaultGateway: PaymentGateway
  /** Wraps every built gateway (time-out, metrics). */
  wrap: (gateway: PaymentGateway) => PaymentGateway
}

/** The unknown connector account of a payment: its record is missing (never expected; refused loudly). */
export class UnknownConnectorError extends Error {
  override name = 'UnknownConnectorError'
}

/**
 * Routing: a merchant's enabled connector accounts in priority order, else the instance default.
 * Built connectors are kept per account and rebuilt when the account changes (new credentials).
 */
export function connectorDirectory (options: DirectoryOptions): ConnectorDirectory {
  const built = new Map<string, { updatedAt: string, gateway: PaymentGateway }>()
  const gatewayFor = (account: RoutableAccount): PaymentGateway => {
    const cached = built.get(account.id)
    if (cached !== undefined && cached.updatedAt === account.updatedAt) return cached.gateway
    const gateway = options.wrap(options.factory(account.type, account.credentials, account.id).gateway)
    built.set(account.id, { updatedAt: account.updatedAt, gateway })
    return gateway
  }
  return {
    async candidatesFor (merchantId) {
      const accounts = merchantId === null ? [] : await options.accounts.enabledFor(merchantId)
      if (accounts.length > 0) return accounts.map((account): RoutedConnector => ({ id: account.id, type: account.type, gateway: gatewayFor(account) }))
      const fallback = options.defaultConnector
      return fallback === 'none' ? [] : [{ id: null, type: fallback.type, gateway: fallback.gateway }]
    },
    async gatewayOf (connector) {
      if (connector.id === null) return options.defaultConnector === 'none' ? options.legacyDefaultGateway : options.defaultConnector.gateway
      const account = await options.accounts.byId(connector.id)
      if (account === undefined) throw new UnknownConnectorError(`connector account ${connector.id} is not recorded`)
      return gatewayFor(account)
    }
  }
}

/** Every payment on one gateway (the instance default): core tests, and services built without routing. */
export function singleGatewayDirectory (gateway: PaymentGateway): ConnectorDirectory {
  return {
    candidatesFor: async () => [{ id: null, type: 'simulated', gateway }],
    gatewayOf: async () => gateway
  }
}
