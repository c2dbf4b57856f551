import {
  GatewayError, type CaptureRequest, type CaptureResult, type ChargeRequest, type ChargeResult, type ChargeState, type PaymentGateway,
  type RefundRequest, type RefundResult, type RetrieveRequest, type VoidRequest, type VoidResult
} from '../../src/gateway/types'

export interface SpyGateway extends PaymentGateway {
  calls: ChargeRequest[]
  refunds: RefundRequest[]
  voids: VoidRequest[]
  captures: CaptureRequest[]
  retrieves: RetrieveRequest[]
}

type CaptureBehaviour = (request: CaptureRequest, callNumber: number) => Promise<CaptureResult> | CaptureResult
type RetrieveBehaviour = (request: RetrieveRequest, callNumber: number) => Promise<ChargeState> | ChargeState

/** What a spy gateway does for captures and reads; by default a capture takes what it is asked and a read finds an authorization. */
export interface CaptureBehaviours {
  capture?: CaptureBehaviour
  retrieve?: RetrieveBehaviour
}

type Behaviour = (request: ChargeRequest, callNumber: number) => Promise<ChargeResult> | ChargeResult
type RefundBehaviour = (request: RefundRequest, callNumber: number) => Promise<RefundResult> | RefundResult
type VoidBehaviour = (request: VoidRequest, callNumber: number) => Promise<VoidResult> | VoidResult

/** A gateway that records every call; by default every charge and refund succeeds and a void finds no charge. */
export function spyGateway (
  behaviour: Behaviour = (request) => ({ outcome: 'succeeded', chargeId: `ch_${request.idempotencyKey}` }),
  refundBehaviour: RefundBehaviour = (request) => ({ outcome: 'succeeded', gatewayRefundId: `re_${request.idempotencyKey}` }),
  voidBehaviour: VoidBehaviour = () => ({ outcome: 'voided' }),
  captureBehaviours: CaptureBehaviours = {}
): SpyGateway {
  const calls: ChargeRequest[] = []
  const refunds: RefundRequest[] = []
  const voids: VoidRequest[] = []
  const captures: CaptureRequest[] = []
  const retrieves: RetrieveRequest[] = []
  const capture = captureBehaviours.capture ?? ((request) => ({ outcome: 'captured', captureId: `cap_${request.idempotencyKey}`, amountMinor: request.amountMinor }))
  const retrieve = captureBehaviours.retrieve ?? ((request) => ({ state: 'authorized', chargeId: `ch_${request.chargeIdempotencyKey}`, amountMinor: 0 }))
  return {
    calls,
    refunds,
    voids,
    captures,
    retrieves,
    async capture (request) {
      captures.push(request)
      return await capture(request, captures.length)
    },
    async retrieve (request) {
      retrieves.push(request)
      return await retrieve(request, retrieves.length)
    },
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
