import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { ApiError, createClient, verifyWebhook, WebhookVerificationError, type Event, type PaymentServiceClient } from '../src/index.js'
import { ADMIN_API_KEY, eventually, listen, problemResponse, proxy, startService, type LocalServer, type Service } from './service.js'

let service: Service
let merchantId: string
let merchantKey: string
let client: PaymentServiceClient
const servers: LocalServer[] = []

before(async () => {
  service = await startService()
  const admin = createClient({ baseUrl: service.baseUrl, apiKey: ADMIN_API_KEY })
  const merchant = await admin.merchants.create({ name: 'SDK Shop', email: 'sdk-shop@example.com' })
  merchantId = merchant.id
  merchantKey = (await admin.apiKeys.create(merchant.id, { name: 'sdk tests' })).secret
  client = createClient({ baseUrl: service.baseUrl, apiKey: merchantKey })
})

after(async () => {
  await Promise.all(servers.map((server) => server.close()))
  await service?.stop()
})

async function paymentsWithAmount (amount: number): Promise<string[]> {
  const ids: string[] = []
  for await (const payment of client.payments.list()) if (payment.amount === amount) ids.push(payment.id)
  return ids
}

test('the admin creates a merchant and its key; the key pays', async () => {
  const payment = await client.payments.create({ amount: 10.1, currency: 'USD' })
  assert.equal(payment.status, 'succeeded')
  assert.equal(payment.amount, 10.1)
  assert.deepEqual(await client.payments.retrieve(payment.id), payment)
})

test('a replay under the same Idempotency-Key answers the same payment, charged once', async () => {
  const first = await client.payments.create({ amount: 11.11, currency: 'EUR' }, { idempotencyKey: 'order-1042' })
  const again = await client.api.POST('/api/payments', { body: { amount: 11.11, currency: 'EUR' }, headers: { 'Idempotency-Key': 'order-1042' } })
  assert.equal(again.response.status, 201)
  assert.equal(again.response.headers.get('idempotent-replayed'), 'true')
  assert.equal(again.data?.id, first.id)
  assert.deepEqual(await paymentsWithAmount(11.11), [first.id])
})

test('a refund, then the payment shows it', async () => {
  const payment = await client.payments.create({ amount: 20, currency: 'USD' })
  const refund = await client.payments.refunds.create(payment.id, { amount: 5 })
  assert.equal(refund.status, 'succeeded')
  assert.equal(refund.amount, 5)
  assert.equal((await client.payments.retrieve(payment.id)).amountRefunded, 5)
  const refunds = []
  for await (const listed of client.payments.refunds.list(payment.id)) refunds.push(listed.id)
  assert.deepEqual(refunds, [refund.id])
})

test('the async iterator walks every page, newest first, fetching each page once', async () => {
  const created = []
  for (let n = 0; n < 5; n++) created.push((await client.payments.create({ amount: 12.34, currency: 'USD' })).id)
  const pageRequests: string[] = []
  const counting = createClient({
    baseUrl: service.baseUrl,
    apiKey: merchantKey,
    fetch: (request) => { pageRequests.push(request.url); return fetch(request) }
  })
  const seen = []
  for await (const payment of counting.payments.list({ limit: 2 })) if (payment.amount === 12.34) seen.push(payment.id)
  assert.deepEqual(seen, created.reverse())
  assert.ok(pageRequests.length >= 3, `${pageRequests.length} pages of 2`)
  assert.equal(new Set(pageRequests).size, pageRequests.length, 'no page fetched twice')
  assert.match(pageRequests[1] ?? '', /startingAfter=/)

  let taken = 0
  for await (const payment of counting.payments.list({ limit: 2 })) { assert.ok(payment.id); if (++taken === 1) break }
  assert.equal(taken, 1, 'break stops the iteration')
})

test('a decline is an ApiError narrowed by its problem type', async () => {
  const error = await client.payments.create({ amount: 2500, currency: 'USD' }).then(() => undefined, (caught: unknown) => caught)
  assert.ok(error instanceof ApiError)
  assert.equal(error.status, 402)
  assert.ok(error.requestId)
  const problem = error.problem
  assert.equal(problem?.type, 'urn:problem-type:payment-declined')
  if (problem?.type !== 'urn:problem-type:payment-declined') return
  assert.equal(problem.declineCode, 'card_declined')
  assert.equal((await client.payments.retrieve(problem.paymentId)).status, 'declined')
})

