import type { PaymentGateway } from './types'

import type { ConnectorRef, ConnectorType } from '../domain/routing'
export type { ConnectorRef, ConnectorType } from '../domain/routing'

import type { Connector, ConnectorCredentials, ConnectorRegistry, ConnectorSettings } from './connector'
export { CredentialsRefusedError, type Connector, type ConnectorCredentials, type ConnectorSettings } from './connector'

/** A connector that a payment can be routed to. */
export interface RoutedConnector extends ConnectorRef {
  gateway: PaymentGateway
}

/** Where payments go: the routing of the payments service (issue: connector accounts, routing with safe failover). */
export interface ConnectorDirectory {
  /**
   * The merchant's enabled connector accounts in priority order (lowest first, then oldest); when it
   * has none, the instance default gateway (`id` null); an empty list when GATEWAY=none.
   */
  candidatesFor: (merchantId: string | null) => Promise<RoutedConnector[]>
  /** The gateway of the connector a payment was made through, even when that account is now disabled or deleted. */
  gatewayOf: (connector: ConnectorRef) => Promise<PaymentGateway>
}

/** Builds the connector for an account (`connectorId`; null for the instance default) of `type` with its credentials. */
export type ConnectorFactory = (type: ConnectorType, credentials: ConnectorCredentials, connectorId: string | null) => Connector

/** The factory of the registry's connectors with the instance's settings: a type it does not have is a bug of the caller (its accounts are checked on create). */
export function connectorFactory (settings: ConnectorSettings, registry: ConnectorRegistry): ConnectorFactory {
  return (type, credentials, connectorId) => {
    const module = registry.moduleOf(type)
    if (module === undefined) throw new Error(`no connector module of type ${type}: this instance has ${registry.types.join(', ')}`)
    return module.create(credentials, connectorId, settings)
  }
}
