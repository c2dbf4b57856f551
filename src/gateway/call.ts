import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * Node's error codes of a connection that failed before a byte of the request left this process:
 * refused or unroutable (TCP), no address (DNS), certificate refused in the TLS handshake (the request is
 * only written once the handshake is done). Anything else from the socket (ECONNRESET, EPIPE, "socket
 * hang up", a body cut short) may come after the PSP received the request, so it is unknown.
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

/**
 * Whether a network attempt's bytes can have reached the PSP: `never_sent` (the connection was never made:
 * refused, unroutable, DNS, TLS), `maybe_sent` (written, then lost, reset, timed out or aborted), `answered`.
 */
export type Reach = 'never_sent' | 'maybe_sent' | 'answered'

/**
 * One call to a PSP as the network saw it: every attempt its library made, and the signal that ends it. A call
 * is classified by all of its attempts, not its last one: a library's own retry of a request that may have
 * reached the PSP proves nothing about the first one.
 */
export class GatewayCall {
  readonly attempts: Array<{ reach: Reach, code: string | undefined }> = []
  constructor (readonly signal: AbortSignal | undefined) {}

  record (reach: Reach, code?: string): void {
    this.attempts.push({ reach, code })
  }

  /** True when some attempt may have reached the PSP (written, answered or lost on the way). */
  mayHaveReached (): boolean {
    return this.attempts.some((attempt) => attempt.reach !== 'never_sent')
  }
}

const calls = new AsyncLocalStorage<GatewayCall>()
/** The call each failed library error came from (a library's error object is kept as it is, for its own classes). */
const callOfError = new WeakMap<object, GatewayCall>()

/**
 * Runs one library call to a PSP as a GatewayCall: transports made for it (stripeFetch, adyenTransport) read it
 * to abort with `signal`, to record each attempt and to refuse a library's retry after a send that may have
 * reached the PSP. A failure keeps its call (callOf) for the error's classification.
 */
export async function inCall<T> (signal: AbortSignal | undefined, send: () => Promise<T>): Promise<T> {
  const call = new GatewayCall(signal)
  try {
    return await calls.run(call, send)
  } catch (error) {
    if (typeof error === 'object' && error !== null) callOfError.set(error, call)
    throw error
  }
}

/** The call the current code runs in (undefined outside inCall). */
export function currentCall (): GatewayCall | undefined {
  return calls.getStore()
}

/** The call a failure came from, when it came from inCall. */
export function callOf (error: unknown): GatewayCall | undefined {
  return typeof error === 'object' && error !== null ? callOfError.get(error) : undefined
}

/** Node's error code of a failed request: its own, or its cause's (fetch wraps the socket's error as `cause`). */
export function networkErrorCode (error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const own = (error as { code?: unknown }).code
  if (typeof own === 'string') return own
  const cause = (error as { cause?: unknown }).cause
  return cause === error ? undefined : networkErrorCode(cause)
}
