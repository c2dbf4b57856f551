import type { FieldErrors } from '../../domain/errors'
import { isCredentialsObject, unknownMembers } from '../credentials'

/** Stripe secret and restricted keys, test or live. */
export const STRIPE_SECRET_KEY = /^(sk|rk)_(test|live)_[0-9A-Za-z]{8,247}$/
/** A Stripe webhook endpoint's signing secret (for the Stripe events route). */
export const STRIPE_WEBHOOK_SECRET = /^whsec_[0-9A-Za-z]{8,}$/

export function stripeCredentialErrors (credentials: unknown): FieldErrors {
  if (!isCredentialsObject(credentials)) return { credentials: ['A stripe connector needs credentials: { "secretKey": "sk_test_…" } (a secret or restricted key).'] }
  const errors = unknownMembers(credentials, ['secretKey', 'webhookSecret'], 'Unknown member: stripe credentials are secretKey and, optionally, webhookSecret.')
  if (typeof credentials.secretKey !== 'string' || !STRIPE_SECRET_KEY.test(credentials.secretKey)) {
    errors['credentials.secretKey'] = ['The secretKey must be a Stripe secret or restricted key: sk_test_…, sk_live_…, rk_test_… or rk_live_… followed by 8-247 letters and digits.']
  }
  if (credentials.webhookSecret !== undefined && (typeof credentials.webhookSecret !== 'string' || !STRIPE_WEBHOOK_SECRET.test(credentials.webhookSecret))) {
    errors['credentials.webhookSecret'] = ['The webhookSecret must be a Stripe webhook signing secret: whsec_ followed by at least 8 letters and digits.']
  }
  return errors
}
