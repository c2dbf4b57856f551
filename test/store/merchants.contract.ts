import type { Test } from 'tap'
import { EmailTakenError, type Merchant, type MerchantFields } from '../../src/domain/merchants'
import type { Database } from '../../src/store/types'

let counter = 0
function merchant (overrides: Partial<Merchant> = {}): Merchant {
  counter++
  const id = `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`
  return {
    id,
    name: `Merchant ${counter}`,
    email: `m${counter}@example.com`,
    country: null,
    defaultCurrency: null,
    status: 'active',
    metadata: {},
    apiVersion: '2026-11-25',
    version: 1,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...overrides
  }
}

function fieldsOf (m: Merchant): MerchantFields {
  return { name: m.name, email: m.email, country: m.country, defaultCurrency: m.defaultCurrency, status: m.status, metadata: m.metadata, apiVersion: m.apiVersion }
}

/**
 * The MerchantStore contract, independent of the database: every
 * implementation (SQLite now, PostgreSQL later) must pass it unchanged.
 * `makeDatabase` returns a fresh, empty, migrated database; it is closed here.
 */
export function merchantStoreContract (t: Test, makeDatabase: () => Promise<Database>): void {
  async function fresh (t: Test): Promise<Database> {
    const db = await makeDatabase()
    t.teardown(async () => { await db.close() })
    return db
  }

  t.test('create then get returns the same record, nulls included', async (t) => {
    const db = await fresh(t)
    const m = merchant({ country: 'US', defaultCurrency: 'USD', status: 'suspended' })
    t.same(await db.merchants.create(m), m)
    t.same(await db.merchants.get(m.id), m)
    const bare = merchant()
    await db.merchants.create(bare)
    t.same(await db.merchants.get(bare.id), bare, 'null country and currency round-trip as null')
  })

  t.test('the API version round-trips and an update moves it', async (t) => {
    const db = await fresh(t)
    const m = merchant({ apiVersion: '2026-11-01' })
    await db.merchants.create(m)
    t.equal((await db.merchants.get(m.id))?.apiVersion, '2026-11-01')
    const result = await db.merchants.update(m.id, 1, { ...fieldsOf(m), apiVersion: '2026-11-25' }, '2026-02-02T00:00:00.000Z')
    t.match(result, { kind: 'updated', merchant: { apiVersion: '2026-11-25', version: 2 } })
    t.equal((await db.merchants.get(m.id))?.apiVersion, '2026-11-25')
    const key = { id: `00000000-0000-4000-8000-${String(++counter).padStart(12, '0')}`, merchantId: m.id, role: 'merchant' as const, name: 'k', prefix: 'sk_', last4: 'abcd', secretHash: `hash-${counter}`, createdAt: m.createdAt, expiresAt: null, lastUsedAt: null, revokedAt: null }
    await db.apiKeys.create(key)
    t.match(await db.apiKeys.findByHash(key.secretHash), { merchantStatus: 'active', merchantApiVersion: '2026-11-25' }, 'a key lookup carries its merchant\'s version')
  })

  t.test('get of an unknown id is undefined', async (t) => {
    const db = await fresh(t)
    t.equal(await db.merchants.get('00000000-0000-4000-8000-ffffffffffff'), undefined)
  })

  t.test('emails are unique case-insensitively, enforced on insert', async (t) => {
    const db = await fresh(t)
    const first = merchant({ email: 'Owner@Example.com' })
    await db.merchants.create(first)
    await t.rejects(db.merchants.create(merchant({ email: 'owner@example.COM' })), { code: 'EMAIL_TAKEN', kind: 'conflict' })
    await t.rejects(db.merchants.create(merchant({ email: 'Owner@Example.com' })), { code: 'EMAIL_TAKEN', kind: 'conflict' })
    t.same(await db.merchants.get(first.id), first, 'the first merchant is untouched')
    await db.merchants.create(merchant({ email: 'other@example.com' }))
  })

  t.test('concurrent inserts of the same email: exactly one wins', async (t) => {
    const db = await fresh(t)
    const results = await Promise.allSettled([1, 2, 3, 4].map(async () => await db.merchants.create(merchant({ email: 'race@example.com' }))))
    t.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
    for (const r of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) t.ok(r.reason instanceof EmailTakenError, 'the losers get EmailTakenError')
  })

  t.test('update with the current version writes, bumps the version and sets updatedAt', async (t) => {
    const db = await fresh(t)
    const m = merchant({ country: 'US' })
    await db.merchants.create(m)
    const result = await db.merchants.update(m.id, 1, { ...fieldsOf(m), name: 'Renamed', country: null, defaultCurrency: 'EUR' }, '2026-02-02T00:00:00.000Z')
    const expected: Merchant = { ...m, name: 'Renamed', country: null, defaultCurrency: 'EUR', version: 2, updatedAt: '2026-02-02T00:00:00.000Z' }
    t.same(result, { kind: 'updated', merchant: expected })
    t.same(await db.merchants.get(m.id), expected)
  })

  t.test('update with a stale version writes nothing and returns the current record', async (t) => {
    const db = await fresh(t)
    const m = merchant()
    await db.merchants.create(m)
    await db.merchants.update(m.id, 1, { ...fieldsOf(m), name: 'First' }, '2026-02-02T00:00:00.000Z')
    const stale = await db.merchants.update(m.id, 1, { ...fieldsOf(m), name: 'Second' }, '2026-02-03T00:00:00.000Z')
    t.equal(stale.kind, 'version_mismatch')
    if (stale.kind === 'version_mismatch') {
      t.equal(stale.current.name, 'First')
      t.equal(stale.current.version, 2)
    }
    t.equal((await db.merchants.get(m.id))?.name, 'First')
  })

  t.test('concurrent updates from the same version: exactly one wins', async (t) => {
    const db = await fresh(t)
    const m = merchant()
    await db.merchants.create(m)
    const results = await Promise.all(['a', 'b', 'c'].map(async (name) =>
      await db.merchants.update(m.id, 1, { ...fieldsOf(m), name }, '2026-02-02T00:00:00.000Z')))
    t.equal(results.filter((r) => r.kind === 'updated').length, 1)
    t.equal(results.filter((r) => r.kind === 'version_mismatch').length, 2)
    t.equal((await db.merchants.get(m.id))?.version, 2)
  })

  t.test('update of an unknown id is not_found', async (t) => {
    const db = await fresh(t)
    const m = merchant()
    t.same(await db.merchants.update(m.id, 1, fieldsOf(m), '2026-02-02T00:00:00.000Z'), { kind: 'not_found' })
  })

  t.test('update to another merchant\'s email (any case) is EmailTakenError and writes nothing', async (t) => {
    const db = await fresh(t)
    const a = merchant({ email: 'a@example.com' })
    const b = merchant({ email: 'b@example.com' })
    await db.merchants.create(a)
    await db.merchants.create(b)
    await t.rejects(db.merchants.update(b.id, 1, { ...fieldsOf(b), email: 'A@EXAMPLE.com' }, '2026-02-02T00:00:00.000Z'), { code: 'EMAIL_TAKEN', kind: 'conflict' })
    t.same(await db.merchants.get(b.id), b)
    const own = await db.merchants.update(b.id, 1, { ...fieldsOf(b), email: 'B@Example.com' }, '2026-02-02T00:00:00.000Z')
    t.equal(own.kind, 'updated', 'changing the case of one\'s own email is allowed')
    t.equal((await db.merchants.get(b.id))?.email, 'B@Example.com')
  })

  t.test('unexpected driver errors are not disguised as EmailTakenError', async (t) => {
    const db = await fresh(t)
    const m = merchant()
    await db.merchants.create(m)
    const err = await db.merchants.create({ ...m, email: 'different@example.com' }).then(() => undefined, (e: unknown) => e)
    t.ok(err instanceof Error, 'a duplicate id is an error')
    t.notOk(err instanceof EmailTakenError, 'but not an email conflict')
  })
}
