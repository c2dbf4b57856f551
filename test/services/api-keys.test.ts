import t, { type Test } from 'tap'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { apiKeyService, DEFAULT_KEY_NAME, type ApiKeyServiceDeps } from '../../src/services/api-keys'
import { hashSecret, SECRET_PATTERN } from '../../src/domain/api-keys'
import { credentialCache } from '../../src/services/credential-cache'

import type { Database } from '../../src/store/types'

const ADMIN = 'configured-admin-key-0123456789abcdefghij'
const T0 = Date.parse('2026-05-01T00:00:00Z')

async function setup (t: Test, overrides: Partial<ApiKeyServiceDeps> = {}) {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const clock = { now: T0 }
  const service = apiKeyService({ apiKeys: db.apiKeys, merchants: db.merchants, clock: () => clock.now, adminApiKey: ADMIN, usageFlushDelayMs: 5, ...overrides })
  const merchant = await addMerchant(db, 'active')
  return { db, clock, service, merchant }
}

let n = 0
async function addMerchant (db: Database, status: 'active' | 'suspended') {
  n++
  return await db.merchants.create({
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    name: 'M',
    email: `s${n}@example.com`,
    country: null,
    defaultCurrency: null,
    metadata: {},
    status,
    apiVersion: '2026-11-25',
    version: 1,
    createdAt: 'x',
    updatedAt: 'x'
  })
}

t.test('create shows the secret once; the store keeps only its hash', async (t) => {
  const { db, service, merchant } = await setup(t)
  const { key, secret } = await service.create(merchant.id, { name: 'checkout', expiresAt: '2027-01-01T00:00:00+02:00' })
  t.match(secret, SECRET_PATTERN)
  t.equal(key.secretHash, hashSecret(secret))
  t.equal(key.name, 'checkout')
  t.equal(key.expiresAt, '2026-12-31T22:00:00.000Z', 'normalised to UTC')
  t.equal(key.prefix, secret.slice(0, 7))
  const stored = JSON.stringify(await db.apiKeys.findByHash(key.secretHash))
  t.notMatch(stored, secret, 'the secret is nowhere in the stored row')
  t.equal((await service.create(merchant.id, {})).key.name, DEFAULT_KEY_NAME)
})

t.test('create: unknown merchant 404, past expiry 400', async (t) => {
  const { service, merchant } = await setup(t)
  await t.rejects(service.create('00000000-0000-4000-8000-999999999999', {}), { code: 'NOT_FOUND' })
  await t.rejects(service.create('not-a-guid', {}), { code: 'NOT_FOUND' })
  await t.rejects(service.create(merchant.id, { expiresAt: new Date(T0).toISOString() }), { code: 'VALIDATION' })
})

t.test('authenticate: admin key, merchant keys, and everything refused', async (t) => {
  const { db, clock, service, merchant } = await setup(t)
  t.same(await service.authenticate(ADMIN), { kind: 'admin', credentialId: 'ADMIN_API_KEY' })
  const { key, secret } = await service.create(merchant.id, { expiresAt: new Date(T0 + 60_000).toISOString() })
  t.same(await service.authenticate(secret), { kind: 'merchant', credentialId: key.id, merchantId: merchant.id, merchantStatus: 'active', apiVersion: '2026-11-25', keyLabel: `${key.name} (${key.prefix}…)` })
  t.equal(await service.authenticate(`${secret.slice(0, -1)}A` === secret ? `${secret.slice(0, -1)}B` : `${secret.slice(0, -1)}A`), undefined, 'a near miss')
  t.equal(await service.authenticate('sk_'), undefined)
  t.equal(await service.authenticate(ADMIN.slice(0, -1)), undefined)
  await db.merchants.update(merchant.id, 1, { name: 'M', email: merchant.email, country: null, defaultCurrency: null, metadata: {}, status: 'suspended', apiVersion: '2026-11-25' }, 'y')
  t.match(await service.authenticate(secret), { merchantStatus: 'suspended' }, 'suspension applies at once')
  clock.now += 60_000
  t.equal(await service.authenticate(secret), undefined, 'expired')
})

t.test('revoke: refused from the next call on; other merchants cannot revoke; unknown ids 404', async (t) => {
  const { db, service, merchant } = await setup(t)
  const other = await addMerchant(db, 'active')
  const { key, secret } = await service.create(merchant.id, {})
  const spare = await service.create(merchant.id, { name: 'rotation' })
  await t.rejects(service.revoke(other.id, key.id), { code: 'NOT_FOUND' })
  await t.rejects(service.revoke(merchant.id, 'nope'), { code: 'NOT_FOUND' })
  t.ok(await service.authenticate(secret))
  await service.revoke(merchant.id, key.id.toUpperCase())
  t.equal(await service.authenticate(secret), undefined)
  t.ok(await service.authenticate(spare.secret), 'the other key keeps working (rotation)')
  await t.rejects(service.revoke(merchant.id, key.id), { code: 'NOT_FOUND' }, 'already revoked')
  t.same((await service.list(merchant.id)).map((k) => k.id), [spare.key.id])
})

