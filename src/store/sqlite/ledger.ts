import type { LedgerStore } from '../types'
import { ledgerEntryFromRow, type LedgerRow } from '../rows'
import type { SqliteHandle } from './connection'
import { immediateWrites, type WriteQueue } from './group-commit'

export function sqliteLedgerStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): LedgerStore {
  const select = db.prepare<[string], LedgerRow>('SELECT * FROM gateway_ledger WHERE idempotency_key = ?')
  const insert = db.prepare(`
    INSERT INTO gateway_ledger (idempotency_key, charge_id, amount_minor, currency, outcome, decline_code, created_at)
    VALUES (@idempotencyKey, @chargeId, @amountMinor, @currency, @outcome, @declineCode, @createdAt)
    ON CONFLICT (idempotency_key) DO NOTHING`)
  const count = db.prepare('SELECT count(*) FROM gateway_ledger').pluck()
  return {
    async get (key) {
      const row = select.get(key)
      return row === undefined ? undefined : ledgerEntryFromRow(row)
    },
    async recordOnce (entry) {
      const row = { ...entry, createdAt: new Date().toISOString() }
      return await writes.run(() => {
        if (insert.run(row).changes === 1) return { ...entry }
        return ledgerEntryFromRow(select.get(entry.idempotencyKey) as LedgerRow)
      })
    },
    async count () { return count.get() as number }
  }
}
