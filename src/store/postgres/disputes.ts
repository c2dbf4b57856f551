import type { DisputeChange, DisputeStore } from '../types'
import { disputeFromRow, paymentFromRow, type DisputeRow, type PaymentRow } from '../rows'
import { disputeParams, disputePaymentParams, disputeSql, sharedDisputeStore } from '../disputes'
import { inTransaction, type PgPool } from './connection'
import { postgresRunner, query } from './runner'
import { appendEventOf } from './events'

/*
 * BEGIN, the payment locked (SELECT … FOR UPDATE: a refund of the same payment waits, and so does another report),
 * its disputes read after the lock (their rows change only under it), the decision, the writes, COMMIT.
 */
export function postgresDisputeStore (pool: PgPool): DisputeStore {
  return {
    ...sharedDisputeStore(postgresRunner(pool)),
    async record (paymentId, connector, decide, event) {
      return await inTransaction(pool, 'READ COMMITTED', async (client): Promise<DisputeChange | undefined> => {
        const { rows: [row] } = await client.query<PaymentRow>({ name: 'dispute-lock-payment', text: 'SELECT * FROM payments WHERE id = $1 FOR UPDATE', values: [paymentId] })
        if (row === undefined) return undefined
        const payment = paymentFromRow(row)
        const all = (await client.query<DisputeRow>(query(disputeSql.forPayment, { paymentId }))).rows.map(disputeFromRow)
        const existing = all.find((dispute) => dispute.connector.id === connector.id && dispute.connectorReference === connector.reference)
        const decision = decide(payment, existing, all)
        if (decision === undefined) return existing === undefined ? undefined : { dispute: existing, payment, previous: existing }
        await client.query(query(disputeSql.upsert, disputeParams(decision.dispute)))
        await client.query(query(disputeSql.savePayment, disputePaymentParams(decision.payment)))
        const change = { dispute: decision.dispute, payment: decision.payment, previous: existing }
        await appendEventOf(client, event, change)
        return change
      })
    }
  }
}
