import { GatewayError, type CallOptions, type PaymentGateway } from './types'

/**
 * Bounds every gateway call (charge, refund, void, capture, retrieve, acceptDispute): a gateway that does not answer within
 * `timeoutMs` is treated as timed out, and one whose caller's signal aborts (shutdown) is abandoned at once. Either
 * way the call's own signal aborts, so the connector ends its request: no PSP call outlives our giving up on it.
 */
export function withTimeout (gateway: PaymentGateway, timeoutMs: number): PaymentGateway {
  async function bounded<T> (options: CallOptions | undefined, call: (options: CallOptions) => Promise<T>): Promise<T> {
    const caller = options?.signal
    if (caller?.aborted === true) throw new GatewayError('aborted', 'the call was abandoned before it started (shutting down)')
    const giveUp = new AbortController()
    let timer: NodeJS.Timeout | undefined
    let onAbort: (() => void) | undefined
    const gaveUp = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const timeout = new GatewayError('timeout', `the gateway did not answer within ${timeoutMs} ms`)
        reject(timeout)
        giveUp.abort(timeout)
      }, timeoutMs)
      onAbort = () => {
        const aborted = new GatewayError('aborted', 'the call was abandoned while waiting for the gateway (shutting down)')
        reject(aborted)
        giveUp.abort(aborted)
      }
      caller?.addEventListener('abort', onAbort, { once: true })
    })
    try {
      return await Promise.race([call({ signal: giveUp.signal }), gaveUp])
    } finally {
      clearTimeout(timer)
      if (onAbort !== undefined) caller?.removeEventListener('abort', onAbort)
    }
  }

  return {
    async charge (request, options) { return await bounded(options, async (bound) => await gateway.charge(request, bound)) },
    async refund (request, options) { return await bounded(options, async (bound) => await gateway.refund(request, bound)) },
    async void (request, options) { return await bounded(options, async (bound) => await gateway.void(request, bound)) },
    async capture (request, options) { return await bounded(options, async (bound) => await gateway.capture(request, bound)) },
    async retrieve (request, options) { return await bounded(options, async (bound) => await gateway.retrieve(request, bound)) },
    ...(gateway.acceptDispute === undefined
      ? {}
      : { acceptDispute: async (request, options) => await bounded(options, async (bound) => await (gateway.acceptDispute as Required<PaymentGateway>['acceptDispute'])(request, bound)) })
  }
}
