import { HttpClientException } from '@adyen/api-library'
import { AdyenConnectionError } from './transport'
import { callOf, NEVER_SENT } from '../call'
import { GatewayError } from '../types'

/** Adyen's answer (422) to a request whose Idempotency-Key is still being processed: the first one's outcome is unknown. */
export const REQUEST_IN_PROGRESS = '704'

/** Adyen's error answer (4xx with its error object), undefined for anything else. */
export function validationAnswer (error: unknown): { status: number, errorCode: string } | undefined {
  if (!(error instanceof HttpClientException)) return undefined
  if (error.statusCode !== 400 && error.statusCode !== 422) return undefined
  if (error.errorCode === REQUEST_IN_PROGRESS) return undefined
  return { status: error.statusCode, errorCode: error.errorCode ?? 'invalid_request' }
}

/**
 * What a failed Adyen call means for the money, as a GatewayError:
 * - not_processed (Adyen certainly did nothing, failover allowed): a connection never made (refused,
 *   unroutable, DNS, TLS); 401 (API key refused), 403 (key not allowed: role, merchant account), 429;
 * - timeout: no answer in time (the request may have been done);
 * - unavailable (unknown): a connection lost after sending, any 5xx, 422 errorCode 704 (the same key is
 *   still being processed), and any other answer where the operation has no outcome to give.
 * Validation answers (400/422) are the callers' to map (a declined charge, a failed capture or refund).
 */
export function adyenGatewayError (error: unknown): GatewayError {
  if (error instanceof GatewayError) return error
  if (error instanceof AdyenConnectionError) {
    if (callOf(error)?.signal?.aborted === true) return new GatewayError('aborted', 'the Adyen call was abandoned (time-out or shutdown); its outcome is unknown', 'aborted')
    if (error.code === 'ETIMEDOUT') return new GatewayError('timeout', 'Adyen did not answer in time', 'timeout')
    const neverSent = error.code === undefined ? undefined : NEVER_SENT[error.code]
    if (neverSent !== undefined) return new GatewayError('not_processed', `Adyen could not be reached (${error.code ?? ''})`, neverSent)
    return new GatewayError('unavailable', `the connection to Adyen was lost${error.code === undefined ? '' : ` (${error.code})`}`, 'connection_lost')
  }
  if (error instanceof HttpClientException) {
    const status = error.statusCode
    if (status === 401) return new GatewayError('not_processed', 'Adyen refused the API key (401)', 'authentication_failed')
    if (status === 403) return new GatewayError('not_processed', 'Adyen refused the operation to this API key or merchant account (403)', 'permission_denied')
    if (status === 429) return new GatewayError('not_processed', 'Adyen rate-limited the request (429)', 'rate_limited')
    if (error.errorCode === REQUEST_IN_PROGRESS) return new GatewayError('unavailable', 'Adyen is still processing a request under this Idempotency-Key (704)', 'request_in_progress')
    if (status >= 500) return new GatewayError('unavailable', `Adyen answered with an error (${status})`, 'server_error')
    return new GatewayError('unavailable', `Adyen refused the request (${status}${error.errorCode === undefined ? '' : `, errorCode ${error.errorCode}`})`, 'invalid_request')
  }
  return new GatewayError('unavailable', 'the Adyen call failed unexpectedly', 'client_error')
}
