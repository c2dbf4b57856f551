import type BetterSqlite3 from 'better-sqlite3'
import type { IdempotencyKeyRef, KeyCompletion, Payment, PaymentStore } from '../types'
import { PAYMENT_COLUMNS, paymentFromRow, paymentValues, type PaymentRow } from '../rows'
import { listPage } from '../listing'
import type { SqliteHandle } from './connection'
import { sqliteKeyStatements } from './idempotency'
import { immediateWrites, type WriteQueue } from './group-commit'
import { sqliteOutbox } from './events'
import type { EventOf } from '../../domain/events'

export function sqlitePaymentStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): PaymentStore {
  const keys = sqliteKeyStatements(db)
  const outbox = sqliteOutbox(db)
  const insert = db.prepare(`INSERT INTO payments (${PAYMENT_COLUMNS.join(', ')}) VALUES (${PAYMENT_COLUMNS.map(() => '?').join(', ')})`)
  const select = db.prepare<[string], PaymentRow>('SELECT * FROM payments WHERE id = ?')
  const finalize = db.prepare(`
    UPDATE payments SET status = @status, decline_code = @declineCode, failure_code = @failureCode, updated_at = @updatedAt, recovery_lease_until = NULL
    WHERE id = @id AND status = 'pending'`)
  const defer = db.prepare("UPDATE payments SET recovery_lease_until = ? WHERE id = ? AND status = 'pending'")
  const statements = new Map<string, BetterSqlite3.Statement>()
  const run = async (text: string, values: unknown[]): Promise<PaymentRow[]> => {
    let statement = statements.get(text)
    if (statement === undefined) statements.set(text, statement = db.prepare(text))
    return statement.all(...values) as PaymentRow[]
  }
  const leaseCandidates = db.prepare<{ createdBefore: string, now: number, limit: number }, PaymentRow>(`
    SELECT * FROM payments p
    WHERE p.status = 'pending' AND p.created_at < @createdBefore
      AND (p.recovery_lease_until IS NULL OR p.recovery_lease_until <= @now)
      AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.resource_id = p.id AND k.locked_until > @now)
    ORDER BY p.created_at LIMIT @limit`)
  const lease = db.prepare('UPDATE payments SET recovery_lease_until = ? WHERE id = ?')
  const lockKey = db.prepare('UPDATE idempotency_keys SET locked_until = ?, locked_by = NULL WHERE resource_id = ?')
  const count = db.prepare('SELECT count(*) FROM payments').pluck()
  const countPending = db.prepare("SELECT count(*) FROM payments WHERE status = 'pending'").pluck()

  const create = db.transaction((payment: Payment, key?: IdempotencyKeyRef) => {
    insert.run(...paymentValues(payment))
    if (key !== undefined) keys.markResourceCreated(key, payment.id)
  })
  const complete = db.transaction((final: Payment, completion?: KeyCompletion, event?: EventOf<Payment>): Payment => {
    const finalized = finalize.run({ id: final.id, status: final.status, declineCode: final.declineCode, failureCode: final.failureCode, updatedAt: final.updatedAt }).changes === 1
    // The event of the change, in its transaction: only the writer that moved the payment writes it.
    if (finalized) outbox.appendOf(event, final)
    if (completion !== undefined) keys.storeResponse(completion.ref, completion.response)
    // Read back only when another writer settled the payment first (then its outcome stands).
    return finalized ? final : paymentFromRow(select.get(final.id) as PaymentRow)
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
    async create (payment, key) { await writes.run(() => create(payment, key)) },
    async get (id) {
      const row = select.get(id)
      return row === undefined ? undefined : paymentFromRow(row)
    },
    async complete (final, completion, event) { return await writes.run(() => complete(final, completion, event)) },
    async leaseAbandoned (options) { return await writes.run(() => leaseAbandoned(options)) },
    async deferRecovery (id, notBefore) { await writes.run(() => defer.run(notBefore, id)) },
    async list (query) {
      const page = await listPage('sqlite', run, {
        table: 'payments',
        scope: { merchant_id: query.merchantId },
        filters: [['status', '=', query.status], ['created_at', '>=', query.createdGte], ['created_at', '<', query.createdLt]],
        page: query
      })
      return { data: page.data.map(paymentFromRow), hasMore: page.hasMore }
    },
    async count () { return count.get() as number },
    async countPending () { return countPending.get() as number }
  }
}
