import { GatewayError, type PaymentGateway } from './types'

/**
 * Bounds every gateway call (charge, refund, void, capture, retrieve): a gateway that does not answer within `timeoutMs` is treated as timed out,
 * and one whose caller's signal aborts (shutdown) is abandoned at once.
 */
export function withTimeout (gateway: PaymentGateway, timeoutMs: number): PaymentGateway {
  return {
    async charge (request, options = {}) {
      const { signal } = options
      if (signal?.aborted === true) throw new GatewayError('aborted', 'the charge was abandoned before it started (shutting down)')
      let timer: NodeJS.Timeout | undefined
      let onAbort: (() => void) | undefined
      const giveUp = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => { reject(new GatewayError('timeout', `the gateway did not answer within ${timeoutMs} ms`)) }, timeoutMs)
        onAbort = () => { reject(new GatewayError('aborted', 'the charge was abandoned while waiting for the gateway (shutting down)')) }
        signal?.addEventListener('abort', onAbort, { once: true })
      })
      try {
        return await Promise.race([gateway.charge(request, options), giveUp])
      } finally {
        clearTimeout(timer)
        if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort)
      }
    },
    async refund (request) { return await bounded(gateway.refund(request)) },
    async void (request) { return await bounded(gateway.void(request)) },
    async capture (request) { return await bounded(gateway.capture(request)) },
    async retrieve (request) { return await bounded(gateway.retrieve(request)) }
  }

  async function bounded<T> (call: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new GatewayError('timeout', `the gateway did not answer within ${timeoutMs} ms`)) }, timeoutMs)
    })
    try {
      return await Promise.race([call, timeout])
    } finally {
      clearTimeout(timer)
    }
  }
}
