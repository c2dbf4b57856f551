import Stripe from 'stripe'
import { GatewayError } from './types'

/**
 * Node's error codes of a connection that failed before a byte of the request left this process:
 * refused or unroutable (TCP), no address (DNS), certificate refused in the TLS handshake (the request is
 * only written once the handshake is done). Anything else from the socket (ECONNRESET, EPIPE, "socket
 * hang up", a body cut short) may come after Stripe received the request, so it is unknown.
 */
export const NEVER_SENT: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection_refused',
  EHOSTUNREACH: 'connection_refused',
  ENETUNREACH: 'connection_refused',
  ENOTFOUND: 'dns_failed',
  EAI_AGAIN: 'dns_failed',
  CERT_HAS_EXPIRED: 'tls_failed',
  CERT_NOT_YET_VALID: 'tls_failed',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'tls_failed',
  SELF_SIGNED_CERT_IN_CHAIN: 'tls_failed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'tls_failed',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'tls_failed',
  ERR_TLS_CERT_ALTNAME_INVALID: 'tls_failed'
}

/** The SDK's own timeout (req.setTimeout → destroy with this code); the OS's connect time-out has it too. */
const TIMEOUT_CODE = 'ETIMEDOUT'

function causeCode (error: Stripe.errors.StripeConnectionError): string | undefined {
  const detail: unknown = error.detail
  if (typeof detail !== 'object' || detail === null || !('code' in detail)) return undefined
  return typeof detail.code === 'string' ? detail.code : undefined
}

/**
 * What a failed Stripe call means for the money, as a GatewayError:
 * - not_processed (Stripe certainly did nothing, failover allowed): a connection never made (NEVER_SENT);
 *   401 authentication_failed, 403 permission_denied, 429 rate_limited, 400 idempotency_error;
 * - timeout: no answer within the time-out (the request may have been done);
 * - unavailable (unknown): a connection lost after the request was (or may have been) sent, any 5xx or
 *   other answer the SDK reports as an api_error (409 included).
 * Answers that are outcomes (card errors, invalid requests) are the callers' to map; they land here only
 * where an operation has no such outcome, and are then unknown too (never a guess towards failover).
 */
export function gatewayErrorOf (error: unknown): GatewayError {
  if (error instanceof GatewayError) return error
  if (error instanceof Stripe.errors.StripeConnectionError) {
    const code = causeCode(error)
    if (code === TIMEOUT_CODE) return new GatewayError('timeout', 'Stripe did not answer in time', 'timeout')
    const neverSent = code === undefined ? undefined : NEVER_SENT[code]
    if (neverSent !== undefined) return new GatewayError('not_processed', `Stripe could not be reached (${code ?? ''})`, neverSent)
    return new GatewayError('unavailable', `the connection to Stripe was lost${code === undefined ? '' : ` (${code})`}`, 'connection_lost')
  }
  if (error instanceof Stripe.errors.StripeAuthenticationError) return new GatewayError('not_processed', 'Stripe refused the credentials (401)', 'authentication_failed')
  if (error instanceof Stripe.errors.StripePermissionError) return new GatewayError('not_processed', 'Stripe refused the operation to these credentials (403)', 'permission_denied')
  if (error instanceof Stripe.errors.StripeRateLimitError) return new GatewayError('not_processed', 'Stripe rate-limited the request (429)', 'rate_limited')
  if (error instanceof Stripe.errors.StripeIdempotencyError) return new GatewayError('not_processed', 'Stripe refused the idempotency key (idempotency_error)', 'idempotency_error')
  if (error instanceof Stripe.errors.StripeError) {
    const status = error.statusCode === undefined ? '' : ` (${error.statusCode})`
    return new GatewayError('unavailable', `Stripe answered with an error${status}`, 'server_error')
  }
  return new GatewayError('unavailable', 'the Stripe call failed unexpectedly', 'client_error')
}