test('an unknown payment is a problem typed by its status (404)', async () => {
  const error = await client.payments.refunds.create('00000000-0000-4000-8000-000000000000').then(() => undefined, (caught: unknown) => caught)
  assert.ok(error instanceof ApiError)
  assert.equal(error.status, 404)
  assert.equal(error.problem?.type, 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.5')
  assert.equal(error.envelope, undefined)
})

test('the products area answers errors in its envelope', async () => {
  const { error, response } = await client.api.GET('/products/{id}', { params: { path: { id: 'no-such-sku' } } })
  const apiError = new ApiError(response, error)
  assert.equal(apiError.status, 404)
  assert.equal(apiError.problem, undefined)
  assert.equal(apiError.envelope?.code, 'NOT_FOUND')
})

test('a 503 from the gateway is retried after Retry-After under the same key: one payment', async () => {
  const retrying = createClient({ baseUrl: service.baseUrl, apiKey: merchantKey, maxRetries: 1 })
  const started = Date.now()
  const error = await retrying.payments.create({ amount: 5001, currency: 'USD' }).then(() => undefined, (caught: unknown) => caught)
  assert.ok(error instanceof ApiError)
  assert.equal(error.status, 503)
  assert.equal(error.problem?.type, 'urn:problem-type:gateway-unavailable')
  const retryAfter = Number(error.headers.get('retry-after'))
  assert.ok(Date.now() - started >= retryAfter * 1000, `waited the Retry-After of ${retryAfter} s before the retry`)
  // A retry under a new key would have made a second pending payment.
  assert.equal((await paymentsWithAmount(5001)).length, 1)
})

test('503 and 409 idempotency-key-in-use before the service: retried with the key of the first attempt', async () => {
  const front = await proxy(service.baseUrl, [
    () => problemResponse(503, 'urn:problem-type:service-unavailable', 1),
    () => problemResponse(409, 'urn:problem-type:idempotency-key-in-use', 0)
  ])
  servers.push(front)
  const retrying = createClient({ baseUrl: front.url, apiKey: merchantKey, retryBaseDelayMs: 10 })
  const started = Date.now()
  const payment = await retrying.payments.create({ amount: 13.13, currency: 'USD' })
  assert.ok(Date.now() - started >= 1000, 'waited Retry-After: 1')
  assert.equal(front.received.length, 3)
  const keys = front.received.map((request) => String(request.headers['idempotency-key']))
  assert.match(String(keys[0]), /^[0-9a-f-]{36}$/)
  assert.deepEqual(keys, [keys[0], keys[0], keys[0]])
  assert.deepEqual(await paymentsWithAmount(13.13), [payment.id])
})

test('retries are bounded; a Retry-After beyond maxRetryAfterMs and a 409 of another kind are not retried', async () => {
  const unavailable = () => problemResponse(503, 'urn:problem-type:service-unavailable', 0)
  const front = await proxy(service.baseUrl, [unavailable, unavailable, unavailable,
    () => problemResponse(429, 'https://www.rfc-editor.org/rfc/rfc6585#section-4', 60),
    () => problemResponse(409, 'urn:problem-type:idempotency-key-reused', 0)])
  servers.push(front)
  const retrying = createClient({ baseUrl: front.url, apiKey: merchantKey, maxRetries: 2, retryBaseDelayMs: 10, maxRetryAfterMs: 5000 })
  const errorOf = (call: Promise<unknown>) => call.then(() => undefined, (error: unknown) => error instanceof ApiError ? error : undefined)
  const statusOf = async (call: Promise<unknown>) => (await errorOf(call))?.status
  const exhausted = await errorOf(retrying.payments.retrieve('00000000-0000-4000-8000-000000000000'))
  assert.equal(exhausted?.status, 503)
  assert.match(exhausted?.message ?? '', /3 attempts made/, 'the error says the retries ran out')
  assert.equal(front.received.length, 3, 'the first attempt and 2 retries')
  const tooLong = await errorOf(retrying.payments.create({ amount: 1, currency: 'USD' }))
  assert.equal(tooLong?.status, 429)
  assert.match(tooLong?.retryNotAttempted ?? '', /Retry-After asks for 60 s, more than maxRetryAfterMs \(5000 ms\)/)
  assert.match(tooLong?.message ?? '', /not retried: Retry-After/, 'and so does its message')
  assert.equal(front.received.length, 4, 'Retry-After: 60 is longer than maxRetryAfterMs')
  assert.equal(await statusOf(retrying.payments.create({ amount: 1, currency: 'USD' }, { idempotencyKey: 'reused' })), 409)
  assert.equal(front.received.length, 5)
  assert.equal(front.received[4]?.headers['idempotency-key'], 'reused')
})

test('webhooks: a delivery verified and typed per endpoint API version; a forged one refused', async () => {
  const receiver = await listen(() => new Response(null, { status: 204 }))
  servers.push(receiver)
  const current = await client.webhookEndpoints.create(merchantId, { url: `${receiver.url}/current`, enabledEvents: ['payment.succeeded'] })
  const legacy = await client.webhookEndpoints.create(merchantId, { url: `${receiver.url}/legacy`, enabledEvents: ['payment.succeeded'], apiVersion: '2026-11-01' })
  assert.equal(current.apiVersion, '2026-11-25')
  const payment = await client.payments.create({ amount: 14.14, currency: 'USD' })
  const deliveryTo = (path: string) => eventually(() => receiver.received.find((request) =>
    request.url === path && request.body.includes(payment.id)))

  const delivered = await deliveryTo('/current')
  const event: Event = verifyWebhook(delivered.body, delivered.headers, current.secret, { apiVersion: '2026-11-25' })
  assert.equal(event.id, String(delivered.headers['webhook-id']))
  assert.equal(event.type, 'payment.succeeded')
  if (event.type !== 'payment.succeeded') return
  assert.equal(event.data.id, payment.id)
  assert.equal(event.data.amount, 14.14)
  assert.deepEqual(event.resource, { type: 'payment', id: payment.id })
  assert.deepEqual(await client.events.retrieve(event.id), event)

  const old = await deliveryTo('/legacy')
  const legacyEvent = verifyWebhook(old.body, old.headers, legacy.secret, { apiVersion: '2026-11-01' })
  assert.equal(legacyEvent.type, 'payment.succeeded')
  if (legacyEvent.type !== 'payment.succeeded') return
  assert.equal(legacyEvent.data.id, payment.id)
  assert.equal(legacyEvent.timestamp, event.createdAt)

  const headers = new Headers(Object.entries(delivered.headers).map(([name, value]) => [name, String(value)]))
  assert.equal(verifyWebhook(delivered.body, headers, current.secret, { apiVersion: '2026-11-25' }).id, event.id, 'Fetch Headers work too')
  assert.throws(() => verifyWebhook(delivered.body.replace('14.14', '1414'), delivered.headers, current.secret), WebhookVerificationError)
  assert.throws(() => verifyWebhook(delivered.body, delivered.headers, legacy.secret), WebhookVerificationError)
  assert.throws(() => verifyWebhook(delivered.body, delivered.headers, current.secret, { apiVersion: '2026-11-01' }), /API version 2026-11-01/)
  assert.equal(verifyWebhook(old.body, old.headers, legacy.secret).apiVersion, '2026-11-01', 'by default, the version the delivery names')
  const { 'webhook-api-version': _named, ...unnamed } = old.headers
  assert.throws(() => verifyWebhook(old.body, unnamed, legacy.secret), /API version 2026-11-25/, 'a delivery naming none is read in the default version')

  const deliveries = []
  for await (const delivery of client.webhookEndpoints.deliveries(merchantId, current.id)) deliveries.push(delivery.eventId)
  assert.ok(deliveries.includes(event.id))
})

test('events iterate like every list', async () => {
  const types = new Set<string>()
  for await (const event of client.events.list({ type: 'payment.succeeded', limit: 3 })) types.add(event.type)
  assert.deepEqual([...types], ['payment.succeeded'])
})
