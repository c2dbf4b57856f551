import type { LedgerStore } from '../../store/types'
import type { ConnectorModule } from '../connector'
import { isCredentialsObject } from '../credentials'
import { simulatedGateway } from './gateway'

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

/** The built-in test gateway: deterministic outcomes by amount, recorded in the service's own ledger; no credentials. */
export const simulatedModule: ConnectorModule = {
  type: 'simulated',
  capabilities: { customerPresent: true, paymentMethodObject: false, needsPaymentMethod: false },
  credentialMembers: {},
  credentialErrors (credentials) {
    const empty = credentials === undefined || (isCredentialsObject(credentials) && Object.keys(credentials).length === 0)
    return empty ? {} : { credentials: ['A simulated connector takes no credentials: leave credentials out or send {}.'] }
  },
  credentialsHint: () => null,
  create (_credentials, connectorId, settings) {
    const ledger = connectorId === null ? settings.ledger : namespacedLedger(settings.ledger, connectorId)
    const bankUrl = settings.simulatedBankUrl
    return {
      gateway: simulatedGateway(ledger, {
        latencyMs: settings.config.GATEWAY_SIM_LATENCY_MS,
        ...(bankUrl === undefined ? {} : { bankUrl: (page: { key: string, returnUrl: string }) => bankUrl({ ...page, account: connectorId }) })
      }),
      verify: async () => {}
    }
  }
}
