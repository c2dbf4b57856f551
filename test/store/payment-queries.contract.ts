import type { Test } from 'tap'
import { newPendingPayment } from '../../src/domain/payments'
import type { Database } from '../../src/store/types'

/** Payment list queries added for the dashboard (issue 30): SQLite and PostgreSQL run them unchanged. */
export function paymentQueryContract (t: Test, makeDatabase: () => Promise<Database>): void {
  t.test('list by one metadata entry: exact key and value, any key characters, combined with the owner', async (t) => {
    const db = await makeDatabase()
    t.teardown(async () => { await db.close() })
    const at = '2026-11-25T10:00:00.000Z'
    const pay = (id: string, metadata: Record<string, string>) => ({ ...newPendingPayment({ id, amountMinor: 100, currency: 'EUR', at }), metadata })
    await db.payments.create(pay('p1', { orderId: 'A-1', 'odd "key".x': 'v' }))
    await db.payments.create(pay('p2', { orderId: 'A-10' }))
    await db.payments.create(pay('p3', { other: 'A-1' }))
    const ids = async (key: string, value: string) =>
      (await db.payments.list({ limit: 10, metadata: { key, value } })).data.map((p) => p.id)
    t.same(await ids('orderId', 'A-1'), ['p1'], 'exact value, not a prefix; not another key with that value')
    t.same(await ids('orderId', 'a-1'), [], 'case-sensitive')
    t.same(await ids('odd "key".x', 'v'), ['p1'], 'a key with quotes and dots')
    t.same(await ids('missing', 'A-1'), [])
    t.same((await db.payments.list({ limit: 10, merchantId: '00000000-0000-4000-8000-000000000001', metadata: { key: 'orderId', value: 'A-1' } })).data, [])
  })
}
