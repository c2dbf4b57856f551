import { ledgerEntryFromRow, type LedgerRow } from './rows'
import { sql, type SqlRunner } from './sql'
import type { LedgerEntry, LedgerStore } from './types'

/** The simulated gateway's ledger; SQLite's store queues its inserts differently (sqlite/ledger.ts). */
export const ledgerSql = {
  get: sql<{ idempotencyKey: string }, LedgerRow>('ledger-get')`SELECT * FROM gateway_ledger WHERE idempotency_key = ${'idempotencyKey'}`,
  /** Does nothing when the key has an entry already. */
  insert: sql<LedgerEntry & { createdAt: string }>('ledger-insert')`
    INSERT INTO gateway_ledger (idempotency_key, charge_id, amount_minor, currency, outcome, decline_code, created_at)
    VALUES (${'idempotencyKey'}, ${'chargeId'}, ${'amountMinor'}, ${'currency'}, ${'outcome'}, ${'declineCode'}, ${'createdAt'})
    ON CONFLICT (idempotency_key) DO NOTHING`,
  count: sql<Record<string, never>, { count: number | string }>('ledger-count')`SELECT count(*) AS count FROM gateway_ledger`
}

/**
 * The ledger as one statement per call (PostgreSQL). In READ COMMITTED a concurrent insert of the
 * same key makes ours wait and then do nothing, and the read that follows (a new snapshot) sees
 * whichever entry was committed first: exactly one charge per key. The usual case, our insert, is
 * one round trip.
 */
export function ledgerStore (db: SqlRunner): LedgerStore {
  const get = async (idempotencyKey: string): Promise<LedgerEntry | undefined> => {
    const row = await db.get(ledgerSql.get, { idempotencyKey })
    return row === undefined ? undefined : ledgerEntryFromRow(row)
  }
  return {
    get,
    async recordOnce (entry) {
      if (await db.write(ledgerSql.insert, { ...entry, createdAt: new Date().toISOString() }) === 1) return { ...entry }
      const stored = await get(entry.idempotencyKey)
      if (stored === undefined) throw new Error(`gateway ledger: the entry of ${entry.idempotencyKey} is neither new nor stored`)
      return stored
    },
    async count () {
      const row = await db.get(ledgerSql.count, {})
      return Number(row?.count ?? 0)
    }
  }
}
