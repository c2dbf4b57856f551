import type { PaymentGateway } from './types'

/*
 * What a connector is: one PSP reached with one account's credentials. Each PSP's module
 * (stripe/, adyen/, simulated/) builds one; connectors.ts chooses which by type.
 */

/** A connector account's credentials as the merchant gave them (decrypted; never logged or returned). */
export type ConnectorCredentials = Readonly<Record<string, string>>

/** A PSP reached with one account's credentials. */
export interface Connector {
  gateway: PaymentGateway
  /**
   * One read-only, authenticated call to the PSP (Stripe: GET /v1/balance; Adyen: POST /paymentMethods): resolves when the
   * credentials work; CredentialsRefusedError when the PSP refuses them; GatewayError when it cannot be reached.
   */
  verify: () => Promise<void>
}

/** The PSP answered that the credentials are not valid (Stripe: 401 on GET /v1/balance). Never carries the credentials. */
export class CredentialsRefusedError extends Error {
  override name = 'CredentialsRefusedError'
  constructor (message: string, readonly code: string = 'credentials_refused') {
    super(message)
  }
}
