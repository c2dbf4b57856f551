import t, { type Test } from 'tap'
import { migrateSqlite, openSqlite } from '../../../src/store/sqlite/connection'
import { sqliteMigrations } from '../../../src/store/sqlite/migrations'
import { groupCommit } from '../../../src/store/sqlite/group-commit'
import { sqliteLedgerStore } from '../../../src/store/sqlite/ledger'
import type { LedgerEntry } from '../../../src/store/types'

async function setup (t: Test) {
  const db = openSqlite('file::memory:', { synchronous: 'FULL' })
  await migrateSqlite(db, sqliteMigrations)
  t.teardown(() => { db.close() })
  const writes = groupCommit(db)
  const stored = (key: string): unknown => db.prepare('SELECT charge_id FROM gateway_ledger WHERE idempotency_key = ?').pluck().get(key)
  return { db, writes, ledger: sqliteLedgerStore(db, writes), stored }
}

const entry = (overrides: Partial<LedgerEntry> = {}): LedgerEntry => ({
  idempotencyKey: 'payment-1', chargeId: 'ch_1', amountMinor: 100, currency: 'USD', outcome: 'succeeded', declineCode: null, ...overrides
})

t.test('recordOnce decides at once and queues its insert in the next group commit, before later writes', async (t) => {
  const { db, writes, ledger, stored } = await setup(t)
  t.same(await ledger.recordOnce(entry()), entry())
  t.equal(stored('payment-1'), undefined, 'not committed yet: the caller did not wait for a commit')
  t.same(await ledger.get('payment-1'), entry(), 'but every reader of this instance sees it')
  t.same(await ledger.recordOnce(entry({ chargeId: 'ch_2', amountMinor: 999 })), entry(), 'a second charge under the key gets the first')
  // A write queued after the charge (the payment's completion) commits with it or later, never before it.
  const seen = await writes.run(() => db.prepare('SELECT count(*) FROM gateway_ledger').pluck().get())
  t.equal(seen, 1, 'the ledger insert ran before the write queued after it, in the same commit')
  t.equal(stored('payment-1'), 'ch_1')
  t.equal(await ledger.count(), 1)
  t.same(await ledger.recordOnce(entry({ chargeId: 'ch_3' })), entry(), 'after the commit the stored entry answers')
})

t.test('count waits for the queued inserts', async (t) => {
  const { ledger } = await setup(t)
  await ledger.recordOnce(entry({ idempotencyKey: 'a' }))
  await ledger.recordOnce(entry({ idempotencyKey: 'b' }))
  t.equal(await ledger.count(), 2)
})

t.test('a failed insert is forgotten: the key can be charged again', async (t) => {
  const { db, ledger, stored } = await setup(t)
  db.exec("CREATE TRIGGER refuse BEFORE INSERT ON gateway_ledger WHEN NEW.idempotency_key = 'doomed' BEGIN SELECT RAISE(ABORT, 'refused'); END")
  await ledger.recordOnce(entry({ idempotencyKey: 'doomed' }))
  t.equal(await ledger.count(), 0, 'nothing committed')
  t.equal(await ledger.get('doomed'), undefined, 'and nothing remembered')
  db.exec('DROP TRIGGER refuse')
  t.same(await ledger.recordOnce(entry({ idempotencyKey: 'doomed', chargeId: 'ch_again' })), entry({ idempotencyKey: 'doomed', chargeId: 'ch_again' }))
  await ledger.count()
  t.equal(stored('doomed'), 'ch_again')
})
