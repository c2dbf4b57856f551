import { writeAudit } from './audit'
import { auditEntry } from '../audit-scope'
import type { CaptureStore, Payment } from '../types'
import { paymentFromRow, type PaymentRow } from '../rows'
import { inTransaction, type PgClient, type PgPool } from './connection'
import { postgresRunner, query } from './runner'
import { paymentSql } from '../payments'
import { captureSql, settleParams, sharedCaptureStore, voidParams } from '../captures'
import { postgresKeyStatements } from './idempotency'
import { appendEventOf } from './events'
import { captureResourceId } from '../../domain/captures'

/*
 * READ COMMITTED throughout. Every write locks the payment first (SELECT … FOR UPDATE, or an UPDATE
 * whose WHERE clause PostgreSQL re-checks on the newest row version after waiting), then its key:
 * the order of the payment and refund stores, so no deadlock. A capture's reservation, a void's hold
 * and the expiry therefore decide one after the other, on what the previous one committed, from any
 * number of instances.
 */
async function lockPayment (client: PgClient, id: string): Promise<PaymentRow | undefined> {
  const { rows: [row] } = await client.query<PaymentRow>({ name: 'capture-lock-payment', text: 'SELECT * FROM payments WHERE id = $1 FOR UPDATE', values: [id] })
  return row
}

