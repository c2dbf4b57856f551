import { GatewayError, type ChargeRequest, type ChargeResult, type PaymentGateway } from '../../src/gateway/types'

export interface SpyGateway extends PaymentGateway {
  calls: ChargeRequest[]
}

type Behaviour = (request: ChargeRequest, callNumber: number) => Promise<ChargeResult> | ChargeResult

/** A gateway that records every call; by default every charge succeeds. */
export function spyGateway (behaviour: Behaviour = (request) => ({ outcome: 'succeeded', chargeId: `ch_${request.idempotencyKey}` })): SpyGateway {
  const calls: ChargeRequest[] = []
  return {
    calls,
    async charge (request) {
      calls.push(request)
      return await behaviour(request, calls.length)
    }
  }
}

export const unavailable: Behaviour = () => { throw new GatewayError('unavailable', 'down') }
