import t from 'tap'
import { buildTestApp } from '../../helpers/app'
import { spyGateway, unavailable } from '../../helpers/gateway'
import { GatewayError } from '../../../src/gateway/types'
import { createPayment, PROBLEM, refundsOf } from '../../helpers/payments'

const cancel = (id: string) => ({ method: 'POST' as const, url: `/api/payments/${id}/cancel` })

t.test('cancel of a pending payment: voided under its downstream key, canceled, idempotent', async (t) => {
  const gateway = spyGateway(unavailable)
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, { amount: 10, currency: 'USD' })
  t.equal(payment.status, 503)
  const res = await app.inject(cancel(payment.id))
  t.equal(res.statusCode, 200)
  t.match(res.json(), { id: payment.id, status: 'canceled', amountRefunded: 0 })
  t.same(gateway.voids, [{ chargeIdempotencyKey: `payment-${payment.id}`, paymentId: payment.id }])
  const again = await app.inject(cancel(payment.id))
  t.equal(again.statusCode, 200)
  t.same(again.json(), res.json(), 'repeating the cancel answers the same')
  t.equal(gateway.voids.length, 1, 'no second void')
  t.equal((await app.inject({ method: 'POST', url: refundsOf(payment.id) })).statusCode, 409, 'a canceled payment is not refundable')
})

t.test('cancel finds the charge went through: it is refunded in full, the payment ends refunded', async (t) => {
  const gateway = spyGateway(unavailable, undefined, () => ({ outcome: 'charged', chargeId: 'ch_late' }))
  const app = await buildTestApp(t, {}, { gateway })
  const payment = await createPayment(app, { amount: 10, currency: 'USD' })
  const res = await app.inject(cancel(payment.id))
  t.equal(res.statusCode, 200)
  t.match(res.json(), { status: 'refunded', amountRefunded: 10 })
  const refunds = (await app.inject(refundsOf(payment.id))).json().data
  t.match(refunds, [{ amount: 10, reason: 'payment_canceled', status: 'succeeded' }])
  t.equal(gateway.refunds.length, 1)
  t.equal((await app.inject(cancel(payment.id))).statusCode, 200, 'a retry answers the refunded payment')
  t.equal(gateway.refunds.length, 1, 'never refunded twice')
})

t.test('cancel: settled payments 409, gateway outage 503, unknown 404', async (t) => {
  let voidDown = true
  const gateway = spyGateway(unavailable, undefined, () => {
    if (voidDown) throw new GatewayError('unavailable', 'down')
    return { outcome: 'voided' }
  })
  const app = await buildTestApp(t, {}, { gateway })
  const pending = await createPayment(app, { amount: 10, currency: 'USD' })
  const outage = await app.inject(cancel(pending.id))
  t.equal(outage.statusCode, 503)
  t.equal(outage.headers['retry-after'], '5')
  t.match(await app.payments.get(pending.id), { status: 'pending' })
  voidDown = false
  t.equal((await app.inject(cancel(pending.id))).json().status, 'canceled', 'the retry cancels')

  const ok = await buildTestApp(t, {}, { gateway: spyGateway() })
  const settled = await createPayment(ok, { amount: 10, currency: 'USD' })
  const refused = await ok.inject(cancel(settled.id))
  t.equal(refused.statusCode, 409)
  t.equal(refused.headers['content-type'], PROBLEM)
  t.match(refused.json(), { type: 'urn:problem-type:payment-not-cancelable', paymentStatus: 'succeeded' })
  t.equal((await ok.inject(cancel('00000000-0000-4000-8000-000000000000'))).statusCode, 404)
  t.equal((await ok.inject(cancel('nope'))).statusCode, 404)
})

t.test('simulated gateway: a 5001 payment is voided; a 5002 (charged, answer lost) is refunded', async (t) => {
  const app = await buildTestApp(t, { GATEWAY_TIMEOUT_MS: '50' })
  const unavailablePayment = await createPayment(app, { amount: 5001, currency: 'USD' })
  t.equal(unavailablePayment.status, 503)
  t.equal((await app.inject(cancel(unavailablePayment.id))).json().status, 'canceled')
  const lost = await createPayment(app, { amount: 5002, currency: 'USD' })
  t.equal(lost.status, 503)
  const canceled = await app.inject(cancel(lost.id))
  t.match(canceled.json(), { status: 'refunded', amountRefunded: 5002 })
})
