import type { FieldErrors } from '../../domain/errors'
import { isCredentialsObject, unknownMembers } from '../credentials'

/** An Adyen API key (Customer Area: Developers › API credentials): printable, no spaces. */
export const ADYEN_API_KEY = /^[\x21-\x7E]{16,255}$/
/** An Adyen merchant account name, e.g. YourCompanyECOM. */
export const ADYEN_MERCHANT_ACCOUNT = /^[A-Za-z0-9_.-]{1,255}$/
/** The HMAC key of an Adyen webhook (hex; Adyen generates 64 digits), which signs its notifications. */
export const ADYEN_HMAC_KEY = /^(?:[0-9A-Fa-f]{2}){16,64}$/
/** The prefix of an account's live endpoints (Customer Area: Developers › API URLs), e.g. 1797a841fbb37ca7-AdyenDemo. */
export const ADYEN_LIVE_URL_PREFIX = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,98}[A-Za-z0-9])?$/

export function adyenCredentialErrors (credentials: unknown): FieldErrors {
  if (!isCredentialsObject(credentials)) {
    return { credentials: ['An adyen connector needs credentials: { "apiKey": "AQE…", "merchantAccount": "YourCompanyECOM", "hmacKey": "…" } (and "liveUrlPrefix" for a live account).'] }
  }
  const errors = unknownMembers(credentials, ['apiKey', 'merchantAccount', 'hmacKey', 'liveUrlPrefix'],
    'Unknown member: adyen credentials are apiKey, merchantAccount, hmacKey and, for a live account, liveUrlPrefix.')
  const check = (member: string, pattern: RegExp, message: string, optional = false): void => {
    const value = credentials[member]
    if (optional && value === undefined) return
    if (typeof value !== 'string' || !pattern.test(value)) errors[`credentials.${member}`] = [message]
  }
  check('apiKey', ADYEN_API_KEY, 'The apiKey must be an Adyen API key: 16-255 printable characters without spaces.')
  check('merchantAccount', ADYEN_MERCHANT_ACCOUNT, 'The merchantAccount must be the Adyen merchant account name: letters, digits, _ . and -.')
  check('hmacKey', ADYEN_HMAC_KEY, 'The hmacKey must be the HMAC key of the Adyen webhook, in hex (32-128 digits; Adyen generates 64).')
  check('liveUrlPrefix', ADYEN_LIVE_URL_PREFIX, 'The liveUrlPrefix must be the prefix of the account\'s live endpoints (letters, digits and -), e.g. 1797a841fbb37ca7-AdyenDemo.', true)
  return errors
}
