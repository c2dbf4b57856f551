import t, { type Test } from 'tap'
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqlite, type SqliteHandle } from '../../../src/store/sqlite/connection'
import { groupCommit, immediateWrites } from '../../../src/store/sqlite/group-commit'
import { auditEntry, auditing } from '../../../src/store/audit-scope'
import type { AuditDraft } from '../../../src/domain/audit'

function database (t: Test): SqliteHandle {
  const db = openSqlite('file::memory:', { synchronous: 'FULL' })
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)')
  t.teardown(() => { if (db.open) db.close() })
  return db
}

const names = (db: SqliteHandle): string[] => db.prepare('SELECT name FROM items ORDER BY id').pluck().all() as string[]

t.test('writes of one turn share one transaction, run in call order, and settle after COMMIT', async (t) => {
  const db = database(t)
  const writes = groupCommit(db)
  const insert = db.prepare('INSERT INTO items (name) VALUES (?)')
  const commits: number[] = []
  const seenInside: boolean[] = []
  const results = await Promise.all(['a', 'b', 'c'].map(async (name, i) => {
    const value = await writes.run(() => {
      seenInside.push(db.inTransaction)
      insert.run(name)
      return names(db).length
    })
    commits.push(i)
    t.equal(db.inTransaction, false, 'nobody hears back before the commit')
    return value
  }))
  t.same(results, [1, 2, 3], 'each write sees the ones queued before it')
  t.same(seenInside, [true, true, true])
  t.same(names(db), ['a', 'b', 'c'])
})

t.test('each write of a batch owes the audit entry of the request that queued it, or none when it was queued outside one', async (t) => {
  const db = database(t)
  const writes = groupCommit(db)
  const draft = (action: string): AuditDraft =>
    ({ actor: { type: 'system', id: 'test', label: 'test' }, action, merchantId: null, requestId: action, ip: null, userAgent: null })
  const owed = () => auditEntry(null)?.action ?? 'none'
  // The batch runs in the async context of its first writer (a request); the second write was queued by background work.
  const seen = await Promise.all([
    auditing(draft('first.request'), () => 0, async () => await writes.run(owed)),
    writes.run(owed),
    auditing(draft('second.request'), () => 0, async () => await writes.run(owed))
  ])
  t.same(seen, ['first.request', 'none', 'second.request'])
})

t.test('a failing write rolls back alone; the others of the batch commit', async (t) => {
  const db = database(t)
  const writes = groupCommit(db)
  const insert = db.prepare('INSERT INTO items (name) VALUES (?)')
  const outcomes = await Promise.allSettled([
    writes.run(() => insert.run('a')),
    writes.run(() => { insert.run('half'); insert.run('a') }),
    writes.run(() => insert.run('b'))
  ])
  t.same(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.match(String((outcomes[1] as PromiseRejectedResult).reason), /UNIQUE/)
  t.same(names(db), ['a', 'b'], 'the failed write left nothing behind, not even its first statement')
})

t.test('a single statement joins the batch; one that fails undoes only itself, the others commit', async (t) => {
  const db = database(t)
  const writes = groupCommit(db)
  const insert = db.prepare('INSERT INTO items (name) VALUES (?)')
  // Several rows in one statement: the failing one leaves none of them (SQLite's statement journal).
  const insertMany = db.prepare('INSERT INTO items (name) SELECT value FROM json_each(?)')
  const outcomes = await Promise.allSettled([
    writes.runStatement(() => insert.run('a').changes),
    writes.runStatement(() => insertMany.run(JSON.stringify(['x', 'y', 'a'])).changes),
    writes.run(() => { insert.run('b') }),
    writes.runStatement(() => insert.run('c').changes)
  ])
  t.same(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'])
  t.match(String((outcomes[1] as PromiseRejectedResult).reason), /UNIQUE/)
  t.same(names(db), ['a', 'b', 'c'], 'the failed statement left none of its rows; the batch committed the rest')
  t.equal(await immediateWrites(db).runStatement(() => insert.run('d').changes), 1, 'immediateWrites runs a statement as any write')
  t.same(names(db), ['a', 'b', 'c', 'd'])
})

t.test('a failed COMMIT fails every write of the batch and leaves nothing', async (t) => {
  const db = database(t)
  db.exec('CREATE TABLE parents (id INTEGER PRIMARY KEY); CREATE TABLE children (parent INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)')
  const writes = groupCommit(db)
  const outcomes = await Promise.allSettled([
    writes.run(() => db.prepare('INSERT INTO items (name) VALUES (?)').run('kept?')),
    // A deferred foreign key is only checked at COMMIT, which then fails.
    writes.run(() => db.prepare('INSERT INTO children (parent) VALUES (42)').run())
  ])
  t.same(outcomes.map((o) => o.status), ['rejected', 'rejected'])
  t.match(String((outcomes[0] as PromiseRejectedResult).reason), /FOREIGN KEY/)
  t.equal(db.inTransaction, false)
  t.same(names(db), [])
  t.equal(await writes.run(() => names(db).length), 0, 'the queue keeps working afterwards')
})

t.test('flush commits what is queued at once, e.g. before close', async (t) => {
  const db = database(t)
  const writes = groupCommit(db)
  const done = writes.run(() => db.prepare('INSERT INTO items (name) VALUES (?)').run('now'))
  t.same(names(db), [], 'queued, not yet run')
  writes.flush()
  t.same(names(db), ['now'])
  db.close()
  await done
  writes.flush()
})

t.test('writes are durable across a reopen once acknowledged', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'group-commit-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const url = `file:${join(dir, 'db.sqlite')}`
  const db = openSqlite(url, { synchronous: 'FULL' })
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)')
  const writes = groupCommit(db)
  await Promise.all(Array.from({ length: 20 }, async (_, i) => await writes.run(() => db.prepare('INSERT INTO items (name) VALUES (?)').run(`n${i}`))))
  db.close()
  const reopened = openSqlite(url, { synchronous: 'FULL' })
  t.teardown(() => { reopened.close() })
  t.equal(reopened.prepare('SELECT count(*) FROM items').pluck().get(), 20)
})

