import type { Test } from 'tap'
import { describeSecret, generateSecret, type ApiKey } from '../../src/domain/api-keys'
import type { AuditDraft, AuditEntry } from '../../src/domain/audit'
import { eventFactory } from '../../src/domain/event-factory'
import type { Merchant } from '../../src/domain/merchants'
import type { User } from '../../src/domain/users'
import { auditEntry, auditing } from '../../src/store/audit-scope'
import type { Database } from '../../src/store/types'

let counter = 0
function next (): string {
  counter++
  return String(counter).padStart(12, '0')
}

function merchant (): Merchant {
  const n = next()
  return {
    id: `00000000-0000-4000-8000-${n}`,
    name: `Merchant ${n}`,
    email: `team-${n}@example.com`,
    country: null,
    defaultCurrency: null,
    metadata: {},
    status: 'active',
    apiVersion: '2026-11-25',
    version: 1,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z'
  }
}

function user (merchantId: string, overrides: Partial<User> = {}): User {
  const n = next()
  return {
    id: `20000000-0000-4000-8000-${n}`,
    merchantId,
    email: `person-${n}@team.example`,
    role: 'support',
    passwordHash: null,
    totpSecret: null,
    totpEnabledAt: null,
    inviteHash: `${n}${'a'.repeat(52)}`,
    inviteExpiresAt: '2026-01-04T00:00:00.000Z',
    createdAt: `2026-01-01T00:00:${String(counter % 60).padStart(2, '0')}.000Z`,
    updatedAt: '2026-01-01T00:00:00.000Z',
    lastSignInAt: null,
    ...overrides
  }
}

function apiKey (merchantId: string): ApiKey {
  return {
    id: `10000000-0000-4000-8000-${next()}`,
    merchantId,
    role: 'merchant',
    name: 'audited key',
    ...describeSecret(generateSecret()),
    createdAt: '2026-01-01T00:00:00.000Z',
    expiresAt: null,
    lastUsedAt: null,
    revokedAt: null
  }
}

function draft (merchantId: string | null, action: string, overrides: Partial<AuditDraft> = {}): AuditDraft {
  return {
    actor: { type: 'user', id: '20000000-0000-4000-8000-000000000001', label: 'ana@shop.example' },
    action,
    merchantId,
    requestId: `req-${next()}`,
    ip: '203.0.113.7',
    userAgent: 'contract test',
    ...overrides
  }
}

/** A draft whose entry the table refuses (a NOT NULL column left null): the write fails after the change's own statements. */
function refusedDraft (merchantId: string, action: string): AuditDraft {
  return draft(merchantId, action, { actor: { type: 'user', id: 'x', label: null as unknown as string } })
}

const clock = (): number => Date.parse('2026-01-02T00:00:00.000Z')

/**
 * Users, the sign-in lockout's counters and the audit log (issue 43): SQLite and PostgreSQL run it unchanged.
 * `makeDatabase` returns a fresh, empty, migrated database; it is closed here. `raw` runs SQL on it directly
 * (the append-only triggers must refuse whoever asks, not only the store).
 */
