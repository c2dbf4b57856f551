import type { Test } from 'tap'
import { describeSecret, generateSecret, type ApiKey } from '../../src/domain/api-keys'
import type { Merchant } from '../../src/domain/merchants'
import { newPendingPayment } from '../../src/domain/payments'
import type { Database } from '../../src/store/types'
import { itemAt } from '../helpers/items'

let counter = 0
function next (): string {
  counter++
  return String(counter).padStart(12, '0')
}

function merchant (status: Merchant['status'] = 'active'): Merchant {
  const n = next()
  return {
    id: `00000000-0000-4000-8000-${n}`,
    name: `Merchant ${n}`,
    email: `keys-${n}@example.com`,
    country: null,
    defaultCurrency: null,
    metadata: {},
    status,
    apiVersion: '2026-11-25',
    version: 1,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z'
  }
}

function apiKey (merchantId: string | null, overrides: Partial<ApiKey> = {}): ApiKey & { secret: string } {
  const secret = generateSecret()
  return {
    id: `10000000-0000-4000-8000-${next()}`,
    merchantId,
    role: merchantId === null ? 'admin' : 'merchant',
    name: 'test key',
    ...describeSecret(secret),
    createdAt: `2026-01-01T00:00:${String(counter % 60).padStart(2, '0')}.000Z`,
    expiresAt: null,
    lastUsedAt: null,
    revokedAt: null,
    ...overrides,
    secret
  }
}

function stored (key: ApiKey & { secret?: string }): ApiKey {
  const { secret: _secret, ...rest } = key
  return rest
}

/**
 * The ApiKeyStore contract: SQLite and PostgreSQL run it unchanged.
 * `makeDatabase` returns a fresh, empty, migrated database; it is closed here.
 */
