import type { Test } from 'tap'
import { GatewayError, type ChargeRequest, type PaymentGateway } from '../../src/gateway/types'

/** A connector under test and the PSP-specific ways to make it answer what the contract needs. */
export interface ConnectorUnderTest {
  /** The connector's gateway, bounded by a short time-out as the service bounds it. */
  gateway: PaymentGateway
  /** A charge that goes through (USD, `amount` like "10.00"). */
  approvedCharge: (paymentId: string, amount: string) => ChargeRequest
  /** A charge the PSP declines. */
  declinedCharge: (paymentId: string) => ChargeRequest
  /** A charge the PSP makes but whose answer is lost the first time (the caller sees an unknown outcome). */
  lostAnswerCharge: (paymentId: string) => ChargeRequest
  /** How many charges the PSP holds for a payment (to prove "one charge"). */
  chargesFor: (paymentId: string) => Promise<number>
}

export type ConnectorMaker = (t: Test) => Promise<ConnectorUnderTest>

let counter = 0
const nextPaymentId = (): string => `pay_contract_${process.pid}_${++counter}`

/** What every connector does (simulated and Stripe alike): issue 25's connector contract. */
export function connectorContract (t: Test, make: ConnectorMaker): void {
  t.test('charge: succeeded, and repeating it under the same key returns the same charge', async (t) => {
    const psp = await make(t)
    const paymentId = nextPaymentId()
    const request = psp.approvedCharge(paymentId, '10.00')
    const first = await psp.gateway.charge(request)
    t.match(first, { outcome: 'succeeded', chargeId: /\w+/ })
    t.same(await psp.gateway.charge(request), first)
    t.equal(await psp.chargesFor(paymentId), 1)
    t.same(await psp.gateway.retrieve({ chargeIdempotencyKey: request.idempotencyKey, paymentId, chargeReference: first.chargeId }),
      { state: 'captured', chargeId: first.chargeId, amountCapturedMinor: 1000 })
  })

  t.test('decline: an answer with a decline code, not a failure', async (t) => {
    const psp = await make(t)
    const paymentId = nextPaymentId()
    const request = psp.declinedCharge(paymentId)
    const result = await psp.gateway.charge(request)
    t.match(result, { outcome: 'declined', declineCode: /\w+/ })
    if (result.outcome !== 'declined') return
    t.match(await psp.gateway.retrieve({ chargeIdempotencyKey: request.idempotencyKey, paymentId, chargeReference: result.chargeId }), { state: 'declined', declineCode: result.declineCode })
  })

  t.test('unknown outcome: the answer is lost; resumed under the same key, the same charge (one charge)', async (t) => {
    const psp = await make(t)
    const paymentId = nextPaymentId()
    const request = psp.lostAnswerCharge(paymentId)
    const lost = await psp.gateway.charge(request).then(() => undefined, (error: unknown) => error)
    t.ok(lost instanceof GatewayError, 'a GatewayError')
    t.not((lost as GatewayError).kind, 'not_processed', 'never "certainly not done": no failover')
    const resumed = await psp.gateway.charge(request)
    t.match(resumed, { outcome: 'succeeded' })
    t.same(await psp.gateway.charge(request), resumed)
    t.equal(await psp.chargesFor(paymentId), 1, 'one charge')
  })

  t.test('refund: succeeded; repeated under its key, the same refund', async (t) => {
    const psp = await make(t)
    const paymentId = nextPaymentId()
    const request = psp.approvedCharge(paymentId, '20.00')
    const charge = await psp.gateway.charge(request)
    const refund = { idempotencyKey: `${request.idempotencyKey}:refund-1`, chargeIdempotencyKey: request.idempotencyKey, chargeReference: charge.chargeId, amountMinor: 500, amount: '5.00', currency: 'USD' }
    const first = await psp.gateway.refund(refund)
    t.match(first, { outcome: 'succeeded', gatewayRefundId: /\w+/ })
    t.same(await psp.gateway.refund(refund), first)
  })

  t.test('capture with an amount: an authorization, then part of it captured', async (t) => {
    const psp = await make(t)
    const paymentId = nextPaymentId()
    const request = { ...psp.approvedCharge(paymentId, '30.00'), captureMethod: 'manual' as const }
    const authorization = await psp.gateway.charge(request)
    t.match(authorization, { outcome: 'authorized' })
    const reference = { chargeIdempotencyKey: request.idempotencyKey, paymentId, chargeReference: authorization.chargeId }
    t.same(await psp.gateway.retrieve(reference), { state: 'authorized', chargeId: authorization.chargeId, amountMinor: 3000 })
    const capture = { idempotencyKey: `${request.idempotencyKey}:capture`, ...reference, amountMinor: 2500, amount: '25.00', currency: 'USD' }
    const captured = await psp.gateway.capture(capture)
    t.match(captured, { outcome: 'captured', amountMinor: 2500 })
    t.same(await psp.gateway.capture(capture), captured, 'repeated under its key')
    t.same(await psp.gateway.retrieve(reference), { state: 'captured', chargeId: authorization.chargeId, amountCapturedMinor: 2500 })
  })

  t.test('void: an authorization is released; a captured charge is reported charged; nothing made is voided', async (t) => {
    const psp = await make(t)
    const heldId = nextPaymentId()
    const held = { ...psp.approvedCharge(heldId, '40.00'), captureMethod: 'manual' as const }
    const authorization = await psp.gateway.charge(held)
    const reference = { chargeIdempotencyKey: held.idempotencyKey, paymentId: heldId, chargeReference: authorization.chargeId }
    t.same(await psp.gateway.void(reference), { outcome: 'voided' })
    t.same(await psp.gateway.void(reference), { outcome: 'voided' }, 'idempotent')
    t.same(await psp.gateway.retrieve(reference), { state: 'voided' })

    const paidId = nextPaymentId()
    const paid = psp.approvedCharge(paidId, '41.00')
    const charge = await psp.gateway.charge(paid)
    t.same(await psp.gateway.void({ chargeIdempotencyKey: paid.idempotencyKey, paymentId: paidId }), { outcome: 'charged', chargeId: charge.chargeId }, 'found without its reference')

    const declinedId = nextPaymentId()
    const declined = psp.declinedCharge(declinedId)
    const decline = await psp.gateway.charge(declined)
    t.match(await psp.gateway.void({ chargeIdempotencyKey: declined.idempotencyKey, paymentId: declinedId, chargeReference: decline.chargeId }), { outcome: 'declined' })

    const neverId = nextPaymentId()
    t.same(await psp.gateway.void({ chargeIdempotencyKey: `never-${neverId}`, paymentId: neverId }), { outcome: 'voided' })
    t.same(await psp.gateway.retrieve({ chargeIdempotencyKey: `untouched-${neverId}`, paymentId: `${neverId}-untouched` }), { state: 'none' })
  })
}
