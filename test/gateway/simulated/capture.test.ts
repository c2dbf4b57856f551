import t, { type Test } from 'tap'
import { createSqliteDatabase } from '../../../src/store/sqlite'
import { simulatedCaptureOutcome, simulatedGateway } from '../../../src/gateway/simulated/gateway'
import { withTimeout } from '../../../src/gateway/with-timeout'
import { GatewayError } from '../../../src/gateway/types'

async function gatewayOnNewLedger (t: Test) {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  return simulatedGateway(db.ledger, { latencyMs: 0 })
}

const minor = (amount: string): number => Math.round(Number(amount) * 100)
const authorize = (key: string, amount: string) => ({ idempotencyKey: key, paymentId: 'p', amountMinor: minor(amount), amount, currency: 'USD', captureMethod: 'manual' as const })
const capture = (key: string, chargeKey: string, amount: string) => ({ idempotencyKey: key, chargeIdempotencyKey: chargeKey, amountMinor: minor(amount), amount, currency: 'USD' })

t.test('capture outcomes by amount: 3001 unavailable, 3002 times out (captured), 3003 refused', async (t) => {
  t.same(['3001.00', '3002.00', '3003.00', '10.00'].map(simulatedCaptureOutcome), ['unavailable', 'timeout', 'failed', 'captured'])
  const gateway = await gatewayOnNewLedger(t)
  t.match(await gateway.charge(authorize('payment-1', '3500.00')), { outcome: 'authorized' }, 'manual: authorized only')
  t.match(await gateway.retrieve({ chargeIdempotencyKey: 'payment-1' }), { state: 'authorized', amountMinor: 350000 })
  await t.rejects(gateway.capture(capture('cap-1', 'payment-1', '3001.00')), GatewayError)
  t.same(await gateway.capture(capture('cap-2', 'payment-1', '3003.00')), { outcome: 'failed', failureCode: 'capture_declined' })
  t.match(await gateway.retrieve({ chargeIdempotencyKey: 'payment-1' }), { state: 'authorized' }, 'refusals capture nothing')
  await t.rejects(withTimeout(gateway, 30).capture(capture('cap-3', 'payment-1', '3002.00')), { name: 'GatewayError', message: /did not answer/ })
  t.match(await gateway.retrieve({ chargeIdempotencyKey: 'payment-1' }), { state: 'captured', amountCapturedMinor: 300200 }, 'the timed-out capture was made')
  t.match(await gateway.capture(capture('cap-3', 'payment-1', '3002.00')), { outcome: 'captured', amountMinor: 300200 }, 'a retry finds it')
})

t.test('one capture per authorization; a void releases an uncaptured one and reports a captured one', async (t) => {
  const gateway = await gatewayOnNewLedger(t)
  await gateway.charge(authorize('payment-a', '10.00'))
  const first = await gateway.capture(capture('cap-a', 'payment-a', '7.50'))
  t.match(first, { outcome: 'captured', amountMinor: 750 })
  t.same(await gateway.capture(capture('cap-a', 'payment-a', '7.50')), first, 'a repeat returns the first capture')
  t.same(await gateway.capture(capture('cap-b', 'payment-a', '10.00')), first, 'never a second capture')
  t.match(await gateway.void({ chargeIdempotencyKey: 'payment-a' }), { outcome: 'charged' })
  t.match(await gateway.refund({ idempotencyKey: 'refund-a', chargeIdempotencyKey: 'payment-a', amountMinor: 750, amount: '7.50', currency: 'USD' }), { outcome: 'succeeded' }, 'a captured authorization is refundable')

  await gateway.charge(authorize('payment-b', '10.00'))
  t.same(await gateway.void({ chargeIdempotencyKey: 'payment-b' }), { outcome: 'voided' })
  t.same(await gateway.retrieve({ chargeIdempotencyKey: 'payment-b' }), { state: 'voided' })
  t.same(await gateway.capture(capture('cap-c', 'payment-b', '10.00')), { outcome: 'failed', failureCode: 'authorization_voided' })
  t.match(await gateway.refund({ idempotencyKey: 'refund-b', chargeIdempotencyKey: 'payment-b', amountMinor: 1, amount: '0.01', currency: 'USD' }), { outcome: 'failed', failureCode: 'charge_not_found' })
  t.same(await gateway.capture(capture('cap-d', 'payment-none', '1.00')), { outcome: 'failed', failureCode: 'authorization_not_found' })
  await gateway.charge(authorize('payment-c', '10.00'))
  t.same(await gateway.capture(capture('cap-e', 'payment-c', '10.01')), { outcome: 'failed', failureCode: 'amount_too_large' })
  t.same(await gateway.retrieve({ chargeIdempotencyKey: 'payment-none' }), { state: 'none' })
  await gateway.charge({ idempotencyKey: 'payment-d', paymentId: 'p', amountMinor: 1000, amount: '10.00', currency: 'USD' })
  t.match(await gateway.retrieve({ chargeIdempotencyKey: 'payment-d' }), { state: 'captured', amountCapturedMinor: 1000 }, 'automatic: captured at once')
  await gateway.charge({ idempotencyKey: 'payment-e', paymentId: 'p', amountMinor: 250000, amount: '2500.00', currency: 'USD', captureMethod: 'manual' })
  t.match(await gateway.retrieve({ chargeIdempotencyKey: 'payment-e' }), { state: 'declined', declineCode: 'card_declined' })
})
