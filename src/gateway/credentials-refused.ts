/** The PSP answered that the credentials are not valid (Stripe: 401 on GET /v1/balance). Never carries the credentials. */
export class CredentialsRefusedError extends Error {
  override name = 'CredentialsRefusedError'
  constructor (message: string, readonly code: string = 'credentials_refused') {
    super(message)
  }
}
