import type { DisputeChange, DisputeStore } from '../types'
import { disputeFromRow, paymentFromRow } from '../rows'
import { paymentSql } from '../payments'
import { disputeParams, disputePaymentParams, disputeSql, sharedDisputeStore } from '../disputes'
import { prepare, sqliteRunner } from './runner'
import type { SqliteHandle } from './connection'
import { immediateWrites, type WriteQueue } from './group-commit'
import { sqliteOutbox } from './events'

/** SQLite's single writer: the payment's read, the decision and the writes run in one write transaction. */
export function sqliteDisputeStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): DisputeStore {
  const outbox = sqliteOutbox(db)
  const selectPayment = prepare(db, paymentSql.get)
  const forPayment = prepare(db, disputeSql.forPayment)
  const upsert = prepare(db, disputeSql.upsert)
  const savePayment = prepare(db, disputeSql.savePayment)
  return {
    ...sharedDisputeStore(sqliteRunner(db, writes)),
    async record (paymentId, connector, decide, event) {
      return await writes.run((): DisputeChange | undefined => {
        const row = selectPayment.get({ id: paymentId })
        if (row === undefined) return undefined
        const payment = paymentFromRow(row)
        const all = forPayment.all({ paymentId }).map(disputeFromRow)
        const existing = all.find((dispute) => dispute.connector.id === connector.id && dispute.connectorReference === connector.reference)
        const decision = decide(payment, existing, all)
        if (decision === undefined) return existing === undefined ? undefined : { dispute: existing, payment, previous: existing }
        upsert.run(disputeParams(decision.dispute))
        savePayment.run(disputePaymentParams(decision.payment))
        const change = { dispute: decision.dispute, payment: decision.payment, previous: existing }
        outbox.appendOf(event, change)
        return change
      })
    }
  }
}
