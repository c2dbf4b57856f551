import { listPage } from './listing'
import { PAYMENT_COLUMNS, paymentFromRow, paymentValues, type PaymentRow } from './rows'
import { columnParams, insertSql, sql, type SqlRunner } from './sql'
import type { Payment, PaymentStore } from './types'
import type { DailyFigures } from '../domain/payment-summary'
import { moneyHeldBy } from '../domain/payments'
import { normalizedEmail } from '../domain/customers'
import { CURRENCY_MINOR_UNITS } from '../domain/currencies'
import { decimalPlaces, toMinorUnits } from '../domain/money'

interface SummaryRange { merchantId: string, createdGte: string, createdLt: string }
interface DailyRow { day: string, currency: string, count: number | string, amount_minor: number | string }

export const paymentSql = {
  /** A new payment (its creation, with its key's recovery point, is each dialect's one transaction or statement). */
  insert: insertSql('pay-insert', 'payments', PAYMENT_COLUMNS),
  get: sql<{ id: string }, PaymentRow>('pay-get')`SELECT * FROM payments WHERE id = ${'id'}`,
  deferRecovery: sql<{ id: string, notBefore: number }>('pay-defer')`
    UPDATE payments SET recovery_lease_until = ${'notBefore'} WHERE id = ${'id'} AND status = 'pending'`,
  recordAttempts: sql<{ id: string, connectorId: string | null, connectorType: string, attempts: string, updatedAt: string }>('pay-attempts')`
    UPDATE payments SET connector_id = ${'connectorId'}, connector_type = ${'connectorType'}, attempts = ${'attempts'}, updated_at = ${'updatedAt'}
    WHERE id = ${'id'} AND status = 'pending'`,
  appendAttempt: sql<{ id: string, previous: string, attempts: string, updatedAt: string, held: number }>('pay-append-attempt')`
    UPDATE payments SET attempts = ${'attempts'}, updated_at = ${'updatedAt'}, money_held = ${'held'} WHERE id = ${'id'} AND attempts = ${'previous'}`,
  withMoneyHeld: sql<{ limit: number }, PaymentRow>('pay-money-held')`
    SELECT * FROM payments WHERE money_held = 1 ORDER BY updated_at LIMIT ${'limit'}`,
  byConnectorReference: sql<{ connectorId: string, reference: string }, PaymentRow>('pay-by-reference')`
    SELECT * FROM payments WHERE connector_reference = ${'reference'} AND connector_id = ${'connectorId'}`,
  // Attempts are JSON text on both databases: a scan, asked only for a charge no payment has as its own (rare).
  heldCharge: sql<{ pattern: string }, PaymentRow>('pay-by-held-charge')`
    SELECT * FROM payments WHERE attempts LIKE ${'pattern'} ESCAPE '!' ORDER BY created_at LIMIT 20`,
  byActionToken: sql<{ token: string }, PaymentRow>('pay-by-action-token')`SELECT * FROM payments WHERE action_token = ${'token'}`,
  awaitingAction: sql<{ updatedBefore: string, limit: number }, PaymentRow>('pay-awaiting-action')`
    SELECT * FROM payments WHERE status = 'requires_action' AND updated_at < ${'updatedBefore'} ORDER BY updated_at LIMIT ${'limit'}`,
  count: sql<Record<string, never>, { count: number | string }>('pay-count')`SELECT count(*) AS count FROM payments`,
  countPending: sql<Record<string, never>, { count: number | string }>('pay-count-pending')`SELECT count(*) AS count FROM payments WHERE status = 'pending'`,
  // ISO-8601 text on both databases: its first 10 characters are the UTC day. Captured money counts (a
  // partial capture is what was charged); refunded payments still count as succeeded on their day.
  dailySucceeded: sql<SummaryRange, DailyRow>('pay-daily-succeeded')`
    SELECT substr(created_at, 1, 10) AS day, currency, count(*) AS count, sum(amount_captured_minor) AS amount_minor FROM payments
    WHERE merchant_id = ${'merchantId'} AND created_at >= ${'createdGte'} AND created_at < ${'createdLt'}
      AND status IN ('succeeded', 'partially_refunded', 'refunded')
    GROUP BY substr(created_at, 1, 10), currency`,
  dailyDeclined: sql<SummaryRange, DailyRow>('pay-daily-declined')`
    SELECT substr(created_at, 1, 10) AS day, currency, count(*) AS count, sum(amount_minor) AS amount_minor FROM payments
    WHERE merchant_id = ${'merchantId'} AND status = 'declined' AND created_at >= ${'createdGte'} AND created_at < ${'createdLt'}
    GROUP BY substr(created_at, 1, 10), currency`,
  // A succeeded refund is final, so its updated_at is when it succeeded. It follows its payment, so only
  // the merchant's payments created before the range's end are joined (their index bounds the scan).
  dailyRefunded: sql<SummaryRange, DailyRow>('pay-daily-refunded')`
    SELECT substr(r.updated_at, 1, 10) AS day, r.currency, count(*) AS count, sum(r.amount_minor) AS amount_minor
    FROM payments p JOIN refunds r ON r.payment_id = p.id
    WHERE p.merchant_id = ${'merchantId'} AND p.created_at < ${'createdLt'}
      AND r.status = 'succeeded' AND r.updated_at >= ${'createdGte'} AND r.updated_at < ${'createdLt'}
    GROUP BY substr(r.updated_at, 1, 10), r.currency`
}

