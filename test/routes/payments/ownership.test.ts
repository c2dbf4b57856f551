import t from 'tap'
import type { InjectOptions } from 'fastify'
import { ADMIN_AUTH, buildTestApp, defaultMerchantOf, merchantWithKey } from '../../helpers/app'
import { spyGateway } from '../../helpers/gateway'
import { createPayment, postJson, refundsOf } from '../../helpers/payments'

/** A request of `postJson`'s shape sent with another credential. */
function withKey (request: InjectOptions, auth: { authorization: string }): InjectOptions {
  return { ...request, headers: { ...request.headers, ...auth } }
}

// Object-level authorization on the lifecycle routes: another merchant's payment or refund is a
// 404, the same answer as an id that does not exist, and nothing is refunded or canceled.

t.test('a merchant cannot list, refund, cancel or read refunds of another merchant\'s payment', async (t) => {
  const gateway = spyGateway()
  const app = await buildTestApp(t, {}, { gateway })
  const alice = await defaultMerchantOf(app)
  const bob = await merchantWithKey(app, { name: 'Bob' })
  const payment = await createPayment(app, { amount: 10, currency: 'USD' })
  t.equal(payment.status, 201)
  const refund = await app.inject(postJson(refundsOf(payment.id), { amount: 1 }))
  t.equal(refund.statusCode, 201, 'the owner refunds')
  const refundsBefore = gateway.refunds.length

  const asBob = { ...bob.auth }
  const foreignRefund = await app.inject(withKey(postJson(refundsOf(payment.id), { amount: 1 }), asBob))
  t.equal(foreignRefund.statusCode, 404, 'refund of another merchant\'s payment')
  const unknownRefund = await app.inject(withKey(postJson(refundsOf('3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f'), { amount: 1 }), asBob))
  t.same([foreignRefund.json().type, foreignRefund.json().title], [unknownRefund.json().type, unknownRefund.json().title], 'as for an unknown payment')
  const fullRefund = await app.inject({ method: 'POST', url: refundsOf(payment.id), headers: asBob })
  t.equal(fullRefund.statusCode, 404, 'full refund without a body')
  t.equal(gateway.refunds.length, refundsBefore, 'nothing was refunded')

  t.equal((await app.inject({ url: refundsOf(payment.id), headers: asBob })).statusCode, 404, 'list of its refunds')
  t.equal((await app.inject({ url: `${refundsOf(payment.id)}/${refund.json().id}`, headers: asBob })).statusCode, 404, 'one refund')
  t.equal((await app.inject({ url: `/api/payments/${payment.id}`, headers: asBob })).statusCode, 404, 'the payment')
  const cancel = await app.inject({ method: 'POST', url: `/api/payments/${payment.id}/cancel`, headers: asBob })
  t.equal(cancel.statusCode, 404, 'cancel')

  const unknown = await app.inject({ url: refundsOf('3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f'), headers: asBob })
  t.equal(unknown.json().title, (await app.inject({ url: refundsOf(payment.id), headers: asBob })).json().title, 'the same answer as an unknown id')

  const owner = await app.inject({ url: `/api/payments/${payment.id}`, headers: alice.auth })
  t.match(owner.json(), { status: 'partially_refunded', amountRefunded: 1 }, 'the payment is as its owner left it')
  t.equal((await app.inject({ url: refundsOf(payment.id), headers: alice.auth })).json().data.length, 1)
})

t.test('each merchant\'s list shows only its own payments', async (t) => {
  const app = await buildTestApp(t, {}, { gateway: spyGateway() })
  const bob = await merchantWithKey(app, { name: 'Bob' })
  const own = [await createPayment(app), await createPayment(app)].map((p) => p.id)
  const bobs = await app.inject(withKey(postJson('/api/payments', { amount: 3, currency: 'EUR' }, 'bob-1'), bob.auth))
  t.equal(bobs.statusCode, 201)

  const aliceList = await app.inject('/api/payments?limit=100')
  t.equal(aliceList.statusCode, 200)
  t.same(aliceList.json().data.map((p: { id: string }) => p.id).sort(), [...own].sort())
  const bobList = await app.inject({ url: '/api/payments?limit=100', headers: bob.auth })
  t.same(bobList.json().data.map((p: { id: string }) => p.id), [bobs.json().id])
  const cursor = await app.inject({ url: `/api/payments?startingAfter=${own[0]}`, headers: bob.auth })
  t.equal(cursor.statusCode, 400, 'another merchant\'s payment is no cursor in this list')
  t.notOk(JSON.stringify(cursor.json()).includes('"amount"'), 'and reveals nothing of it')
})

t.test('the lifecycle routes need a merchant key: none is 401, the admin key 403', async (t) => {
  const app = await buildTestApp(t, {}, { gateway: spyGateway() })
  const payment = await createPayment(app)
  const routes = [
    { method: 'GET' as const, url: '/api/payments' },
    { method: 'POST' as const, url: refundsOf(payment.id) },
    { method: 'GET' as const, url: refundsOf(payment.id) },
    { method: 'POST' as const, url: `/api/payments/${payment.id}/cancel` }
  ]
  for (const route of routes) {
    const anonymous = await app.inject({ ...route, headers: { authorization: undefined } })
    t.equal(anonymous.statusCode, 401, `${route.method} ${route.url} without a key`)
    t.match(anonymous.headers['www-authenticate'], /^Bearer /)
    t.equal((await app.inject({ ...route, headers: ADMIN_AUTH })).statusCode, 403, `${route.method} ${route.url} with the admin key`)
  }
})