export function postgresCaptureStore (pool: PgPool): CaptureStore {
  return {
    ...sharedCaptureStore(postgresRunner(pool)),
    async reserve (paymentId, decide, options) {
      return await inTransaction(pool, 'READ COMMITTED', async (client): Promise<Payment | undefined> => {
        const row = await lockPayment(client, paymentId)
        if (row === undefined || (options.merchantId !== undefined && row.merchant_id !== options.merchantId)) return undefined
        const leased = row.recovery_lease_until ?? null
        const reserved = decide(paymentFromRow(row), { voidInFlight: leased !== null && Number(leased) > options.now })
        await client.query(query(captureSql.reserve, { id: paymentId, pending: reserved.capturePendingMinor, attempts: reserved.captureAttempts, updatedAt: reserved.updatedAt }))
        if (options.key !== undefined) await postgresKeyStatements.markResourceCreated(client, options.key, captureResourceId(paymentId, reserved.captureAttempts))
        // The request's entry goes with the capture's reservation: a PSP that answers later (Adyen's 202) settles it without a request.
        await writeAudit(client, auditEntry(paymentId))
        return reserved
      })
    },

    async settle (final, completion, event) {
      return await inTransaction(pool, 'READ COMMITTED', async (client): Promise<Payment> => {
        const row = await lockPayment(client, final.id)
        if (row === undefined) throw new Error(`payment ${final.id} vanished while its capture was settled`)
        if (row.capture_pending_minor === null) return paymentFromRow(row)
        await client.query(query(captureSql.settle, settleParams(final)))
        await appendEventOf(client, event, final)
        if (completion !== undefined) await postgresKeyStatements.storeResponse(client, completion.ref, completion.response)
        return final
      })
    },

    async holdForVoid (paymentId, options) {
      const params = { id: paymentId, leaseUntil: options.leaseUntil, now: options.now }
      const audit = auditEntry(paymentId)
      // A cancel's entry goes with its hold (a PSP that answers later settles it without a request): one transaction.
      const held = audit === undefined
        ? await postgresRunner(pool).get(captureSql.hold, params)
        : await inTransaction(pool, 'READ COMMITTED', async (client) => {
          const row = await postgresRunner(client).get(captureSql.hold, params)
          if (row !== undefined) await writeAudit(client, audit)
          return row
        })
      if (held !== undefined) return { payment: paymentFromRow(held), held: true }
      const row = await postgresRunner(pool).get(paymentSql.get, { id: paymentId })
      return row === undefined ? undefined : { payment: paymentFromRow(row), held: false }
    },

    /* SKIP LOCKED: instances holding at once take disjoint authorizations; the outer condition is re-checked on the newest row version. */
    async holdExpired (options) {
      const { rows } = await pool.query<PaymentRow>({
        name: 'capture-hold-expired',
        text: `UPDATE payments SET recovery_lease_until = $3
          WHERE id IN (
            SELECT id FROM payments
            WHERE status = 'requires_capture' AND capture_before <= $1 AND capture_pending_minor IS NULL AND (recovery_lease_until IS NULL OR recovery_lease_until <= $2)
            ORDER BY capture_before LIMIT $4
            FOR UPDATE SKIP LOCKED)
          AND status = 'requires_capture' AND capture_pending_minor IS NULL AND (recovery_lease_until IS NULL OR recovery_lease_until <= $2)
          RETURNING *`,
        values: [new Date(options.now).toISOString(), options.now, options.leaseUntil, options.limit]
      })
      return rows.map(paymentFromRow)
    },

    async finishVoid (final, event) {
      return await inTransaction(pool, 'READ COMMITTED', async (client): Promise<Payment> => {
        const row = await lockPayment(client, final.id)
        if (row === undefined) throw new Error(`payment ${final.id} vanished while it was voided`)
        if (row.status !== 'requires_capture' || row.capture_pending_minor !== null) return paymentFromRow(row)
        await client.query(query(captureSql.void, voidParams(final)))
        await appendEventOf(client, event, final)
        return final
      })
    },

    async applyConnectorChange (final, from, event) {
      return await inTransaction(pool, 'READ COMMITTED', async (client): Promise<Payment> => {
        const row = await lockPayment(client, final.id)
        if (row === undefined) throw new Error(`payment ${final.id} vanished while its connector's change was recorded`)
        const current = paymentFromRow(row)
        if (current.status !== from.status || current.amountCapturedMinor !== from.amountCapturedMinor || current.capturePendingMinor !== null ||
          current.amountRefundedMinor !== 0 || current.refundPendingMinor !== 0 || (current.amountDisputedMinor ?? 0) !== 0) return current
        await client.query(query(captureSql.connectorChange, { ...settleParams(final), fromStatus: from.status, fromCapturedMinor: from.amountCapturedMinor }))
        await appendEventOf(client, event, final)
        return final
      })
    },

    /* Like the payment store's leaseAbandoned: candidates locked with SKIP LOCKED, then their keys (a live request's key leaves its payment alone). */
    async leaseInFlight (options) {
      return await inTransaction(pool, 'READ COMMITTED', async (client) => {
        const { rows: candidates } = await client.query<PaymentRow>({
          name: 'capture-lease-candidates',
          text: `SELECT p.* FROM payments p
            WHERE p.capture_pending_minor IS NOT NULL AND p.updated_at < $1
              AND (p.recovery_lease_until IS NULL OR p.recovery_lease_until <= $2)
            ORDER BY p.updated_at
            LIMIT $3
            FOR UPDATE OF p SKIP LOCKED`,
          values: [options.updatedBefore, options.now, options.limit]
        })
        if (candidates.length === 0) return []
        const resourceOf = (row: PaymentRow): string => captureResourceId(row.id, Number(row.capture_attempts))
        const resources = candidates.map(resourceOf)
        const { rows: keyRows } = await client.query<{ resource_id: string, locked_until: string | null }>({
          name: 'capture-lease-keys',
          text: 'SELECT resource_id, locked_until FROM idempotency_keys WHERE resource_id = ANY($1::text[]) ORDER BY scope, method, path, key FOR UPDATE',
          values: [resources]
        })
        const held = new Set(keyRows.filter((row) => row.locked_until !== null && Number(row.locked_until) > options.now).map((row) => row.resource_id))
        const leased = candidates.filter((row) => !held.has(resourceOf(row)))
        if (leased.length === 0) return []
        await client.query({
          name: 'capture-lease',
          text: 'UPDATE payments SET recovery_lease_until = $2 WHERE id = ANY($1::text[])',
          values: [leased.map((row) => row.id), options.leaseUntil]
        })
        await client.query({
          name: 'capture-lease-lock-keys',
          text: 'UPDATE idempotency_keys SET locked_until = $2 WHERE resource_id = ANY($1::text[])',
          values: [leased.map((row) => captureResourceId(row.id, Number(row.capture_attempts))), options.leaseUntil]
        })
        return leased.map(paymentFromRow)
      })
    }
  }
}