export const paymentParams = (payment: Payment): Record<typeof PAYMENT_COLUMNS[number], unknown> => columnParams(PAYMENT_COLUMNS, paymentValues(payment))

/** The currencies by exponent, those of exponent 2 (most) left out: they are "every other currency". */
const currenciesByExponent = new Map<number, string[]>()
for (const [code, exponent] of Object.entries(CURRENCY_MINOR_UNITS)) {
  if (exponent !== 2) currenciesByExponent.set(exponent, [...(currenciesByExponent.get(exponent) ?? []), code])
}
const notExponent2 = [...currenciesByExponent.values()].flat()

/**
 * Payments of exactly `amount` major units in their own currency: one term per currency exponent the amount
 * can be written in (35 → USD 3500, JPY 35, BHD 35000; 10.5 → not JPY). An amount no currency can take matches nothing.
 */
function amountCondition (amount: number): (param: (value: unknown) => string) => string {
  return (param) => {
    const terms: string[] = []
    const places = decimalPlaces(amount)
    for (const [exponent, codes] of currenciesByExponent) {
      if (places <= exponent) terms.push(`(amount_minor = ${param(toMinorUnits(amount, exponent))} AND currency IN (${codes.map(param).join(', ')}))`)
    }
    if (places <= 2) terms.push(`(amount_minor = ${param(toMinorUnits(amount, 2))} AND currency NOT IN (${notExponent2.map(param).join(', ')}))`)
    return terms.length === 0 ? '1 = 0' : `(${terms.join(' OR ')})`
  }
}

function dailyFigures (rows: DailyRow[]): DailyFigures[] {
  return rows.map((row) => ({ day: row.day, currency: row.currency, count: Number(row.count), amountMinor: Number(row.amount_minor) }))
}

/** The payment store's one-statement methods, the same on both databases (its transactions are each dialect's own). */
export function sharedPaymentStore (db: SqlRunner): Pick<PaymentStore, 'get' | 'deferRecovery' | 'list' | 'count' | 'countPending' | 'recordAttempts' | 'appendAttempt' | 'withMoneyHeld' | 'dailySummary' | 'findByConnectorReference' | 'findHoldingCharge' | 'findByActionToken' | 'awaitingAction'> {
  return {
    async get (id) {
      const row = await db.get(paymentSql.get, { id })
      return row === undefined ? undefined : paymentFromRow(row)
    },
    async deferRecovery (id, notBefore) { await db.write(paymentSql.deferRecovery, { id, notBefore }) },
    async recordAttempts (payment) {
      const changes = await db.write(paymentSql.recordAttempts, {
        id: payment.id, connectorId: payment.connector.id, connectorType: payment.connector.type, attempts: JSON.stringify(payment.attempts), updatedAt: payment.updatedAt
      })
      return changes === 1
    },
    async appendAttempt (payment, attempt) {
      const attempts = [...payment.attempts, attempt]
      const changes = await db.write(paymentSql.appendAttempt, {
        id: payment.id, previous: JSON.stringify(payment.attempts), attempts: JSON.stringify(attempts), updatedAt: attempt.at, held: moneyHeldBy(attempts).length > 0 ? 1 : 0
      })
      return changes === 1
    },
    async withMoneyHeld (limit) {
      return (await db.all(paymentSql.withMoneyHeld, { limit })).map(paymentFromRow)
    },
    async findByConnectorReference (connectorId, reference) {
      const row = await db.get(paymentSql.byConnectorReference, { connectorId, reference })
      return row === undefined ? undefined : paymentFromRow(row)
    },
    async findHoldingCharge (connectorId, reference) {
      const pattern = `%${JSON.stringify({ connectorReference: reference }).slice(1, -1).replace(/[!%_]/g, '!$&')}%`
      const rows = (await db.all(paymentSql.heldCharge, { pattern })).map(paymentFromRow)
      return rows.find((payment) => payment.attempts.some((attempt) => attempt.outcome === 'held' && attempt.connectorId === connectorId && attempt.connectorReference === reference))
    },
    async findByActionToken (token) {
      const row = await db.get(paymentSql.byActionToken, { token })
      return row === undefined ? undefined : paymentFromRow(row)
    },
    async awaitingAction (options) {
      return (await db.all(paymentSql.awaitingAction, options)).map(paymentFromRow)
    },
    async list (query) {
      const page = await listPage<PaymentRow>(db, {
        table: 'payments',
        scope: { merchant_id: query.merchantId },
        filters: {
          status: query.status,
          customer_email: query.customerEmail === undefined ? undefined : normalizedEmail(query.customerEmail),
          card_last4: query.last4
        },
        created: query,
        ...(query.metadata === undefined ? {} : { jsonEntry: { column: 'metadata', ...query.metadata } }),
        ...(query.amount === undefined ? {} : { conditions: [amountCondition(query.amount)] }),
        page: query
      })
      return { data: page.data.map(paymentFromRow), hasMore: page.hasMore }
    },
    async dailySummary (range) {
      const [succeeded, declined, refunded] = await Promise.all([
        db.all(paymentSql.dailySucceeded, range), db.all(paymentSql.dailyDeclined, range), db.all(paymentSql.dailyRefunded, range)
      ])
      return { succeeded: dailyFigures(succeeded), declined: dailyFigures(declined), refunded: dailyFigures(refunded) }
    },
    async count () { return Number((await db.get(paymentSql.count, {}))?.count ?? 0) },
    async countPending () { return Number((await db.get(paymentSql.countPending, {}))?.count ?? 0) }
  }
}
