/** GET /api/events?paymentId (issue 44): one payment's events and its refunds', the merchant's own only. */
import t from 'tap'
import { buildTestApp, merchantWithKey } from '../../helpers/app'

t.test('GET /api/events?paymentId: the payment\'s events and its refunds\', newest first; with type; another merchant\'s payment has none', async (t) => {
  const app = await buildTestApp(t)
  const pay = async (headers: Record<string, string> = {}) => {
    const res = await app.inject({ method: 'POST', url: '/api/payments', headers, payload: { amount: 20, currency: 'EUR' } })
    t.equal(res.statusCode, 201)
    return res.json().id as string
  }
  const wanted = await pay()
  const other = await pay()
  const refund = await app.inject({ method: 'POST', url: `/api/payments/${wanted}/refunds`, payload: { amount: 5 } })
  t.equal(refund.statusCode, 201)
  await app.inject({ method: 'POST', url: `/api/payments/${other}/refunds`, payload: { amount: 1 } })
  const bob = await merchantWithKey(app)
  await pay(bob.auth)

  const events = await app.inject(`/api/events?paymentId=${wanted.toUpperCase()}&limit=100`)
  t.equal(events.statusCode, 200)
  const found = events.json().data as Array<{ type: string, resource: { type: string, id: string }, data: { paymentId?: string } }>
  t.same(found.map((event) => event.type), ['refund.succeeded', 'payment.succeeded'], 'newest first, any letter case of the id')
  t.equal(found[0]?.resource.id, refund.json().id)
  t.equal(found[1]?.resource.id, wanted)
  t.same((await app.inject(`/api/events?paymentId=${wanted}&type=payment.succeeded`)).json().data.map((e: { resource: { id: string } }) => e.resource.id), [wanted])
  t.same((await app.inject({ url: `/api/events?paymentId=${wanted}`, headers: bob.auth })).json().data, [], 'not Bob\'s to see')
  t.equal((await app.inject('/api/events?paymentId=not-a-guid')).statusCode, 400)
})
