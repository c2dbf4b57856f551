import { GatewayError, type ChargeRequest, type ChargeResult, type PaymentGateway, type RefundRequest, type RefundResult, type VoidRequest, type VoidResult } from '../../src/gateway/types'

export interface SpyGateway extends PaymentGateway {
  calls: ChargeRequest[]
  refunds: RefundRequest[]
  voids: VoidRequest[]
}

type Behaviour = (request: ChargeRequest, callNumber: number) => Promise<ChargeResult> | ChargeResult
type RefundBehaviour = (request: RefundRequest, callNumber: number) => Promise<RefundResult> | RefundResult
type VoidBehaviour = (request: VoidRequest, callNumber: number) => Promise<VoidResult> | VoidResult

/** A gateway that records every call; by default every charge and refund succeeds and a void finds no charge. */
export function spyGateway (
  behaviour: Behaviour = (request) => ({ outcome: 'succeeded', chargeId: `ch_${request.idempotencyKey}` }),
  refundBehaviour: RefundBehaviour = (request) => ({ outcome: 'succeeded', gatewayRefundId: `re_${request.idempotencyKey}` }),
  voidBehaviour: VoidBehaviour = () => ({ outcome: 'voided' })
): SpyGateway {
  const calls: ChargeRequest[] = []
  const refunds: RefundRequest[] = []
  const voids: VoidRequest[] = []
  return {
    calls,
    refunds,
    voids,
    async charge (request) {
      calls.push(request)
      return await behaviour(request, calls.length)
    },
    async refund (request) {
      refunds.push(request)
      return await refundBehaviour(request, refunds.length)
    },
    async void (request) {
      voids.push(request)
      return await voidBehaviour(request, voids.length)
    }
  }
}

export const unavailable: Behaviour = () => { throw new GatewayError('unavailable', 'down') }
export const refundUnavailable: RefundBehaviour = () => { throw new GatewayError('unavailable', 'down') }
