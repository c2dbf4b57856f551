/** The PSPs a connector account can speak to. */
export const CONNECTOR_TYPES = ['simulated', 'stripe', 'adyen'] as const
export type ConnectorType = typeof CONNECTOR_TYPES[number]

/**
 * Which connector a payment is made through: a connector account (`id`), or the instance's default
 * gateway (GATEWAY) for a merchant without connector accounts (`id` null).
 */
export interface ConnectorRef {
  id: string | null
  type: ConnectorType
}
