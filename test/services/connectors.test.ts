import t, { type Test } from 'tap'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { cachedAccountSource, connectorAccountService, connectorAccountSource, resealConnectorCredentials } from '../../src/services/connectors'
import { readCache } from '../../src/services/read-cache'
import type { ConnectorAccountSource, RoutableAccount } from '../../src/gateway/directory'
import { newEncryptionKeyEntry, parseEncryptionKeys, secretBox, type EncryptionKey } from '../../src/secrets/encryption'
import { MAX_CONNECTORS_PER_MERCHANT } from '../../src/domain/connectors'
import { newId } from '../../src/domain/ids'
import type { ConnectorFactory } from '../../src/gateway/connectors'
import { connectorRegistry } from '../../src/gateway/registry'
import type { PaymentGateway } from '../../src/gateway/types'

const NOW = '2026-01-01T00:00:00.000Z'
const box = (entry: string) => secretBox(parseEncryptionKeys(entry) as EncryptionKey[])
const silent = { info: () => {}, warn: () => {}, error: () => {} }

async function setup (t: Test, factory: ConnectorFactory = () => ({ gateway: {} as PaymentGateway, verify: async () => {} }), onChange?: (merchantId: string) => Promise<void>) {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const merchant = await db.merchants.create({ id: newId(), name: 'M', email: 'm@example.com', country: null, defaultCurrency: null, metadata: {}, status: 'active', apiVersion: '2026-11-25', version: 1, createdAt: NOW, updatedAt: NOW })
  const secrets = box(newEncryptionKeyEntry('k1'))
  const service = connectorAccountService({ db, factory, registry: connectorRegistry(), secrets, clock: Date.now, log: silent, ...(onChange === undefined ? {} : { onChange }) })
  return { db, merchantId: merchant.id, secrets, service }
}

t.test('an unexpected failure of verify() is not mapped (a bug is a 500, not a refusal)', async (t) => {
  const { service, merchantId } = await setup(t, () => ({ gateway: {} as PaymentGateway, verify: async () => { throw new TypeError('bug') } }))
  await t.rejects(service.create(merchantId, { type: 'simulated' }), TypeError)
})

t.test(`at most ${MAX_CONNECTORS_PER_MERCHANT} accounts per merchant`, async (t) => {
  const { service, merchantId } = await setup(t)
  for (let i = 0; i < MAX_CONNECTORS_PER_MERCHANT; i++) await service.create(merchantId, { type: 'simulated' })
  await t.rejects(service.create(merchantId, { type: 'simulated' }), { code: 'VALIDATION', errors: { type: [/at most/] } })
})

t.test('a type this instance has no module for is refused: a new account, and new credentials for an account whose module was removed', async (t) => {
  const { db, service, merchantId, secrets } = await setup(t)
  await t.rejects(service.create(merchantId, { type: 'retired' }), { code: 'VALIDATION', errors: { type: [/no connector of type 'retired': it has simulated, stripe, adyen/] } })
  const id = newId()
  await db.connectors.insert({ id, merchantId, type: 'retired', priority: 0, status: 'enabled', description: null, credentialsHint: null, credentials: secrets.seal('{}', id), createdAt: NOW, updatedAt: NOW, deletedAt: null }, 20)
  await t.rejects(service.update(merchantId, id, { credentials: { token: 'x' } }), { code: 'VALIDATION', errors: { type: [/no connector of type 'retired'/] } })
  t.match(await service.update(merchantId, id, { priority: 3 }), { priority: 3 }, 'a change that needs no module still applies')
})

t.test('a patch racing other writers is re-applied, then given up with a conflict', async (t) => {
  const { db, service, merchantId } = await setup(t)
  const account = await service.create(merchantId, { type: 'simulated' })
  const update = db.connectors.update
  let losses = 1
  db.connectors.update = async (next, expected) => losses-- > 0 ? false : await update(next, expected)
  t.match(await service.update(merchantId, account.id, { priority: 4 }), { priority: 4 }, 'won on the second try')
  db.connectors.update = async () => false
  await t.rejects(service.update(merchantId, account.id, { priority: 5 }), { code: 'CONFLICT' })
})