t.test('immediateWrites commits each write on its own, at once', async (t) => {
  const db = database(t)
  const writes = immediateWrites(db)
  const insert = db.prepare('INSERT INTO items (name) VALUES (?)')
  const pending = writes.run(() => { t.equal(db.inTransaction, true); return insert.run('x').changes })
  t.same(names(db), ['x'], 'already committed when run() returns')
  t.equal(await pending, 1)
  await t.rejects(writes.run(() => { insert.run('y'); insert.run('x') }), /UNIQUE/)
  t.same(names(db), ['x'])
  writes.flush()
})

/**
 * SQLITE_FULL for real and fast, without a full disk: `max_page_count` caps the database file, and a
 * statement that needs a page beyond it fails with SQLITE_FULL. Like a full disk during a statement,
 * SQLite then rolls back the WHOLE transaction (there is no statement journal to undo the statement alone).
 */
function capped (db: SqliteHandle): string {
  db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true })) + 2}`)
  return 'x'.repeat(100_000) // needs some 25 new pages
}

t.test('a write after which SQLite rolled back the whole transaction (SQLITE_FULL): nothing of the batch runs outside a transaction', async (t) => {
  const db = database(t)
  const insert = db.prepare('INSERT INTO items (name) VALUES (?)')
  insert.run('seed') // the table's first page exists
  const huge = capped(db)
  const writes = groupCommit(db)
  const outcomes = await Promise.allSettled([
    writes.run(() => insert.run('before')),
    writes.run(() => insert.run(huge)),
    writes.run(() => insert.run('after'))
  ])
  t.same(outcomes.map((o) => o.status), ['rejected', 'rejected', 'fulfilled'],
    'the write before it was undone with the transaction (rejected), the one after it ran in a new batch (committed)')
  t.match((outcomes[0] as PromiseRejectedResult).reason, { code: 'SQLITE_FULL' }, 'the earlier write hears why it was undone')
  t.match((outcomes[1] as PromiseRejectedResult).reason, { code: 'SQLITE_FULL' })
  t.same(names(db), ['seed', 'after'], 'every answer matches the database: what was acknowledged is stored, nothing else')
  t.equal(db.inTransaction, false)
  t.equal(await writes.run(() => insert.run('later').changes), 1, 'the queue keeps working afterwards')
})

t.test('a ROLLBACK that fails still rejects the batch, and the transaction it left open is rolled back before the next', async (t) => {
  const real = database(t)
  real.exec('CREATE TABLE parents (id INTEGER PRIMARY KEY); CREATE TABLE children (parent INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)')
  // A fault-injecting handle: the first ROLLBACK fails as on a disk that has just gone bad.
  let failRollbacks = 1
  const db = new Proxy(real, {
    get (target, name) {
      if (name === 'exec') {
        return (sql: string) => {
          if (sql === 'ROLLBACK' && failRollbacks-- > 0) throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' })
          return target.exec(sql)
        }
      }
      const member = Reflect.get(target, name, target) as unknown
      return typeof member === 'function' ? member.bind(target) : member
    }
  })
  const writes = groupCommit(db)
  const settled = Promise.allSettled([
    writes.run(() => real.prepare('INSERT INTO items (name) VALUES (?)').run('kept?')),
    writes.run(() => real.prepare('INSERT INTO children (parent) VALUES (42)').run()) // the COMMIT fails
  ])
  const outcomes = await Promise.race([settled, new Promise<'hang'>((resolve) => setTimeout(() => { resolve('hang') }, 2000))])
  if (outcomes === 'hang') {
    t.fail('the batch never settled')
    return
  }
  t.same(outcomes.map((o) => o.status), ['rejected', 'rejected'], 'both writes hear the COMMIT failed')
  t.match((outcomes[0] as PromiseRejectedResult).reason, /FOREIGN KEY/)
  t.equal(real.inTransaction, true, 'the failed ROLLBACK left the transaction open')
  t.equal(await writes.run(() => real.prepare('INSERT INTO items (name) VALUES (?)').run('next').changes), 1,
    'the next batch rolls the leftover back first and commits')
  t.same(names(real), ['next'], 'nothing of the failed batch was committed')
  t.equal(real.inTransaction, false)

  // A leftover that cannot be rolled back either: that batch fails with the ROLLBACK's own error (a 503)
  // and runs nothing; the rollback is tried once more on the way out.
  real.exec('BEGIN')
  failRollbacks = 1
  await t.rejects(writes.run(() => real.prepare('INSERT INTO items (name) VALUES (?)').run('not run')), { code: 'SQLITE_IOERR' })
  t.equal(real.inTransaction, false)
  t.same(names(real), ['next'])
})

t.test('savepoint journals stay in memory: no temporary file however much a batch rewrites, and a failed write still rolls back alone', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'group-commit-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const db = openSqlite(`file:${join(dir, 'db.sqlite')}`, { synchronous: 'FULL' })
  t.teardown(() => { db.close() })
  t.equal(db.pragma('temp_store', { simple: true }), 2, 'temp_store = MEMORY')
  db.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB NOT NULL)')
  const insert = db.prepare('INSERT INTO blobs (id, body) VALUES (?, ?)')
  for (let id = 1; id <= 64; id++) insert.run(id, Buffer.alloc(2048, id))
  const rewrite = db.prepare('UPDATE blobs SET body = ? WHERE id = ?')
  // Files the process holds open that are deleted already: how SQLite keeps its temporary files (Linux).
  const deletedFilesOpen = (): string[] => readdirSync('/proc/self/fd').flatMap((fd) => {
    try { return [readlinkSync(`/proc/self/fd/${fd}`)] } catch { return [] }
  }).filter((target) => target.endsWith('(deleted)'))
  const before = deletedFilesOpen()
  let seenDuringBatch: string[] = []
  const writes = groupCommit(db)
  // Each write rewrites every page of the table in its own savepoint: far more than the 64 KiB SQLite
  // keeps in memory before it spills a sub-journal to a temporary file (unless temp_store = MEMORY).
  const outcomes = await Promise.allSettled(Array.from({ length: 8 }, async (_, i) => await writes.run(() => {
    for (let id = 1; id <= 64; id++) rewrite.run(Buffer.alloc(2048, i + 100), id)
    if (i === 7) seenDuringBatch = deletedFilesOpen()
    if (i === 3) throw new Error('this write fails')
    return i
  })))
  t.same(seenDuringBatch, before, 'no temporary file was opened for the savepoints')
  t.same(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'])
  t.same(db.prepare('SELECT DISTINCT hex(substr(body, 1, 1)) FROM blobs').pluck().all(), [(7 + 100).toString(16).toUpperCase()], 'the last write won; the failed one left nothing')
})
