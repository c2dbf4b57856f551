import t from 'tap'
import { buildTestApp, merchantWithKey } from '../../helpers/app'

t.test('GET /api/payments?metadataKey&metadataValue: exact match on one entry, own payments only; one without the other is 400', async (t) => {
  const app = await buildTestApp(t)
  const create = async (metadata: Record<string, string>, headers: Record<string, string> = {}) => {
    const res = await app.inject({ method: 'POST', url: '/api/payments', headers, payload: { amount: 5, currency: 'EUR', metadata } })
    t.equal(res.statusCode, 201)
    return res.json().id as string
  }
  const wanted = await create({ orderId: 'A-1042', channel: 'web' })
  await create({ orderId: 'A-10420' })
  const bob = await merchantWithKey(app)
  await create({ orderId: 'A-1042' }, bob.auth)

  const found = await app.inject('/api/payments?metadataKey=orderId&metadataValue=A-1042')
  t.equal(found.statusCode, 200)
  t.same(found.json().data.map((p: { id: string }) => p.id), [wanted], 'not the longer value, not Bob\'s payment')
  t.same((await app.inject('/api/payments?metadataKey=orderId&metadataValue=nothing')).json().data, [])
  const withStatus = await app.inject('/api/payments?metadataKey=channel&metadataValue=web&status=declined')
  t.same(withStatus.json().data, [], 'combined with the other filters')

  const keyOnly = await app.inject('/api/payments?metadataKey=orderId')
  t.equal(keyOnly.statusCode, 400)
  t.match(keyOnly.json().errors, { metadataValue: [/required with metadataKey/] })
  const valueOnly = await app.inject('/api/payments?metadataValue=A-1042')
  t.equal(valueOnly.statusCode, 400)
  t.match(valueOnly.json().errors, { metadataKey: [/required with metadataValue/] })
})