t.test('lastUsedAt: written in batches, at most once a minute per key', async (t) => {
  const { db, clock, service, merchant } = await setup(t)
  const writes: number[] = []
  const recordUse = db.apiKeys.recordUse.bind(db.apiKeys)
  db.apiKeys.recordUse = async (uses) => { writes.push(uses.length); await recordUse(uses) }
  const a = await service.create(merchant.id, {})
  const b = await service.create(merchant.id, {})
  for (let i = 0; i < 50; i++) {
    await service.authenticate(a.secret)
    await service.authenticate(b.secret)
  }
  await service.flushUsage()
  t.same(writes, [2], 'one write for two keys and a hundred requests')
  t.equal((await db.apiKeys.findByHash(a.key.secretHash))?.key.lastUsedAt, new Date(T0).toISOString())
  clock.now += 30_000
  await service.authenticate(a.secret)
  await service.flushUsage()
  t.same(writes, [2], 'within the minute: nothing written')
  clock.now += 30_000
  await service.authenticate(a.secret)
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.same(writes, [2, 1], 'flushed by its timer')
  t.equal((await db.apiKeys.findByHash(a.key.secretHash))?.key.lastUsedAt, new Date(T0 + 60_000).toISOString())
})

t.test('a failing lastUsedAt write is reported, never thrown at a request', async (t) => {
  const errors: unknown[] = []
  const { db, service, merchant } = await setup(t, { onBackgroundError: (err) => { errors.push(err) } })
  db.apiKeys.recordUse = async () => { throw new Error('disk full') }
  const { secret } = await service.create(merchant.id, {})
  t.ok(await service.authenticate(secret))
  await service.flushUsage()
  t.match(errors, [{ message: 'disk full' }])
})

t.test('bootstrap: without ADMIN_API_KEY one admin key is generated, once; setting ADMIN_API_KEY retires it', async (t) => {
  const { db, service: configured } = await setup(t)
  t.equal(await configured.bootstrapAdminKey(), undefined, 'nothing to generate when ADMIN_API_KEY is set')
  const unconfigured = apiKeyService({ apiKeys: db.apiKeys, merchants: db.merchants, clock: () => T0 })
  const secret = await unconfigured.bootstrapAdminKey()
  t.match(secret, SECRET_PATTERN)
  t.equal(await unconfigured.bootstrapAdminKey(), undefined, 'the second start shows nothing')
  t.match(await unconfigured.authenticate(secret as string), { kind: 'admin' })
  t.equal(await configured.authenticate(secret as string), undefined, 'retired once ADMIN_API_KEY is configured')
  t.equal(await unconfigured.authenticate(ADMIN), undefined)
})

t.test('with a cache: one database read per key per TTL; only keys that authenticate are kept', async (t) => {
  const reads: string[] = []
  const { db, clock, service, merchant } = await setup(t, { cache: credentialCache({ ttlMs: 2000, maxEntries: 100 }) })
  const findByHash = db.apiKeys.findByHash.bind(db.apiKeys)
  db.apiKeys.findByHash = async (hash) => { reads.push(hash); return await findByHash(hash) }
  const { key, secret } = await service.create(merchant.id, {})
  const principal = { kind: 'merchant', credentialId: key.id, merchantId: merchant.id, merchantStatus: 'active', apiVersion: '2026-11-25', keyLabel: `${key.name} (${key.prefix}…)` }
  t.same(await service.authenticate(secret), principal)
  t.same(await service.authenticate(secret), principal)
  t.equal(reads.length, 1, 'the second request is answered from the cache')
  const unknown = `sk_${'A'.repeat(32)}`
  t.equal(await service.authenticate(unknown), undefined)
  t.equal(await service.authenticate(unknown), undefined)
  t.equal(reads.length, 3, 'unknown keys are read each time, never cached')
  clock.now += 2000
  t.same(await service.authenticate(secret), principal)
  t.equal(reads.length, 4, 'read again when the TTL ends')
})

t.test('with a cache: a revocation applies to the next call and is announced to other instances', async (t) => {
  let announced = 0
  const { service, merchant } = await setup(t, {
    cache: credentialCache({ ttlMs: 60_000, maxEntries: 100 }),
    onCredentialsChanged: async () => { announced++ }
  })
  const { key, secret } = await service.create(merchant.id, {})
  t.ok(await service.authenticate(secret), 'cached')
  await service.revoke(merchant.id, key.id)
  t.equal(announced, 1)
  t.equal(await service.authenticate(secret), undefined, 'refused at once despite the 60 s TTL')
})

t.test('with a cache: an expiring key is refused at its expiry, not at the end of the TTL', async (t) => {
  const { clock, service, merchant } = await setup(t, { cache: credentialCache({ ttlMs: 60_000, maxEntries: 100 }) })
  const { secret } = await service.create(merchant.id, { expiresAt: new Date(T0 + 1000).toISOString() })
  t.ok(await service.authenticate(secret))
  clock.now += 1000
  t.equal(await service.authenticate(secret), undefined)
})
