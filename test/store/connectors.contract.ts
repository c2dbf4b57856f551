import type { Test } from 'tap'
import type { StoredConnectorAccount } from '../../src/domain/connectors'
import type { Merchant } from '../../src/domain/merchants'
import { newId } from '../../src/domain/ids'
import type { Database } from '../../src/store/types'

const T0 = '2026-01-01T00:00:00.000Z'

function merchant (): Merchant {
  const id = newId()
  return { id, name: 'M', email: `connectors-${id}@example.com`, country: null, defaultCurrency: null, metadata: {}, status: 'active', apiVersion: '2026-11-25', version: 1, createdAt: T0, updatedAt: T0 }
}

function account (merchantId: string, overrides: Partial<StoredConnectorAccount> = {}): StoredConnectorAccount {
  return {
    id: newId(),
    merchantId,
    type: 'stripe',
    priority: 0,
    status: 'enabled',
    description: null,
    credentialsHint: '…4242',
    credentials: 'enc:v1:k:sealed',
    createdAt: T0,
    updatedAt: T0,
    deletedAt: null,
    ...overrides
  }
}

/** The ConnectorAccountStore contract: SQLite and PostgreSQL run it unchanged. */
export function connectorStoreContract (t: Test, makeDatabase: () => Promise<Database>): void {
  async function fresh (t: Test): Promise<{ db: Database, merchantId: string }> {
    const db = await makeDatabase()
    t.teardown(async () => { await db.close() })
    const { id } = await db.merchants.create(merchant())
    return { db, merchantId: id }
  }

  t.test('insert and get round-trip every field; unknown ids are undefined', async (t) => {
    const { db, merchantId } = await fresh(t)
    const stored = account(merchantId, { type: 'simulated', priority: 1000, status: 'disabled', description: 'backup', credentialsHint: null })
    t.equal(await db.connectors.insert(stored, 20), true)
    t.same(await db.connectors.get(stored.id), stored)
    t.equal(await db.connectors.get(newId()), undefined)
  })

  t.test('insert refuses beyond `max` accounts that are not deleted', async (t) => {
    const { db, merchantId } = await fresh(t)
    const first = account(merchantId)
    t.equal(await db.connectors.insert(first, 2), true)
    t.equal(await db.connectors.insert(account(merchantId), 2), true)
    t.equal(await db.connectors.insert(account(merchantId), 2), false)
    t.equal(await db.connectors.softDelete(merchantId, first.id, T0), true)
    t.equal(await db.connectors.insert(account(merchantId), 2), true, 'a deleted account does not count')
  })

  t.test('listForMerchant and enabledFor: routing order, no deleted accounts, only the merchant\'s; enabledFor only enabled ones', async (t) => {
    const { db, merchantId } = await fresh(t)
    const other = (await db.merchants.create(merchant())).id
    const a = account(merchantId, { priority: 5, createdAt: '2026-01-01T00:00:01.000Z' })
    const b = account(merchantId, { priority: 0, createdAt: '2026-01-01T00:00:02.000Z' })
    const c = account(merchantId, { priority: 5, createdAt: '2026-01-01T00:00:00.500Z', status: 'disabled' })
    const d = account(merchantId, { priority: 1 })
    for (const each of [a, b, c, d, account(other)]) await db.connectors.insert(each, 20)
    await db.connectors.softDelete(merchantId, d.id, '2026-01-02T00:00:00.000Z')
    t.same((await db.connectors.listForMerchant(merchantId)).map((x) => x.id), [b.id, c.id, a.id])
    t.same((await db.connectors.enabledFor(merchantId)).map((x) => x.id), [b.id, a.id])
    t.match(await db.connectors.get(d.id), { id: d.id, deletedAt: '2026-01-02T00:00:00.000Z', updatedAt: '2026-01-02T00:00:00.000Z' }, 'get still finds a deleted account')
  })

  t.test('update is a compare-and-set on updatedAt and never touches a deleted account', async (t) => {
    const { db, merchantId } = await fresh(t)
    const stored = account(merchantId)
    await db.connectors.insert(stored, 20)
    const changed = { ...stored, priority: 3, status: 'disabled' as const, description: 'x', credentials: 'enc:v1:k:other', credentialsHint: '…9999', updatedAt: '2026-01-01T00:00:01.000Z' }
    t.equal(await db.connectors.update(changed, T0), true)
    t.same(await db.connectors.get(stored.id), changed)
    t.equal(await db.connectors.update({ ...changed, priority: 9 }, T0), false, 'a stale updatedAt writes nothing')
    t.equal(await db.connectors.softDelete('someone-else', stored.id, T0), false, 'only the owner deletes')
    t.equal(await db.connectors.softDelete(merchantId, stored.id, '2026-01-01T00:00:02.000Z'), true)
    t.equal(await db.connectors.softDelete(merchantId, stored.id, '2026-01-01T00:00:03.000Z'), false, 'deleted once')
    t.equal(await db.connectors.update({ ...changed, priority: 9, updatedAt: '2026-01-01T00:00:04.000Z' }, '2026-01-01T00:00:02.000Z'), false)
  })

  t.test('credentialsNotUnder pages by id over every account (deleted too); replaceCredentials is a compare-and-set', async (t) => {
    const { db, merchantId } = await fresh(t)
    const old = [account(merchantId, { credentials: 'enc:v1:old:1' }), account(merchantId, { credentials: 'plain' }), account(merchantId, { credentials: 'enc:v1:old:3' })]
    const current = account(merchantId, { credentials: 'enc:v1:new:x' })
    for (const each of [...old, current]) await db.connectors.insert(each, 20)
    await db.connectors.softDelete(merchantId, old[2]?.id as string, T0)
    const first = await db.connectors.credentialsNotUnder('enc:v1:new:', '', 2)
    t.same(first, old.slice(0, 2).map(({ id, credentials }) => ({ id, credentials })))
    const rest = await db.connectors.credentialsNotUnder('enc:v1:new:', first[1]?.id as string, 2)
    t.same(rest, old.slice(2).map(({ id, credentials }) => ({ id, credentials })))
    t.equal(await db.connectors.replaceCredentials({ id: old[0]?.id as string, credentials: 'stale' }, 'enc:v1:new:1'), false)
    t.equal(await db.connectors.replaceCredentials({ id: old[0]?.id as string, credentials: 'enc:v1:old:1' }, 'enc:v1:new:1'), true)
    t.equal((await db.connectors.get(old[0]?.id as string))?.credentials, 'enc:v1:new:1')
  })
}
