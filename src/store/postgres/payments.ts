import type { KeyCompletion, Payment, PaymentStore } from '../types'
import { nextActionColumn, paymentFromRow, paymentMethodDetailsColumns, type PaymentRow } from '../rows'
import { paymentParams, paymentSql, sharedPaymentStore } from '../payments'
import type { NewEvent } from '../../domain/events'
import type { ConnectorCall } from '../../domain/connector-stats'
import { connectorSql } from '../connectors'
import { inTransaction, onlyRow, Params, statement, uniqueViolationOf, withMembers, type PgPool, type Queryable } from './connection'
import { keySql } from './idempotency'
import { EVENT_SEQUENCE_CONSTRAINT, eventMembers } from './events'
import { postgresRunner } from './runner'

/*
 * Every transaction here runs in READ COMMITTED. The writes are guarded by their
 * WHERE clauses, which PostgreSQL re-checks against the newest committed row
 * version after waiting for a concurrent writer (so of two completions only one
 * moves a payment out of 'pending'), and leaseAbandoned relies on FOR UPDATE …
 * SKIP LOCKED, which under REPEATABLE READ would fail with serialization errors
 * whenever another instance had just leased or settled a candidate.
 */
/** The guarded move out of 'pending' as a CTE member `f` (RETURNING the id when it moved the payment). */
function finalizeMember (p: Params, final: Payment, from: string): string {
  const method = paymentMethodDetailsColumns(final)
  return `f AS (UPDATE payments
    SET status = ${p.add(final.status)}, decline_code = ${p.add(final.declineCode)}, failure_code = ${p.add(final.failureCode)}, updated_at = ${p.add(final.updatedAt)}, recovery_lease_until = NULL,
      amount_captured_minor = ${p.add(final.amountCapturedMinor)}, cancellation_reason = ${p.add(final.cancellationReason)},
      connector_id = ${p.add(final.connector.id)}, connector_type = ${p.add(final.connector.type)},
      connector_reference = ${p.add(final.connectorReference)}, attempts = ${p.add(JSON.stringify(final.attempts))},
      payment_method_details = ${p.add(method.details)}, card_last4 = ${p.add(method.last4)},
      next_action = ${p.add(nextActionColumn(final))}, checkout_data = NULL
    WHERE id = ${p.add(final.id)} AND status = ${p.add(from)} RETURNING id)`
}

/** How often a completion is retried when its event's number clashed with one committed while it waited for the payment's lock. */
const EVENT_CLASH_ATTEMPTS = 5

/**
 * Moves the payment out of 'pending' (guarded), with `completion` finishes its key, with `event`
 * writes the event and its deliveries only if this statement moved the payment, and with `call` the
 * charge call's log row: ONE statement, one round trip and one commit (autocommit; a statement is
 * atomic). The main query reads `f`, so the payment's row lock is taken before the key's, as everywhere else.
 */
async function settle (db: Queryable, final: Payment, completion: KeyCompletion | undefined, event: NewEvent | undefined, from: string,
  call: ConnectorCall | undefined): Promise<boolean> {
  const p = new Params()
  const members = [finalizeMember(p, final, from)]
  if (call !== undefined) members.push(`c AS (${p.embed(connectorSql.recordAttempt, call)})`)
  if (completion !== undefined) members.push(`k AS (${keySql.finish(p, completion.ref, completion.response)})`)
  if (event !== undefined) members.push(...eventMembers(p, event, 'EXISTS (SELECT 1 FROM f)'))
  const { rows } = await db.query<{ finalized: boolean }>(statement(withMembers(members, 'SELECT EXISTS (SELECT 1 FROM f) AS finalized'), p.values))
  return onlyRow(rows, 'the payment completion').finalized
}

export function postgresPaymentStore (pool: PgPool): PaymentStore {
  const db = postgresRunner(pool)
  return {
    ...sharedPaymentStore(db),
    /* One statement (autocommit): the insert and, with a key, the key's recovery point. */
    async create (payment, key) {
      const p = new Params()
      const insert = p.embed(paymentSql.insert, paymentParams(payment))
      const text = key === undefined ? insert : withMembers([`p AS (${insert})`], keySql.markResourceCreated(p, key, payment.id))
      await pool.query(statement(text, p.values))
    },

    /*
     * One statement (see settle). Its snapshot is taken before it waits for the payment's lock, so
     * when a concurrent writer numbered an event of this payment meanwhile (payment.pending), the
     * event's number clashes on the unique index, the whole statement fails and nothing was written:
     * it runs again on a fresh snapshot.
     */
    async complete (final, completion, makeEvent, from = 'pending', call) {
      const event = makeEvent?.(final)
      let finalized: boolean | undefined
      for (let attempt = 1; finalized === undefined; attempt++) {
        try {
          finalized = await settle(pool, final, completion, event, from, call)
        } catch (err) {
          if (attempt >= EVENT_CLASH_ATTEMPTS || uniqueViolationOf(err) !== EVENT_SEQUENCE_CONSTRAINT) throw err
        }
      }
      // Read back only when another writer settled the payment first (then its outcome stands).
      if (finalized) return final
      const stored = await db.get(paymentSql.get, { id: final.id })
      if (stored === undefined) throw new Error(`payment ${final.id} to complete does not exist`)
      return paymentFromRow(stored)
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
          text: 'UPDATE idempotency_keys SET locked_until = $2, locked_by = NULL WHERE resource_id = ANY($1::text[])',
          values: [ids, options.leaseUntil]
        })
        return leased.map(paymentFromRow)
      })
    }
  }
}
