import { DomainError } from './errors'

/**
 * An Adyen notification batch that is not authenticated: no such connector account, not an adyen
 * account, no hmacKey, or an item whose HMAC signature is missing or wrong. Nothing was recorded or
 * changed. One message for every cause (the log says which), so a caller learns nothing about accounts.
 */
export class AdyenNotificationUnverifiedError extends DomainError {
  readonly kind = 'unauthenticated'
  readonly code = 'ADYEN_NOTIFICATION_UNVERIFIED'
  constructor () {
    super('The notification could not be verified: unknown connector account, or an item whose HMAC signature is missing or does not match. ' +
      'Nothing was recorded.')
  }
}
