import { GatewayError, type PaymentGateway } from './types'

/** Bounds every charge: a gateway that does not answer within `timeoutMs` is treated as timed out. */
export function withTimeout (gateway: PaymentGateway, timeoutMs: number): PaymentGateway {
  return {
    async charge (request) {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => { reject(new GatewayError('timeout', `the gateway did not answer within ${timeoutMs} ms`)) }, timeoutMs)
      })
      try {
        return await Promise.race([gateway.charge(request), timeout])
      } finally {
        clearTimeout(timer)
      }
    }
  }
}
