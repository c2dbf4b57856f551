import type { KeyCompletion, Payment, PaymentStore } from '../types'
import { PAYMENT_COLUMNS, paymentFromRow, paymentValues, type PaymentRow } from '../rows'
import { listPage } from '../listing'
import { inTransaction, type PgPool, type Queryable } from './connection'
import { FINISH_KEY_FROM_6, postgresKeyStatements as keys } from './idempotency'
import { appendEventOf } from './events'

/*
 * Every transaction here runs in READ COMMITTED. The writes are guarded by their
 * WHERE clauses, which PostgreSQL re-checks against the newest committed row
 * version after waiting for a concurrent writer (so of two completions only one
 * moves a payment out of 'pending'), and leaseAbandoned relies on FOR UPDATE …
 * SKIP LOCKED, which under REPEATABLE READ would fail with serialization errors
 * whenever another instance had just leased or settled a candidate.
 */
const FINALIZE = `UPDATE payments SET status = $2, decline_code = $3, failure_code = $4, updated_at = $5, recovery_lease_until = NULL
  WHERE id = $1 AND status = 'pending' RETURNING id`

/** Moves the payment out of 'pending' (guarded) and, with `completion`, finishes its key: one statement. */
async function settle (db: Queryable, final: Payment, completion: KeyCompletion | undefined): Promise<{ rows: Array<{ finalized: boolean }> }> {
  const values: unknown[] = [final.id, final.status, final.declineCode, final.failureCode, final.updatedAt]
  if (completion === undefined) {
    return await db.query({ name: 'pay-finalize', text: `WITH f AS (${FINALIZE}) SELECT EXISTS (SELECT 1 FROM f) AS finalized`, values })
  }
  const { ref, response } = completion
  values.push(ref.scope, ref.method, ref.path, ref.key, response.statusCode, JSON.stringify(response.headers), response.body)
  return await db.query({
    name: 'pay-finalize-key',
    text: `WITH f AS (${FINALIZE}), k AS (${FINISH_KEY_FROM_6})
      SELECT EXISTS (SELECT 1 FROM f) AS finalized`,
    values
  })
}

export function postgresPaymentStore (pool: PgPool): PaymentStore {
  return {
    async create (payment, key) {
      await inTransaction(pool, 'READ COMMITTED', async (client) => {
        await client.query({
          name: 'pay-insert',
          text: `INSERT INTO payments (${PAYMENT_COLUMNS.join(', ')}) VALUES (${PAYMENT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
          values: paymentValues(payment)
        })
        if (key !== undefined) await keys.markResourceCreated(client, key, payment.id)
      })
    },

    async get (id) {
      const { rows } = await pool.query<PaymentRow>({ name: 'pay-get', text: 'SELECT * FROM payments WHERE id = $1', values: [id] })
      return rows.length === 0 ? undefined : paymentFromRow(rows[0])
    },

    /*
     * One statement, so one round trip and one commit (autocommit; a statement is atomic): the guarded
     * UPDATE of the payment and, in a CTE member, the key's response. With an outbox event, the same
     * statement runs inside a transaction with the event's insert (under the payment's row lock, which
     * the UPDATE took: the event's number is the next one of this payment).
     */
    async complete (final, completion, event) {
      const finalized = event === undefined
        ? (await settle(pool, final, completion)).rows[0].finalized
        : await inTransaction(pool, 'READ COMMITTED', async (client) => {
          const done = (await settle(client, final, completion)).rows[0].finalized
          if (done) await appendEventOf(client, event, final)
          return done
        })
      // Read back only when another writer settled the payment first (then its outcome stands).
      if (finalized) return final
      const stored = await pool.query<PaymentRow>({ name: 'pay-get', text: 'SELECT * FROM payments WHERE id = $1', values: [final.id] })
      return paymentFromRow(stored.rows[0])
    },

    /*
     * Safe with every instance running the recovery worker:
     * 1. the candidates are locked with FOR UPDATE OF p SKIP LOCKED, so a payment that
     *    another instance is leasing right now is skipped, not waited for and never
     *    leased twice; one it leased a moment ago fails the re-checked lease condition;
     * 2. their keys are then locked (FOR UPDATE, briefly waiting for a claim in
     *    progress) and re-read, and a payment whose key a live request holds is left alone;
     * 3. the leased payments and their keys get the lease (keys answer 409 meanwhile,
     *    as in the SQLite store).
     * Locks are always taken payments first, then keys, as complete() does: no deadlock.
     */
    async leaseAbandoned (options) {
      return await inTransaction(pool, 'READ COMMITTED', async (client) => {
        const candidates = (await client.query<PaymentRow>({
          name: 'pay-lease-candidates',
          text: `SELECT p.* FROM payments p
            WHERE p.status = 'pending' AND p.created_at < $1
              AND (p.recovery_lease_until IS NULL OR p.recovery_lease_until <= $2)
              AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.resource_id = p.id AND k.locked_until > $2)
            ORDER BY p.created_at
            LIMIT $3
            FOR UPDATE OF p SKIP LOCKED`,
          values: [options.createdBefore, options.now, options.limit]
        })).rows
        if (candidates.length === 0) return []
        // No locked_until filter in the WHERE: a key that a claim is locking right now must
        // be waited for and judged on the version that claim commits.
        const keyRows = (await client.query<{ resource_id: string, locked_until: string | null }>({
          name: 'pay-lease-keys',
          text: `SELECT resource_id, locked_until FROM idempotency_keys
            WHERE resource_id = ANY($1::text[])
            ORDER BY scope, method, path, key
            FOR UPDATE`,
          values: [candidates.map((row) => row.id)]
        })).rows
        const held = new Set(keyRows
          .filter((row) => row.locked_until !== null && Number(row.locked_until) > options.now)
          .map((row) => row.resource_id))
        const leased = candidates.filter((row) => !held.has(row.id))
        if (leased.length === 0) return []
        const ids = leased.map((row) => row.id)
        await client.query({
          name: 'pay-lease',
          text: 'UPDATE payments SET recovery_lease_until = $2 WHERE id = ANY($1::text[])',
          values: [ids, options.leaseUntil]
        })
        await client.query({
          name: 'pay-lease-lock-keys',
          text: 'UPDATE idempotency_keys SET locked_until = $2 WHERE resource_id = ANY($1::text[])',
          values: [ids, options.leaseUntil]
        })
        return leased.map(paymentFromRow)
      })
    },

    async deferRecovery (id, notBefore) {
      await pool.query({
        name: 'pay-defer',
        text: "UPDATE payments SET recovery_lease_until = $2 WHERE id = $1 AND status = 'pending'",
        values: [id, notBefore]
      })
    },

    async list (query) {
      const page = await listPage<PaymentRow>('postgres', async (text, values) => (await pool.query<PaymentRow>(text, values)).rows, {
        table: 'payments',
        scope: { merchant_id: query.merchantId },
        filters: [['status', '=', query.status], ['created_at', '>=', query.createdGte], ['created_at', '<', query.createdLt]],
        page: query
      })
      return { data: page.data.map(paymentFromRow), hasMore: page.hasMore }
    },

    async count () {
      const { rows } = await pool.query<{ count: string }>({ name: 'pay-count', text: 'SELECT count(*) AS count FROM payments' })
      return Number(rows[0].count)
    },

    async countPending () {
      const { rows } = await pool.query<{ count: string }>({ name: 'pay-count-pending', text: "SELECT count(*) AS count FROM payments WHERE status = 'pending'" })
      return Number(rows[0].count)
    }
  }
}
