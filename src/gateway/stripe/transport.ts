import { currentCall, NEVER_SENT, networkErrorCode } from '../call'

// Node loads its fetch implementation on first use, which can take longer than a short GATEWAY_TIMEOUT_MS: load it
// with this module (when the first Stripe account is built), not inside the first payment's time budget.
fetch('data:,').catch(() => {})

/** A library retry refused: an earlier attempt of the same call may have reached the PSP (never sent). */
export class RetryRefusedError extends Error {
  override name = 'RetryRefusedError'
  constructor () {
    super('not sent: an earlier attempt of this call may have reached the PSP, so a retry could act twice')
  }
}

/**
 * The fetch Stripe's SDK sends through (Stripe.createFetchHttpClient). Inside a GatewayCall (inCall) it:
 * - records every network attempt and whether its bytes can have reached Stripe;
 * - refuses to send a retry the SDK makes by itself once an attempt may have reached Stripe (the SDK retries a
 *   POST whose connection was reset even with maxNetworkRetries 0, and such a reset may come after Stripe acted);
 * - ends the request when the call's signal aborts (our time-out or shutdown), so no request outlives the call.
 * Outside a call it is plain fetch.
 */
export async function stripeFetch (input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const call = currentCall()
  if (call === undefined) return await fetch(input, init)
  if (call.mayHaveReached()) throw new RetryRefusedError()
  if (call.signal?.aborted === true) {
    call.record('never_sent', 'ABORT_ERR')
    throw Object.assign(new Error('not sent: the call was abandoned before this attempt'), { code: 'ABORT_ERR' })
  }
  const signals = [init.signal, call.signal].filter((signal): signal is AbortSignal => signal !== undefined && signal !== null)
  try {
    const response = await fetch(input, { ...init, signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0] ?? null })
    call.record('answered')
    return response
  } catch (error) {
    const code = networkErrorCode(error)
    call.record(code !== undefined && NEVER_SENT[code] !== undefined ? 'never_sent' : 'maybe_sent', code)
    throw error
  }
}
