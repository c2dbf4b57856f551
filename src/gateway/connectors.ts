import type { LedgerStore } from '../store/types'
import type { PaymentGateway } from './types'
import { simulatedGateway } from './simulated/gateway'

import type { ConnectorRef, ConnectorType } from '../domain/routing'
export { CONNECTOR_TYPES, type ConnectorRef, type ConnectorType } from '../domain/routing'

import type { Connector, ConnectorCredentials } from './connector'
export { CredentialsRefusedError, type Connector, type ConnectorCredentials } from './connector'

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

export interface ConnectorFactoryOptions {
  /** The simulated gateways' ledger (each connector account has its own namespace in it). */
  ledger: LedgerStore
  simulatedLatencyMs: number
  /** The simulated bank's page of a charge waiting for its shopper, per simulated account (null: the instance default); unset: derived from the return address. */
  simulatedBankUrl?: (page: { key: string, returnUrl: string, account: string | null }) => string
  /** Base URL of Stripe's API (STRIPE_API_URL); tests point it at a local server. */
  stripeApiUrl: string
  /** Base URL of Adyen's Checkout API for every Adyen account (ADYEN_CHECKOUT_URL); unset: each account's test or live endpoint. */
  adyenCheckoutUrl?: string
  /** Base URL of Adyen's Disputes API for every Adyen account (ADYEN_DISPUTES_URL); unset: each account's test or live endpoint. */
  adyenDisputesUrl?: string
  /** Bounds every PSP call (GATEWAY_TIMEOUT_MS). */
  timeoutMs: number
}

/** Builds the connector for an account (`connectorId`; null for the instance default) of `type` with its credentials. */
export type ConnectorFactory = (type: ConnectorType, credentials: ConnectorCredentials, connectorId: string | null) => Connector

/**
 * A ledger whose keys live under `namespace`: two simulated connector accounts are two PSPs, so a
 * payment failed over from one to the other under the same downstream key is a new charge there.
 */
export function namespacedLedger (ledger: LedgerStore, namespace: string): LedgerStore {
  const prefix = `${namespace}:`
  return {
    ...ledger,
    get: async (key) => await ledger.get(prefix + key),
    recordOnce: async (entry) => await ledger.recordOnce({ ...entry, idempotencyKey: prefix + entry.idempotencyKey })
  }
}

export function connectorFactory (options: ConnectorFactoryOptions): ConnectorFactory {
  return (type, credentials, connectorId) => {
    switch (type) {
      case 'simulated': {
        const ledger = connectorId === null ? options.ledger : namespacedLedger(options.ledger, connectorId)
        const bankUrl = options.simulatedBankUrl
        return {
          gateway: simulatedGateway(ledger, {
            latencyMs: options.simulatedLatencyMs,
            ...(bankUrl === undefined ? {} : { bankUrl: (page: { key: string, returnUrl: string }) => bankUrl({ ...page, account: connectorId }) })
          }),
          verify: async () => {}
        }
      }
      // The PSP SDKs are loaded when a connector of their type is first built: they cost start-up time
      // (the Adyen library's index about a second) that an instance without such accounts never needs.
      case 'stripe': {
        const { stripeConnector } = require('./stripe/connector') as typeof import('./stripe/connector')
        return stripeConnector(credentials, { apiUrl: options.stripeApiUrl, timeoutMs: options.timeoutMs })
      }
      case 'adyen': {
        const { adyenConnector } = require('./adyen/connector') as typeof import('./adyen/connector')
        return adyenConnector(credentials, {
          ...(options.adyenCheckoutUrl === undefined ? {} : { checkoutUrl: options.adyenCheckoutUrl }),
          ...(options.adyenDisputesUrl === undefined ? {} : { disputesUrl: options.adyenDisputesUrl }),
          timeoutMs: options.timeoutMs
        })
      }
    }
  }
}
