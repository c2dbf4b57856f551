import type { Test } from 'tap'
import type { StoredConnectorAccount } from '../../src/domain/connectors'
import type { Merchant } from '../../src/domain/merchants'
import { newId } from '../../src/domain/ids'
import type { Database } from '../../src/store/types'
import { zeroCounts, type ConnectorCall } from '../../src/domain/connector-stats'

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

  t.test('recordAttempt and attemptStats: counts per connector and outcome, nearest-rank p50/p95 of answered calls, by merchant and start time', async (t) => {
    const { db, merchantId } = await fresh(t)
    const other = (await db.merchants.create(merchant())).id
    const stripe = newId()
    const adyen = newId()
    let n = 0
    const call = (fields: Partial<ConnectorCall> & Pick<ConnectorCall, 'outcome' | 'durationMs'>): ConnectorCall => {
      const startedAt = fields.startedAt ?? `2026-11-20T10:00:${String(n++ % 60).padStart(2, '0')}.000Z`
      return { id: newId(), paymentId: newId(), merchantId, connectorId: stripe, connectorType: 'stripe', code: null, startedAt, answeredAt: startedAt, ...fields }
    }
    // Stripe: 20 answered calls of 10..200 ms (p50: the 10th, 100; p95: the 19th, 190), and failures whose durations never count.
    for (const ms of [130, 20, 200, 70, 110, 180, 10, 160, 40, 90, 150, 30, 190, 60, 120, 170, 50, 140, 80, 100]) {
      await db.connectors.recordAttempt(call({ outcome: ms % 20 === 0 ? 'succeeded' : ms === 30 ? 'declined' : ms === 50 ? 'requires_action' : 'authorized', durationMs: ms, code: ms === 30 ? 'card_declined' : null }))
    }
    await db.connectors.recordAttempt(call({ outcome: 'unknown', durationMs: 30_000, code: 'timeout' }))
    await db.connectors.recordAttempt(call({ outcome: 'not_processed', durationMs: 1, code: 'connection_refused' }))
    // Adyen: two answered calls (p50: the smaller, p95: the larger), one at each end of the range.
    await db.connectors.recordAttempt(call({ connectorId: adyen, connectorType: 'adyen', outcome: 'declined', durationMs: 700, startedAt: '2026-11-01T00:00:00.000Z' }))
    await db.connectors.recordAttempt(call({ connectorId: adyen, connectorType: 'adyen', outcome: 'succeeded', durationMs: 300, startedAt: '2026-11-30T23:59:59.999Z' }))
    await db.connectors.recordAttempt(call({ connectorId: adyen, connectorType: 'adyen', outcome: 'succeeded', durationMs: 5, startedAt: '2026-12-01T00:00:00.000Z' }))
    await db.connectors.recordAttempt(call({ connectorId: adyen, connectorType: 'adyen', outcome: 'succeeded', durationMs: 5, startedAt: '2026-10-31T23:59:59.999Z' }))
    // The default gateway (no account) only failed: no latency.
    await db.connectors.recordAttempt(call({ connectorId: null, connectorType: 'simulated', outcome: 'unknown', durationMs: 10 }))
    // Another merchant's call on an account id of ours is never counted for us.
    await db.connectors.recordAttempt(call({ merchantId: other, outcome: 'succeeded', durationMs: 1 }))

    const rows = await db.connectors.attemptStats({ merchantId, createdGte: '2026-11-01T00:00:00.000Z', createdLt: '2026-12-01T00:00:00.000Z' })
    const sorted = [...rows].sort((a, b) => a.connectorType.localeCompare(b.connectorType))
    t.same(sorted, [
      { connectorId: adyen, connectorType: 'adyen', counts: { ...zeroCounts(), succeeded: 1, declined: 1 }, p50Ms: 300, p95Ms: 700 },
      { connectorId: null, connectorType: 'simulated', counts: { ...zeroCounts(), unknown: 1 }, p50Ms: null, p95Ms: null },
      {
        connectorId: stripe,
        connectorType: 'stripe',
        counts: { succeeded: 10, authorized: 8, requires_action: 1, declined: 1, not_processed: 1, unknown: 1 },
        p50Ms: 100,
        p95Ms: 190
      }
    ])
    t.same(await db.connectors.attemptStats({ merchantId: other, createdGte: '2026-11-01T00:00:00.000Z', createdLt: '2026-12-01T00:00:00.000Z' }),
      [{ connectorId: stripe, connectorType: 'stripe', counts: { ...zeroCounts(), succeeded: 1 }, p50Ms: 1, p95Ms: 1 }])
    t.same(await db.connectors.attemptStats({ merchantId, createdGte: '2025-01-01T00:00:00.000Z', createdLt: '2025-02-01T00:00:00.000Z' }), [], 'no call in the range')
  })
}
