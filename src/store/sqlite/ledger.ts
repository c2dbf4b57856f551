import type { LedgerEntry, LedgerStore } from '../types'
import { ledgerEntryFromRow } from '../rows'
import { ledgerSql } from '../ledger'
import { prepare } from './runner'
import type { SqliteHandle } from './connection'
import { immediateWrites, type WriteQueue } from './group-commit'

/**
 * The simulated gateway's ledger stands in for a remote system's own storage, so recording a charge
 * must not cost the service a commit of its own: `recordOnce` decides at once (entries decided but not
 * yet committed are held in memory, at most as many as writes are queued) and queues the insert in the
 * group commit without waiting for it. The insert is queued before the payment's completion, so it
 * commits in the same batch (usually) or an earlier one, and a crash before that commit loses both
 * (the payment stays pending and is charged again, once). The one difference from an awaited write:
 * when the ledger's batch fails (disk full) and a later one with the completion succeeds, the payment
 * is settled without its ledger entry, like a remote gateway that lost its record of a charge.
 */
export function sqliteLedgerStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): LedgerStore {
  const select = prepare(db, ledgerSql.get)
  const insert = prepare(db, ledgerSql.insert)
  const count = prepare(db, ledgerSql.count)
  /** Entries decided whose insert is queued, not yet committed (deleted once it settles), and those inserts. */
  const uncommitted = new Map<string, LedgerEntry>()
  const inserts = new Set<Promise<void>>()
  const find = (key: string): LedgerEntry | undefined => {
    const held = uncommitted.get(key)
    if (held !== undefined) return { ...held }
    const row = select.get({ idempotencyKey: key })
    return row === undefined ? undefined : ledgerEntryFromRow(row)
  }
  return {
    async get (key) { return find(key) },
    async recordOnce (entry) {
      const existing = find(entry.idempotencyKey)
      if (existing !== undefined) return existing
      uncommitted.set(entry.idempotencyKey, { ...entry })
      const row = { ...entry, createdAt: new Date().toISOString() }
      // Not awaited (see above); the caller learns nothing more from the commit than from the decision.
      const written: Promise<void> = writes.runStatement(() => insert.run(row))
        .then(() => {}, () => {})
        .finally(() => {
          uncommitted.delete(entry.idempotencyKey)
          inserts.delete(written)
        })
      inserts.add(written)
      return { ...entry }
    },
    // After the queued inserts have settled: the entries committed.
    async count () {
      await Promise.all(inserts)
      return Number(count.get({})?.count ?? 0)
    }
  }
}
