import t from 'tap'
import { paymentService, type RenderSettled } from '../../src/services/payments'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { spyGateway, unavailable } from '../helpers/gateway'

const silent = { info: () => {}, warn: () => {}, error: () => {} }
const render: RenderSettled = (payment, origin) => ({ statusCode: 0, headers: {}, body: `${payment.status} ${origin.path} ${origin.traceId}` })

const MERCHANT = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa'

t.test('the payments service returns domain payments and throws domain errors; it never frees a key itself', async (t) => {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  let released = 0
  const release = db.idempotency.release
  const payments = paymentService({
    db: { ...db, idempotency: { ...db.idempotency, release: async (ref) => { released++; return await release(ref) } } },
    gateway: spyGateway(unavailable),
    clock: () => Date.parse('2026-01-01T00:00:00Z'),
    log: silent,
    renderSettled: render
  })
  await t.rejects(payments.create({ amount: 1, currency: 'USD', merchantId: MERCHANT }), { code: 'GATEWAY_UNAVAILABLE' })
  t.equal(released, 0, 'the idempotency plugin owns the key, not the service')
  await t.rejects(payments.get('not-a-guid'), { code: 'NOT_FOUND' })
  await t.rejects(payments.get('x'.repeat(5000)), { code: 'NOT_FOUND' }, 'any length: 404, not a validation error')
})

t.test('a settled payment is returned as a domain object', async (t) => {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const payments = paymentService({ db, gateway: spyGateway(), clock: () => 0, log: silent, renderSettled: render })
  const payment = await payments.create({ amount: 12.34, currency: 'USD', merchantId: MERCHANT })
  t.match(payment, { status: 'succeeded', amountMinor: 1234, currency: 'USD', merchantId: MERCHANT })
  t.same(await payments.get(payment.id.toUpperCase()), payment, 'GUIDs are case-insensitive')
  t.same(await payments.get(payment.id, MERCHANT.toUpperCase()), payment, 'its owner finds it')
  await t.rejects(payments.get(payment.id, 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb'), { code: 'NOT_FOUND' }, 'another merchant does not')
})
