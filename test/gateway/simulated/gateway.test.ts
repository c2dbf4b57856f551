import t, { type Test } from 'tap'
import { createSqliteDatabase } from '../../../src/store/sqlite'
import { simulatedGateway, simulatedRefundOutcome, VOIDED_DECLINE_CODE } from '../../../src/gateway/simulated/gateway'
import { withTimeout } from '../../../src/gateway/with-timeout'
import { GatewayError } from '../../../src/gateway/types'

async function gatewayOnNewLedger (t: Test) {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  return simulatedGateway(db.ledger, { latencyMs: 0 })
}

const charge = (key: string, amount: string) => ({ idempotencyKey: key, paymentId: 'p', amountMinor: Math.round(Number(amount) * 100), amount, currency: 'USD' })
const refund = (key: string, chargeKey: string, amount: string) => ({ idempotencyKey: key, chargeIdempotencyKey: chargeKey, amountMinor: Math.round(Number(amount) * 100), amount, currency: 'USD' })

t.test('refund outcomes by amount; a repeat under the same key returns the first result', async (t) => {
  t.equal(simulatedRefundOutcome('4001.00'), 'unavailable')
  t.equal(simulatedRefundOutcome('4002.00'), 'timeout')
  t.equal(simulatedRefundOutcome('4003.00'), 'failed')
  t.equal(simulatedRefundOutcome('10.00'), 'succeeded')
  const gateway = await gatewayOnNewLedger(t)
  await gateway.charge(charge('payment-1', '9000.00'))
  const first = await gateway.refund(refund('refund-1', 'payment-1', '10.00'))
  t.equal(first.outcome, 'succeeded')
  t.same(await gateway.refund(refund('refund-1', 'payment-1', '10.00')), first, 'never refunded twice')
  await t.rejects(gateway.refund(refund('refund-2', 'payment-1', '4001.00')), GatewayError)
  t.match(await gateway.refund(refund('refund-3', 'payment-1', '4003.00')), { outcome: 'failed', failureCode: 'refund_declined' })
  t.match(await gateway.refund(refund('refund-4', 'payment-none', '1.00')), { outcome: 'failed', failureCode: 'charge_not_found' })
  const bounded = withTimeout(gateway, 30)
  await t.rejects(bounded.refund(refund('refund-5', 'payment-1', '4002.00')), { name: 'GatewayError', message: /did not answer/ })
  t.equal((await gateway.refund(refund('refund-5', 'payment-1', '4002.00'))).outcome, 'succeeded', 'the timed-out refund was made')
})

t.test('void: a tombstone before a charge, the charge itself after one', async (t) => {
  const gateway = await gatewayOnNewLedger(t)
  t.same(await gateway.void({ chargeIdempotencyKey: 'payment-a' }), { outcome: 'voided' })
  t.match(await gateway.charge(charge('payment-a', '10.00')), { outcome: 'declined', declineCode: VOIDED_DECLINE_CODE }, 'a late charge is not made')
  await gateway.charge(charge('payment-b', '10.00'))
  t.match(await gateway.void({ chargeIdempotencyKey: 'payment-b' }), { outcome: 'charged' })
  await gateway.charge(charge('payment-c', '2500.00'))
  t.match(await gateway.void({ chargeIdempotencyKey: 'payment-c' }), { outcome: 'declined', declineCode: 'card_declined' })
  const bounded = withTimeout(gateway, 1000)
  t.same(await bounded.void({ chargeIdempotencyKey: 'payment-a' }), { outcome: 'voided' })
})
