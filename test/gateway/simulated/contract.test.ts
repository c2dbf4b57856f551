import t from 'tap'
import { createSqliteDatabase } from '../../../src/store/sqlite'
import { simulatedGateway } from '../../../src/gateway/simulated/gateway'
import { withTimeout } from '../../../src/gateway/with-timeout'
import { connectorContract } from '../connector-contract'

const keyOf = (paymentId: string): string => `payment:${paymentId}`
const request = (paymentId: string, amount: string) =>
  ({ idempotencyKey: keyOf(paymentId), paymentId, amountMinor: Math.round(Number(amount) * 100), amount, currency: 'USD' })

connectorContract(t, async (t) => {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  return {
    gateway: withTimeout(simulatedGateway(db.ledger, { latencyMs: 0 }), 200),
    approvedCharge: request,
    declinedCharge: (paymentId) => request(paymentId, '2500.00'),
    // 5002.00: the simulated gateway makes the charge and never answers.
    lostAnswerCharge: (paymentId) => request(paymentId, '5002.00'),
    chargesFor: async (paymentId) => (await db.ledger.get(keyOf(paymentId))) === undefined ? 0 : 1
  }
})
