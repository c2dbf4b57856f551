import type { IdempotencyKeyRef, KeyCompletion, Payment, PaymentStore } from '../types'
import { nextActionColumn, paymentFromRow, paymentMethodDetailsColumns, type PaymentRow } from '../rows'
import { paymentParams, paymentSql, sharedPaymentStore } from '../payments'
import { prepare, sqliteRunner } from './runner'
import type { SqliteHandle } from './connection'
import { sqliteKeyStatements } from './idempotency'
import { immediateWrites, type WriteQueue } from './group-commit'
import { sqliteOutbox } from './events'
import type { EventOf } from '../../domain/events'
import type { ConnectorCall } from '../../domain/connector-stats'
import { connectorSql } from '../connectors'

export function sqlitePaymentStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): PaymentStore {
  const keys = sqliteKeyStatements(db)
  const outbox = sqliteOutbox(db)
  const insert = prepare(db, paymentSql.insert)
  const select = prepare(db, paymentSql.get)
  const insertCall = prepare(db, connectorSql.recordAttempt)
  const finalize = db.prepare(`
    UPDATE payments SET status = @status, decline_code = @declineCode, failure_code = @failureCode, updated_at = @updatedAt, recovery_lease_until = NULL,
      amount_captured_minor = @amountCaptured, cancellation_reason = @cancellationReason,
      connector_id = @connectorId, connector_type = @connectorType, connector_reference = @connectorReference, attempts = @attempts,
      payment_method_details = @paymentMethodDetails, card_last4 = @cardLast4, next_action = @nextAction, checkout_data = NULL
    WHERE id = @id AND status = @from`)
  const leaseCandidates = db.prepare<{ createdBefore: string, now: number, limit: number }, PaymentRow>(`
    SELECT * FROM payments p
    WHERE p.status = 'pending' AND p.created_at < @createdBefore
      AND (p.recovery_lease_until IS NULL OR p.recovery_lease_until <= @now)
      AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.resource_id = p.id AND k.locked_until > @now)
    ORDER BY p.created_at LIMIT @limit`)
  const lease = db.prepare('UPDATE payments SET recovery_lease_until = ? WHERE id = ?')
  const lockKey = db.prepare('UPDATE idempotency_keys SET locked_until = ?, locked_by = NULL WHERE resource_id = ?')

  const create = db.transaction((payment: Payment, key?: IdempotencyKeyRef) => {
    insert.run(paymentParams(payment))
    if (key !== undefined) keys.markResourceCreated(key, payment.id)
  })
  const complete = db.transaction((final: Payment, completion?: KeyCompletion, event?: EventOf<Payment>, from = 'pending', call?: ConnectorCall): Payment => {
    if (call !== undefined) insertCall.run(call)
    const method = paymentMethodDetailsColumns(final)
    const finalized = finalize.run({
      from,
      nextAction: nextActionColumn(final),
      id: final.id,
      status: final.status,
      declineCode: final.declineCode,
      failureCode: final.failureCode,
      updatedAt: final.updatedAt,
      amountCaptured: final.amountCapturedMinor,
      cancellationReason: final.cancellationReason,
      connectorId: final.connector.id,
      connectorType: final.connector.type,
      connectorReference: final.connectorReference,
      attempts: JSON.stringify(final.attempts),
      paymentMethodDetails: method.details,
      cardLast4: method.last4
    }).changes === 1
    // The event of the change, in its transaction: only the writer that moved the payment writes it.
    if (finalized) outbox.appendOf(event, final)
    if (completion !== undefined) keys.storeResponse(completion.ref, completion.response)
    // Read back only when another writer settled the payment first (then its outcome stands).
    if (finalized) return final
    const stored = select.get({ id: final.id })
    if (stored === undefined) throw new Error(`payment ${final.id} to complete does not exist`)
    return paymentFromRow(stored)
  })
  const leaseAbandoned = db.transaction((options: Parameters<PaymentStore['leaseAbandoned']>[0]) => {
    const rows = leaseCandidates.all({ createdBefore: options.createdBefore, now: options.now, limit: options.limit })
    for (const row of rows) {
      lease.run(options.leaseUntil, row.id)
      lockKey.run(options.leaseUntil, row.id)
    }
    return rows.map(paymentFromRow)
  })

  return {
    ...sharedPaymentStore(sqliteRunner(db, writes)),
    async create (payment, key) { await writes.run(() => create(payment, key)) },
    async complete (final, completion, event, from, call) { return await writes.run(() => complete(final, completion, event, from, call)) },
    async leaseAbandoned (options) { return await writes.run(() => leaseAbandoned(options)) }
  }
}
