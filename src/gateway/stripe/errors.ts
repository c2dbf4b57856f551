import Stripe from 'stripe'
import { callOf, NEVER_SENT, networkErrorCode } from '../call'
import { GatewayError } from '../types'

/** The SDK's own timeout (req.setTimeout → destroy with this code); the OS's connect time-out has it too. */
const TIMEOUT_CODE = 'ETIMEDOUT'

/**
 * What a failed Stripe call means for the money, as a GatewayError. A call made through inCall is judged by
 * every network attempt it made (callOf): when any of them may have reached Stripe, the outcome is unknown,
 * whatever a later attempt met.
 * - not_processed (Stripe certainly did nothing, failover allowed): a connection never made (NEVER_SENT) on
 *   every attempt; 401 authentication_failed, 403 permission_denied, 429 rate_limited, 400 idempotency_error;
 * - timeout: no answer within the time-out (the request may have been done);
 * - unavailable (unknown): a connection lost after the request was (or may have been) sent, any 5xx or
 *   other answer the SDK reports as an api_error (409 included).
 * Answers that are outcomes (card errors, invalid requests) are the callers' to map; they land here only
 * where an operation has no such outcome, and are then unknown too (never a guess towards failover).
 */
export function gatewayErrorOf (error: unknown): GatewayError {
  if (error instanceof GatewayError) return error
  const call = callOf(error)
  if (error instanceof Stripe.errors.StripeConnectionError) {
    const code = networkErrorCode(error.detail)
    if (call?.signal?.aborted === true) return new GatewayError('aborted', 'the Stripe call was abandoned (time-out or shutdown); its outcome is unknown', 'aborted')
    if (code === TIMEOUT_CODE) return new GatewayError('timeout', 'Stripe did not answer in time', 'timeout')
    const neverSent = code === undefined || call?.mayHaveReached() === true ? undefined : NEVER_SENT[code]
    if (neverSent !== undefined) return new GatewayError('not_processed', `Stripe could not be reached (${code ?? ''})`, neverSent)
    const first = call?.attempts.find((attempt) => attempt.reach !== 'never_sent')?.code ?? code
    return new GatewayError('unavailable', `the connection to Stripe was lost${first === undefined ? '' : ` (${first})`}`, 'connection_lost')
  }
  // An answer after an earlier attempt that may have reached Stripe says nothing about that one.
  if (call?.mayHaveReached() === true && call.attempts.length > 1) return new GatewayError('unavailable', 'a retry answered after an attempt that may have reached Stripe', 'connection_lost')
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
