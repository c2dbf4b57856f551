import type { Test } from 'tap'
import { GatewayError, type ChargeRequest, type ChargeState, type PaymentGateway } from '../../src/gateway/types'

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
  /**
   * Asynchronous modifications (Adyen): capture, refund and void answer `received` (accepted; the outcome
   * comes by notification), and the PSP offers no read of a charge (retrieve is an unknown outcome,
   * never "not processed"). Synchronous connectors (default) answer the outcome and read charges.
   */
  asynchronous?: boolean
}

export type ConnectorMaker = (t: Test) => Promise<ConnectorUnderTest>

/** What `retrieve` gives on a connector without reads: an unknown outcome (never not_processed, never a guess). */
async function unreadable (t: Test, psp: ConnectorUnderTest, request: Parameters<PaymentGateway['retrieve']>[0]): Promise<void> {
  const error = await psp.gateway.retrieve(request).then(() => undefined, (cause: unknown) => cause)
  t.ok(error instanceof GatewayError && error.kind === 'unavailable', 'retrieve: unknown (no read of a charge)')
}

let counter = 0
const nextPaymentId = (): string => `pay_contract_${process.pid}_${++counter}`

/**
 * What every connector does (simulated, Stripe, Adyen): issue 25's connector contract, with issue 26's
 * asynchronous modifications (`received`) for connectors that declare them.
 */
/** A lookup's state without what it says of the payment method (each connector's own tests check that). */
function withoutDetails (state: ChargeState): ChargeState {
  const { paymentMethodDetails: _details, ...rest } = state
  return rest
}

export function connectorContract (t: Test, make: ConnectorMaker): void {
  t.test('charge: succeeded, and repeating it under the same key returns the same charge', async (t) => {
    const psp = await make(t)
    const paymentId = nextPaymentId()
    const request = psp.approvedCharge(paymentId, '10.00')
    const first = await psp.gateway.charge(request)
    t.match(first, { outcome: 'succeeded', chargeId: /\w+/ })
    t.same(await psp.gateway.charge(request), first)
    t.equal(await psp.chargesFor(paymentId), 1)
    const read = { chargeIdempotencyKey: request.idempotencyKey, paymentId, chargeReference: first.chargeId }
    if (psp.asynchronous === true) return await unreadable(t, psp, read)
    t.same(withoutDetails(await psp.gateway.retrieve(read)), { state: 'captured', chargeId: first.chargeId, amountCapturedMinor: 1000 })
  })

  t.test('decline: an answer with a decline code, not a failure', async (t) => {
    const psp = await make(t)
    const paymentId = nextPaymentId()
    const request = psp.declinedCharge(paymentId)
    const result = await psp.gateway.charge(request)
    t.match(result, { outcome: 'declined', declineCode: /\w+/ })
    if (result.outcome !== 'declined') return
    t.same(await psp.gateway.charge(request), result, 'repeated under its key: the same answer')
    const read = { chargeIdempotencyKey: request.idempotencyKey, paymentId, chargeReference: result.chargeId }
    if (psp.asynchronous === true) return await unreadable(t, psp, read)
    t.match(await psp.gateway.retrieve(read), { state: 'declined', declineCode: result.declineCode })
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

  t.test('refund: succeeded (or received); repeated under its key, the same refund', async (t) => {
    const psp = await make(t)
    const paymentId = nextPaymentId()
    const request = psp.approvedCharge(paymentId, '20.00')
    const charge = await psp.gateway.charge(request)
    const refund = { idempotencyKey: `${request.idempotencyKey}:refund-1`, chargeIdempotencyKey: request.idempotencyKey, chargeReference: charge.chargeId, amountMinor: 500, amount: '5.00', currency: 'USD' }
    const first = await psp.gateway.refund(refund)
    t.match(first, { outcome: psp.asynchronous === true ? 'received' : 'succeeded', gatewayRefundId: /\w+/ })
    t.same(await psp.gateway.refund(refund), first)
  })

  t.test('capture with an amount: an authorization, then part of it captured', async (t) => {
    const psp = await make(t)
    const paymentId = nextPaymentId()
    const request = { ...psp.approvedCharge(paymentId, '30.00'), captureMethod: 'manual' as const }
    const authorization = await psp.gateway.charge(request)
    t.match(authorization, { outcome: 'authorized' })
    const reference = { chargeIdempotencyKey: request.idempotencyKey, paymentId, chargeReference: authorization.chargeId }
    const capture = { idempotencyKey: `${request.idempotencyKey}:capture`, ...reference, amountMinor: 2500, amount: '25.00', currency: 'USD' }
    if (psp.asynchronous === true) {
      const received = await psp.gateway.capture(capture)
      t.match(received, { outcome: 'received', captureId: /\w+/ })
      t.same(await psp.gateway.capture(capture), received, 'repeated under its key: the same capture')
      return
    }
    t.same(withoutDetails(await psp.gateway.retrieve(reference)), { state: 'authorized', chargeId: authorization.chargeId, amountMinor: 3000 })
    const captured = await psp.gateway.capture(capture)
    t.match(captured, { outcome: 'captured', amountMinor: 2500 })
    t.same(await psp.gateway.capture(capture), captured, 'repeated under its key')
    t.same(withoutDetails(await psp.gateway.retrieve(reference)), { state: 'captured', chargeId: authorization.chargeId, amountCapturedMinor: 2500 })
  })

  t.test('void: an authorization is released; a captured charge is reported charged; nothing made is voided', async (t) => {
    const psp = await make(t)
    if (psp.asynchronous === true) return await asynchronousVoids(t, psp)
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
    t.match(await psp.gateway.retrieve({ chargeIdempotencyKey: `untouched-${neverId}`, paymentId: `${neverId}-untouched` }), { state: 'none' })
  })
}

/** A connector whose cancels are only accepted: every void is `received`, with or without the charge's reference, repeated alike. */
async function asynchronousVoids (t: Test, psp: ConnectorUnderTest): Promise<void> {
  const heldId = nextPaymentId()
  const held = { ...psp.approvedCharge(heldId, '40.00'), captureMethod: 'manual' as const }
  const authorization = await psp.gateway.charge(held)
  t.match(authorization, { outcome: 'authorized' })
  const reference = { chargeIdempotencyKey: held.idempotencyKey, paymentId: heldId, chargeReference: authorization.chargeId }
  t.same(await psp.gateway.void(reference), { outcome: 'received' })
  t.same(await psp.gateway.void(reference), { outcome: 'received' }, 'idempotent')

  const paidId = nextPaymentId()
  const paid = psp.approvedCharge(paidId, '41.00')
  await psp.gateway.charge(paid)
  t.same(await psp.gateway.void({ chargeIdempotencyKey: paid.idempotencyKey, paymentId: paidId }), { outcome: 'received' }, 'without its reference')

  const neverId = nextPaymentId()
  t.same(await psp.gateway.void({ chargeIdempotencyKey: `never-${neverId}`, paymentId: neverId }), { outcome: 'received' }, 'nothing made')
  const error = await psp.gateway.void({ chargeIdempotencyKey: `never-${neverId}` }).then(() => undefined, (cause: unknown) => cause)
  t.ok(error instanceof GatewayError && error.kind !== 'not_processed', 'neither a reference nor a payment id: unknown, never "not processed"')
}