export function apiKeyStoreContract (t: Test, makeDatabase: () => Promise<Database>): void {
  async function fresh (t: Test): Promise<Database> {
    const db = await makeDatabase()
    t.teardown(async () => { await db.close() })
    return db
  }

  t.test('create, findByHash with the merchant status; unknown hashes are undefined', async (t) => {
    const db = await fresh(t)
    const owner = await db.merchants.create(merchant('suspended'))
    const key = apiKey(owner.id, { expiresAt: '2027-01-01T00:00:00.000Z' })
    await db.apiKeys.create(stored(key))
    t.same(await db.apiKeys.findByHash(key.secretHash), { key: stored(key), merchantStatus: 'suspended', merchantApiVersion: '2026-11-25' })
    t.equal(await db.apiKeys.findByHash(describeSecret(generateSecret()).secretHash), undefined)
    t.same(await db.apiKeys.findById(key.id), { key: stored(key), merchantStatus: 'suspended', merchantApiVersion: '2026-11-25' }, 'findById: the same match')
    t.equal(await db.apiKeys.findById('00000000-0000-4000-8000-ffffffffffff'), undefined)
  })

  t.test('with a completion, the Idempotency-Key\'s response commits with the key, and not without it', async (t) => {
    const db = await fresh(t)
    const owner = await db.merchants.create(merchant())
    const claimed = async (key: string) => {
      const ref = { scope: 'admin', method: 'POST', path: '/merchants/:id/api-keys', key }
      await db.idempotency.claim({ ref, fingerprint: 'f', now: 1, lockUntil: 60_000, expiresAt: 3_600_000 })
      return ref
    }
    const response = { statusCode: 201, headers: { 'content-type': 'application/json' }, body: 'enc:v1:k:sealed' }
    const key = apiKey(owner.id)
    const ref = await claimed('one')
    await db.apiKeys.create(stored(key), { ref, response })
    t.same((await db.apiKeys.findById(key.id))?.key, stored(key))
    const record = await db.idempotency.get(ref)
    t.equal(record?.recoveryPoint, 'finished')
    t.same(record?.response, response)
    const refused = await claimed('two')
    await t.rejects(db.apiKeys.create({ ...stored(apiKey(owner.id)), secretHash: key.secretHash }, { ref: refused, response }), 'same hash twice')
    t.equal((await db.idempotency.get(refused))?.recoveryPoint, 'started', 'the failed insert stored no answer')
  })

  t.test('a hash is unique; a key needs an existing merchant', async (t) => {
    const db = await fresh(t)
    const owner = await db.merchants.create(merchant())
    const key = apiKey(owner.id)
    await db.apiKeys.create(stored(key))
    await t.rejects(db.apiKeys.create({ ...stored(apiKey(owner.id)), secretHash: key.secretHash }), 'same hash twice')
    await t.rejects(db.apiKeys.create(stored(apiKey('00000000-0000-4000-8000-ffffffffffff'))), 'unknown merchant')
  })

  t.test('listForMerchant: the merchant\'s unrevoked keys, oldest first, nobody else\'s', async (t) => {
    const db = await fresh(t)
    const [a, b] = [await db.merchants.create(merchant()), await db.merchants.create(merchant())]
    const first = apiKey(a.id, { createdAt: '2026-01-01T00:00:01.000Z' })
    const second = apiKey(a.id, { createdAt: '2026-01-01T00:00:02.000Z', expiresAt: '2026-01-02T00:00:00.000Z' })
    const other = apiKey(b.id)
    for (const key of [second, other, first]) await db.apiKeys.create(stored(key))
    t.same(await db.apiKeys.listForMerchant(a.id), [stored(first), stored(second)], 'expired keys are still listed')
    t.same(await db.apiKeys.listForMerchant(b.id), [stored(other)])
    t.same(await db.apiKeys.listForMerchant('00000000-0000-4000-8000-ffffffffffff'), [])
  })

  t.test('revoke: once, only the owner\'s key; revoked keys leave the list but are still found (as revoked)', async (t) => {
    const db = await fresh(t)
    const [a, b] = [await db.merchants.create(merchant()), await db.merchants.create(merchant())]
    const key = apiKey(a.id)
    await db.apiKeys.create(stored(key))
    t.equal(await db.apiKeys.revoke(b.id, key.id, '2026-02-01T00:00:00.000Z'), false, 'another merchant cannot revoke it')
    t.equal(await db.apiKeys.revoke(a.id, key.id, '2026-02-01T00:00:00.000Z'), true)
    t.equal(await db.apiKeys.revoke(a.id, key.id, '2026-02-02T00:00:00.000Z'), false, 'a second revoke changes nothing')
    t.same(await db.apiKeys.listForMerchant(a.id), [])
    t.equal((await db.apiKeys.findByHash(key.secretHash))?.key.revokedAt, '2026-02-01T00:00:00.000Z')
  })

  t.test('recordUse writes a batch and never moves lastUsedAt backwards', async (t) => {
    const db = await fresh(t)
    const owner = await db.merchants.create(merchant())
    const [k1, k2] = [apiKey(owner.id), apiKey(owner.id)]
    await db.apiKeys.create(stored(k1))
    await db.apiKeys.create(stored(k2))
    await db.apiKeys.recordUse([])
    await db.apiKeys.recordUse([{ id: k1.id, at: '2026-03-01T00:00:10.000Z' }, { id: k2.id, at: '2026-03-01T00:00:20.000Z' }])
    await db.apiKeys.recordUse([{ id: k1.id, at: '2026-03-01T00:00:05.000Z' }, { id: 'unknown', at: '2026-03-01T00:00:05.000Z' }])
    t.equal((await db.apiKeys.findByHash(k1.secretHash))?.key.lastUsedAt, '2026-03-01T00:00:10.000Z')
    t.equal((await db.apiKeys.findByHash(k2.secretHash))?.key.lastUsedAt, '2026-03-01T00:00:20.000Z')
  })

  t.test('createBootstrapAdmin stores one admin key, even when raced', async (t) => {
    const db = await fresh(t)
    t.equal(await db.apiKeys.hasBootstrapAdmin(), false)
    const candidates = Array.from({ length: 5 }, () => apiKey(null))
    const results = await Promise.all(candidates.map(async (key) => await db.apiKeys.createBootstrapAdmin(stored(key))))
    t.equal(results.filter(Boolean).length, 1, 'exactly one stored')
    const winner = itemAt(candidates, results.indexOf(true))
    t.same(await db.apiKeys.findByHash(winner.secretHash), { key: stored(winner), merchantStatus: null, merchantApiVersion: null })
    t.equal(await db.apiKeys.hasBootstrapAdmin(), true)
    await t.rejects(db.apiKeys.create(stored(apiKey(null, { role: 'merchant' }))), 'a merchant key needs a merchant')
  })

  t.test('payments record their merchant; pre-existing payments have none', async (t) => {
    const db = await fresh(t)
    const owner = await db.merchants.create(merchant())
    const at = '2026-01-01T00:00:00.000Z'
    const owned = newPendingPayment({ id: `pay-${next()}`, merchantId: owner.id, amountMinor: 100, currency: 'EUR', at })
    const legacy = { ...owned, id: `pay-${next()}`, merchantId: null }
    await db.payments.create(owned)
    await db.payments.create(legacy)
    t.equal((await db.payments.get(owned.id))?.merchantId, owner.id)
    t.equal((await db.payments.get(legacy.id))?.merchantId, null)
  })
}
