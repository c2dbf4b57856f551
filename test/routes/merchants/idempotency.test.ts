import t from 'tap'
import { buildTestApp } from '../../helpers/app'

const merchant = { name: 'Acme', email: 'billing@acme.example', country: 'US' }

function create (key: string | undefined, body: unknown) {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (key !== undefined) headers['idempotency-key'] = key
  return { method: 'POST' as const, url: '/merchants', headers, payload: JSON.stringify(body) }
}

t.test('POST /merchants with an Idempotency-Key replays the 201 exactly, through the same plugin as payments', async (t) => {
  const app = await buildTestApp(t)
  const first = await app.inject(create('m-1', merchant))
  t.equal(first.statusCode, 201)
  const again = await app.inject(create('m-1', { country: 'US', email: 'billing@acme.example', name: 'Acme' }))
  t.equal(again.statusCode, 201)
  t.equal(again.body, first.body)
  t.equal(again.headers.location, first.headers.location)
  t.equal(again.headers.etag, first.headers.etag)
  t.equal(again.headers['idempotent-replayed'], 'true')
  const record = await app.db.idempotency.get({ scope: 'admin', method: 'POST', path: '/merchants', key: 'm-1' })
  t.equal(record?.recoveryPoint, 'finished', 'stored with the merchant, in one transaction')
})

t.test('POST /merchants: same key with another body is 409 reused; keys are scoped by path', async (t) => {
  const app = await buildTestApp(t)
  await app.inject(create('shared-key', merchant))
  const reused = await app.inject(create('shared-key', { ...merchant, name: 'Other' }))
  t.equal(reused.statusCode, 409)
  t.equal(reused.json().type, 'urn:problem-type:idempotency-key-reused')
  const payment = await app.inject({ method: 'POST', url: '/api/payments', headers: { 'idempotency-key': 'shared-key' }, payload: { amount: 1, currency: 'USD' } })
  t.equal(payment.statusCode, 201, 'the same key on another path is another key')
})

t.test('POST /merchants: a rejected request does not consume the key', async (t) => {
  const app = await buildTestApp(t)
  await app.inject(create(undefined, merchant))
  const taken = await app.inject(create('m-2', merchant))
  t.equal(taken.statusCode, 409)
  t.equal(taken.json().type, 'urn:problem-type:merchant-email-taken')
  const invalid = await app.inject(create('m-2', { ...merchant, email: 'not-an-email' }))
  t.equal(invalid.statusCode, 400)
  t.equal(await app.db.idempotency.get({ scope: 'admin', method: 'POST', path: '/merchants', key: 'm-2' }), undefined)
  const ok = await app.inject(create('m-2', { ...merchant, email: 'other@acme.example' }))
  t.equal(ok.statusCode, 201)
  t.notOk(ok.headers['idempotent-replayed'])
})

t.test('POST /merchants: a malformed key is a 400 problem naming Idempotency-Key', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.inject(create('é', merchant))
  t.equal(res.statusCode, 400)
  t.same(Object.keys(res.json().errors), ['Idempotency-Key'])
})
