import type { Test } from 'tap'
import type { DashboardSession } from '../../src/domain/dashboard-sessions'
import type { Database } from '../../src/store/types'

let counter = 0
function session (overrides: Partial<DashboardSession> = {}): DashboardSession {
  counter++
  return {
    id: `${String(counter).padStart(4, '0')}${'a'.repeat(60)}`,
    credentialId: '10000000-0000-4000-8000-000000000001',
    csrfHash: 'c'.repeat(64),
    createdAt: '2026-11-25T10:00:00.000Z',
    lastUsedAt: '2026-11-25T10:00:00.000Z',
    expiresAt: '2026-11-25T22:00:00.000Z',
    ...overrides
  }
}

/**
 * The DashboardSessionStore contract: SQLite and PostgreSQL run it unchanged.
 * `makeDatabase` returns a fresh, empty, migrated database; it is closed here.
 */
export function dashboardSessionStoreContract (t: Test, makeDatabase: () => Promise<Database>): void {
  async function fresh (t: Test): Promise<Database> {
    const db = await makeDatabase()
    t.teardown(async () => { await db.close() })
    return db
  }

  t.test('create and get by id; unknown ids are undefined; an id is unique', async (t) => {
    const db = await fresh(t)
    const stored = session()
    await db.dashboardSessions.create(stored)
    t.same(await db.dashboardSessions.get(stored.id), stored)
    t.equal(await db.dashboardSessions.get('f'.repeat(64)), undefined)
    await t.rejects(db.dashboardSessions.create({ ...session(), id: stored.id }), 'the same id twice')
  })

  t.test('touch moves lastUsedAt forwards only', async (t) => {
    const db = await fresh(t)
    const stored = session()
    await db.dashboardSessions.create(stored)
    await db.dashboardSessions.touch(stored.id, '2026-11-25T10:05:00.000Z')
    await db.dashboardSessions.touch(stored.id, '2026-11-25T10:01:00.000Z')
    await db.dashboardSessions.touch('f'.repeat(64), '2026-11-25T10:09:00.000Z')
    t.equal((await db.dashboardSessions.get(stored.id))?.lastUsedAt, '2026-11-25T10:05:00.000Z')
  })

  t.test('delete ends one session, once', async (t) => {
    const db = await fresh(t)
    const [kept, ended] = [session(), session()]
    await db.dashboardSessions.create(kept)
    await db.dashboardSessions.create(ended)
    t.equal(await db.dashboardSessions.delete(ended.id), true)
    t.equal(await db.dashboardSessions.delete(ended.id), false)
    t.equal(await db.dashboardSessions.get(ended.id), undefined)
    t.same(await db.dashboardSessions.get(kept.id), kept)
  })

  t.test('deleteEnded removes sessions past their end or idle since the cut-off, nothing else', async (t) => {
    const db = await fresh(t)
    const live = session({ lastUsedAt: '2026-11-25T11:00:00.000Z' })
    const idle = session({ lastUsedAt: '2026-11-25T10:10:00.000Z' })
    const over = session({ lastUsedAt: '2026-11-25T11:00:00.000Z', expiresAt: '2026-11-25T11:20:00.000Z' })
    for (const s of [live, idle, over]) await db.dashboardSessions.create(s)
    t.equal(await db.dashboardSessions.deleteEnded('2026-11-25T11:30:00.000Z', '2026-11-25T10:30:00.000Z'), 2)
    t.same(await db.dashboardSessions.get(live.id), live)
    t.equal(await db.dashboardSessions.get(idle.id), undefined)
    t.equal(await db.dashboardSessions.get(over.id), undefined)
  })
}