export function teamStoreContract (t: Test, makeDatabase: () => Promise<Database>, raw: (db: Database, sql: string) => Promise<void>): void {
  async function fresh (t: Test): Promise<{ db: Database, merchantId: string }> {
    const db = await makeDatabase()
    t.teardown(async () => { await db.close() })
    const created = await db.merchants.create(merchant())
    return { db, merchantId: created.id }
  }

  async function entries (db: Database, merchantId: string): Promise<AuditEntry[]> {
    return (await db.auditLog.list({ merchantId, limit: 100 })).data
  }

  t.test('users: create, find by id, email and invite, list; an email is unique across merchants', async (t) => {
    const { db, merchantId } = await fresh(t)
    const other = (await db.merchants.create(merchant())).id
    const ana = user(merchantId)
    await db.users.create(ana)
    t.same(await db.users.get(ana.id), ana)
    t.same(await db.users.findByEmail(ana.email), ana)
    t.same(await db.users.findByInvite(ana.inviteHash ?? ''), ana)
    t.equal(await db.users.get('20000000-0000-4000-8000-ffffffffffff'), undefined)
    await t.rejects(db.users.create(user(other, { email: ana.email })), { code: 'USER_EMAIL_TAKEN' })
    const bo = user(merchantId)
    await db.users.create(bo)
    t.same((await db.users.listForMerchant(merchantId)).map((u) => u.id), [ana.id, bo.id])
    t.same(await db.users.listForMerchant(other), [])
  })

  t.test('users: an update is a compare-and-set; it ends the user\'s sessions but the one kept; a delete ends them all', async (t) => {
    const { db, merchantId } = await fresh(t)
    const ana = user(merchantId)
    await db.users.create(ana)
    const session = (id: string) => ({ id, credentialId: `user:${ana.id}`, csrfHash: 'c'.repeat(64), createdAt: ana.createdAt, lastUsedAt: ana.createdAt, expiresAt: '2026-01-09T00:00:00.000Z' })
    for (const id of ['a', 'b', 'c']) await db.dashboardSessions.create(session(id.repeat(64)))
    const changed = { ...ana, role: 'viewer' as const, updatedAt: '2026-01-02T00:00:00.000Z' }
    t.equal(await db.users.update(changed, ana.updatedAt, { endSessions: true, keepSession: 'a'.repeat(64) }), true)
    t.equal(await db.users.update({ ...changed, role: 'owner' }, ana.updatedAt), false, 'a stale updatedAt changes nothing')
    t.equal((await db.users.get(ana.id))?.role, 'viewer')
    t.ok(await db.dashboardSessions.get('a'.repeat(64)), 'the session kept')
    t.equal(await db.dashboardSessions.get('b'.repeat(64)), undefined, 'the others ended')
    await db.users.recordSignIn(ana.id, '2026-01-03T00:00:00.000Z')
    await db.users.recordSignIn(ana.id, '2026-01-02T12:00:00.000Z')
    t.equal((await db.users.get(ana.id))?.lastSignInAt, '2026-01-03T00:00:00.000Z', 'never backwards')
    t.equal(await db.users.delete(merchantId, ana.id), true)
    t.equal(await db.dashboardSessions.get('a'.repeat(64)), undefined, 'a removal ends every session')
    t.equal(await db.users.delete(merchantId, ana.id), false)
  })

  t.test('sign-in attempts: taken before the check, kept as failures or given back; the fifth failure locks; old ones are forgotten', async (t) => {
    const { db } = await fresh(t)
    const subject = 'email:a@b.c'
    for (let i = 0; i < 5; i++) t.equal(await db.signInFailures.reserve(subject, 1000, 5, 0), true, `attempt ${i + 1} taken`)
    t.equal(await db.signInFailures.reserve(subject, 1000, 5, 0), false, 'a sixth while five are in flight or failed is refused')
    await db.signInFailures.release(subject)
    t.same(await db.signInFailures.get(subject), { failures: 4, lockedUntil: null }, 'an attempt given back')
    await db.signInFailures.fail(subject, 2000, 5, 9000)
    t.same(await db.signInFailures.get(subject), { failures: 4, lockedUntil: null }, 'four failures lock nothing')
    t.equal(await db.signInFailures.reserve(subject, 2000, 5, 0), true)
    await db.signInFailures.fail(subject, 2000, 5, 9000)
    t.same(await db.signInFailures.get(subject), { failures: 0, lockedUntil: 9000 }, 'the fifth locks and the count starts again')
    t.equal(await db.signInFailures.reserve(subject, 8999, 5, 0), false, 'locked')
    t.equal(await db.signInFailures.reserve(subject, 9000, 5, 0), true, 'the lock ends')
    await db.signInFailures.fail(subject, 9000, 5, 20_000)
    for (let i = 0; i < 4; i++) t.equal(await db.signInFailures.reserve(subject, 9001, 5, 0), true)
    t.equal(await db.signInFailures.reserve(subject, 50_000, 5, 40_000), true, 'failures older than the window are forgotten')
    t.same(await db.signInFailures.get(subject), { failures: 1, lockedUntil: 9000 })
    t.equal(await db.signInFailures.get('ip:203.0.113.7'), undefined)
    await db.signInFailures.clear(subject)
    t.equal(await db.signInFailures.get(subject), undefined)
  })

  t.test('audit log: appended entries are listed newest first, filtered and paged by cursor', async (t) => {
    const { db, merchantId } = await fresh(t)
    const base = { merchantId, actor: { type: 'api_key' as const, id: 'k1', label: 'key' }, requestId: null, ip: null, userAgent: null, outcome: 'succeeded' as const }
    const e1: AuditEntry = { ...base, id: '30000000-0000-4000-8000-000000000001', at: '2026-01-01T00:00:01.000Z', action: 'payment.create', resource: { type: 'payment', id: 'p1' } }
    const e2: AuditEntry = { ...base, id: '30000000-0000-4000-8000-000000000002', at: '2026-01-01T00:00:02.000Z', action: 'payment.refund', resource: { type: 'payment', id: 'p1' }, actor: { type: 'user', id: 'u1', label: 'ana@shop.example' } }
    const e3: AuditEntry = { ...base, id: '30000000-0000-4000-8000-000000000003', at: '2026-01-01T00:00:03.000Z', action: 'api_key.create', resource: { type: 'api_key', id: 'k2' } }
    for (const entry of [e1, e2, e3]) await db.auditLog.append(entry)
    await db.auditLog.append(e1)
    t.same(await entries(db, merchantId), [e3, e2, e1], 'newest first; an id already written is ignored')
    t.same((await db.auditLog.list({ merchantId, limit: 10, resourceId: 'p1' })).data, [e2, e1])
    t.same((await db.auditLog.list({ merchantId, limit: 10, actorId: 'u1' })).data, [e2])
    t.same((await db.auditLog.list({ merchantId, limit: 10, action: 'api_key.create' })).data, [e3])
    t.same((await db.auditLog.list({ merchantId, limit: 10, resourceType: 'payment', createdLt: '2026-01-01T00:00:02.000Z' })).data, [e1])
    const first = await db.auditLog.list({ merchantId, limit: 2 })
    t.same(first, { data: [e3, e2], hasMore: true })
    t.same(await db.auditLog.list({ merchantId, limit: 2, startingAfter: e2.id }), { data: [e1], hasMore: false })
    t.same((await db.auditLog.list({ merchantId: '00000000-0000-4000-8000-ffffffffffff', limit: 10 })).data, [], 'another merchant\'s log is empty')
  })

  t.test('audit log: the table refuses UPDATE and DELETE, whoever asks', async (t) => {
    const { db, merchantId } = await fresh(t)
    const entry: AuditEntry = {
      id: '30000000-0000-4000-8000-000000000009',
      at: '2026-01-01T00:00:01.000Z',
      merchantId,
      actor: { type: 'operator', id: 'admin', label: 'operator' },
      action: 'merchant.create',
      resource: { type: 'merchant', id: merchantId },
      requestId: null,
      ip: null,
      userAgent: null,
      outcome: 'succeeded'
    }
    await db.auditLog.append(entry)
    await t.rejects(raw(db, `UPDATE audit_log SET outcome = 'denied' WHERE id = '${entry.id}'`), /append-only/)
    await t.rejects(raw(db, `DELETE FROM audit_log WHERE id = '${entry.id}'`), /append-only/)
    t.same(await entries(db, merchantId), [entry], 'the entry is as it was written')
  })

  t.test('an audit entry is written in its change\'s transaction: with it, or not at all (a failure after the change leaves neither)', async (t) => {
    const { db, merchantId } = await fresh(t)

    const key = apiKey(merchantId)
    await auditing(draft(merchantId, 'api_key.create'), clock, async () => { await db.apiKeys.create(key) })
    const failedKey = apiKey(merchantId)
    await t.rejects(auditing(refusedDraft(merchantId, 'api_key.create'), clock, async () => { await db.apiKeys.create(failedKey) }))
    t.same((await db.apiKeys.listForMerchant(merchantId)).map((k) => k.id), [key.id], 'the key whose entry failed was not created')

    const created = merchant()
    await auditing(draft(null, 'merchant.create'), clock, async () => { await db.merchants.create(created) })
    const refused = merchant()
    await t.rejects(auditing(refusedDraft(merchantId, 'merchant.create'), clock, async () => { await db.merchants.create(refused) }))
    t.equal(await db.merchants.get(refused.id), undefined, 'the merchant whose entry failed was not created')

    const events = eventFactory({ clock })
    const fields = { name: 'Renamed', email: created.email, country: null, defaultCurrency: null, status: 'active' as const, metadata: {}, apiVersion: created.apiVersion }
    await t.rejects(auditing(refusedDraft(created.id, 'merchant.update'), clock, async () => await db.merchants.update(created.id, 1, fields, '2026-01-02T00:00:00.000Z', events.merchant)))
    t.equal((await db.merchants.get(created.id))?.name, created.name, 'the change whose entry failed (with its event) was not made')
    await auditing(draft(created.id, 'merchant.update'), clock, async () => await db.merchants.update(created.id, 1, fields, '2026-01-02T00:00:00.000Z', events.merchant))
    t.equal((await db.merchants.get(created.id))?.name, 'Renamed')

    const ana = user(merchantId)
    await t.rejects(auditing(refusedDraft(merchantId, 'user.invite'), clock, async () => { await db.users.create(ana, { audit: auditEntry(ana.id) as AuditEntry }) }))
    t.equal(await db.users.get(ana.id), undefined, 'the user whose entry failed was not created')

    t.match(await entries(db, merchantId), [
      { action: 'api_key.create', resource: { type: 'api_key', id: key.id }, actor: { type: 'user', label: 'ana@shop.example' }, ip: '203.0.113.7', userAgent: 'contract test', outcome: 'succeeded' }
    ])
    t.match(await entries(db, created.id), [
      { action: 'merchant.update', resource: { type: 'merchant', id: created.id } },
      { action: 'merchant.create', resource: { type: 'merchant', id: created.id } }
    ], 'a change made through its event (merchant.updated) carries the entry too')
  })

  t.test('one request records one entry, however many writes it makes', async (t) => {
    const { db, merchantId } = await fresh(t)
    const first = apiKey(merchantId)
    const second = apiKey(merchantId)
    await auditing(draft(merchantId, 'api_key.create'), clock, async () => {
      await db.apiKeys.create(first)
      await db.apiKeys.create(second)
    })
    t.match(await entries(db, merchantId), [{ resource: { id: first.id } }], 'the first change that commits carries it')
    await db.apiKeys.create(apiKey(merchantId))
    t.equal((await entries(db, merchantId)).length, 1, 'a write outside a request records nothing')
  })
}