t.test('resealConnectorCredentials re-seals what is not under the current key; the source opens them', async (t) => {
  const { db, merchantId } = await setup(t)
  const oldEntry = newEncryptionKeyEntry('old')
  const old = box(oldEntry)
  const both = secretBox([...parseEncryptionKeys(newEncryptionKeyEntry('new')) as EncryptionKey[], ...parseEncryptionKeys(oldEntry) as EncryptionKey[]])
  const ids = Array.from({ length: 3 }, () => newId())
  for (const [index, id] of ids.entries()) {
    await db.connectors.insert({
      id,
      merchantId,
      type: 'stripe',
      priority: 0,
      status: 'enabled',
      description: null,
      credentialsHint: null,
      credentials: index === 2 ? JSON.stringify({ secretKey: 'sk_test_clear' }) : old.seal(JSON.stringify({ secretKey: `sk_test_${index}` }), id),
      createdAt: NOW,
      updatedAt: NOW,
      deletedAt: null
    }, 20)
  }
  t.equal(await resealConnectorCredentials(db.connectors, both), 3)
  t.equal(await resealConnectorCredentials(db.connectors, both), 0, 'nothing left')
  const source = connectorAccountSource(db.connectors, both)
  t.same((await source.byId(ids[0] as string))?.credentials, { secretKey: 'sk_test_0' })
  t.same((await source.byId(ids[2] as string))?.credentials, { secretKey: 'sk_test_clear' })
  t.equal(await source.byId(newId()), undefined)
  t.same((await source.enabledFor(merchantId)).length, 3)
})

t.test('every write tells onChange whose accounts changed, after the write; reads and refused writes do not', async (t) => {
  const told: string[] = []
  const { service, merchantId } = await setup(t, undefined, async (merchant) => { told.push(merchant) })
  const account = await service.create(merchantId, { type: 'simulated' })
  await service.list(merchantId)
  await service.get(merchantId, account.id)
  await service.update(merchantId, account.id, {})
  t.same(told, [merchantId], 'create; reads and an empty patch change nothing')
  await service.update(merchantId, account.id, { status: 'disabled' })
  await service.remove(merchantId, account.id)
  await t.rejects(service.remove(merchantId, account.id), { code: 'NOT_FOUND' })
  t.same(told, [merchantId, merchantId, merchantId], 'a patch and a delete; the refused delete does not')
})

t.test('cachedAccountSource keeps a merchant\'s enabled accounts for the TTL; byId is always read', async (t) => {
  const account: RoutableAccount = { id: newId(), type: 'simulated', credentials: {}, updatedAt: NOW }
  const reads = { enabledFor: 0, byId: 0 }
  const source: ConnectorAccountSource = {
    enabledFor: async () => { reads.enabledFor++; return [account] },
    byId: async () => { reads.byId++; return account }
  }
  let now = 0
  const cache = readCache<RoutableAccount[]>({ ttlMs: 1000, maxEntries: 10 })
  const cached = cachedAccountSource(source, cache, () => now)
  t.same(await cached.enabledFor('m'), [account])
  t.same(await cached.enabledFor('m'), [account])
  t.equal(reads.enabledFor, 1, 'the second routing read came from the cache')
  cache.forget('m')
  await cached.enabledFor('m')
  t.equal(reads.enabledFor, 2, 'a forgotten merchant is read again')
  now += 1000
  await cached.enabledFor('m')
  t.equal(reads.enabledFor, 3, 'and so is one whose TTL has passed')
  await cached.byId(account.id)
  await cached.byId(account.id)
  t.equal(reads.byId, 2)
  t.equal(cachedAccountSource(source, readCache({ ttlMs: 0, maxEntries: 10 }), () => now), source, 'a TTL of 0: the source itself')
})
