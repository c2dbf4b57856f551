import { listPage } from './listing'
import { DISPUTE_COLUMNS, disputeFromRow, disputeValues, type DisputeRow } from './rows'
import { raw, sql, type SqlRunner } from './sql'
import type { DisputeStore } from './types'
import type { Dispute } from '../domain/disputes'
import type { Payment } from '../domain/payments'

const UPDATED_COLUMNS = DISPUTE_COLUMNS.filter((column) => !['id', 'merchant_id', 'payment_id', 'connector_id', 'connector_type', 'connector_reference', 'created_at'].includes(column))

type DisputeParams = Record<typeof DISPUTE_COLUMNS[number], unknown>

/** The dispute store's statements, written once: the writes run inside each dialect's transaction (see sqlite/ and postgres/disputes.ts). */
export const disputeSql = {
  get: sql<{ id: string }, DisputeRow>('dispute-get')`SELECT * FROM disputes WHERE id = ${'id'}`,
  forPayment: sql<{ paymentId: string }, DisputeRow>('dispute-for-payment')`SELECT * FROM disputes WHERE payment_id = ${'paymentId'} ORDER BY created_at, id`,
  /* A new dispute, or the recorded one's changing members (the PSP's reference is unique per connector account). */
  upsert: sql<DisputeParams, never>('dispute-upsert')`
    INSERT INTO disputes (${raw(DISPUTE_COLUMNS.join(', '))})
    VALUES (${'id'}, ${'merchant_id'}, ${'payment_id'}, ${'amount_minor'}, ${'currency'}, ${'reason'}, ${'status'}, ${'funds_withdrawn'}, ${'evidence_due_by'},
      ${'connector_id'}, ${'connector_type'}, ${'connector_reference'}, ${'stage'}, ${'funds_stage'}, ${'created_at'}, ${'updated_at'})
    ON CONFLICT (id) DO UPDATE SET ${raw(UPDATED_COLUMNS.map((column) => `${column} = excluded.${column}`).join(', '))}`,
  savePayment: sql<{ id: string, amountDisputedMinor: number | null, disputeOpen: number, updatedAt: string }>('dispute-payment')`
    UPDATE payments SET amount_disputed_minor = ${'amountDisputedMinor'}, dispute_open = ${'disputeOpen'}, updated_at = ${'updatedAt'} WHERE id = ${'id'}`
}

export function disputeParams (dispute: Dispute): DisputeParams {
  const values = disputeValues(dispute)
  return Object.fromEntries(DISPUTE_COLUMNS.map((column, i) => [column, values[i]])) as DisputeParams
}

export function disputePaymentParams (payment: Payment): { id: string, amountDisputedMinor: number | null, disputeOpen: number, updatedAt: string } {
  return { id: payment.id, amountDisputedMinor: payment.amountDisputedMinor ?? null, disputeOpen: payment.disputeOpen === true ? 1 : 0, updatedAt: payment.updatedAt }
}

/** The dispute store's reads, the same on both databases. */
export function sharedDisputeStore (db: SqlRunner): Pick<DisputeStore, 'get' | 'list' | 'listForPayment'> {
  return {
    async get (id) {
      const row = await db.get(disputeSql.get, { id })
      return row === undefined ? undefined : disputeFromRow(row)
    },
    async list (query) {
      const result = await listPage<DisputeRow>(db, {
        table: 'disputes', scope: { merchant_id: query.merchantId }, filters: { status: query.status, payment_id: query.paymentId }, page: query
      })
      return { data: result.data.map(disputeFromRow), hasMore: result.hasMore }
    },
    async listForPayment (paymentId) {
      return (await db.all(disputeSql.forPayment, { paymentId })).map(disputeFromRow)
    }
  }
}
