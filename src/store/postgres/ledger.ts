import type { LedgerStore } from '../types'
import { ledgerEntryFromRow, type LedgerRow } from '../rows'
import type { PgPool } from './connection'

export function postgresLedgerStore (pool: PgPool): LedgerStore {
  const get = async (key: string): Promise<LedgerRow | undefined> =>
    (await pool.query<LedgerRow>({ name: 'ledger-get', text: 'SELECT * FROM gateway_ledger WHERE idempotency_key = $1', values: [key] })).rows[0]
  return {
    async get (key) {
      const row = await get(key)
      return row === undefined ? undefined : ledgerEntryFromRow(row)
    },
    /*
     * Autocommit statements in READ COMMITTED: a concurrent insert of the same key
     * makes ours wait and then do nothing (no row returned), and the SELECT that follows
     * (a new snapshot) sees whichever entry was committed first. Exactly one charge per key.
     * The usual case, our insert, is one round trip.
     */
    async recordOnce (entry) {
      const inserted = await pool.query({
        name: 'ledger-insert',
        text: `INSERT INTO gateway_ledger (idempotency_key, charge_id, amount_minor, currency, outcome, decline_code, created_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7)
          ON CONFLICT (idempotency_key) DO NOTHING
          RETURNING idempotency_key`,
        values: [entry.idempotencyKey, entry.chargeId, entry.amountMinor, entry.currency, entry.outcome, entry.declineCode, new Date().toISOString()]
      })
      if (inserted.rowCount === 1) return { ...entry }
      return ledgerEntryFromRow(await get(entry.idempotencyKey) as LedgerRow)
    },
    async count () {
      const { rows } = await pool.query<{ count: string }>({ name: 'ledger-count', text: 'SELECT count(*) AS count FROM gateway_ledger' })
      return Number(rows[0].count)
    }
  }
}
