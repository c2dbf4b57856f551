/** A PSP's connector type (`stripe`, `adyen`, `simulated`, or another module's): the registry of src/gateway lists them. */
export type ConnectorType = string

/**
 * Which connector a payment is made through: a connector account (`id`), or the instance's default
 * gateway (GATEWAY) for a merchant without connector accounts (`id` null).
 */
export interface ConnectorRef {
  id: string | null
  type: ConnectorType
}
