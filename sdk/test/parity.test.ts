import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { ApiConnectionError, ApiError, createClient, signTestWebhook, verifyWebhook, WebhookVerificationError, type Payment, type PaymentServiceClient } from '../src/index.js'
import { ADMIN_API_KEY, eventually, listen, proxy, problemResponse, startService, type LocalServer, type Service } from './service.js'

/* Issue 42: what a stripe-node user expects of a client, each against the live service. */

let service: Service
let merchantId: string
let merchantKey: string
let admin: PaymentServiceClient
let client: PaymentServiceClient
const servers: Array<{ close: () => Promise<void> }> = []

before(async () => {
  service = await startService()
  admin = createClient({ baseUrl: service.baseUrl, apiKey: ADMIN_API_KEY })
  const merchant = await admin.merchants.create({ name: 'Parity Shop', email: 'parity@example.com' })
  merchantId = merchant.id
  merchantKey = (await admin.apiKeys.create(merchant.id, { name: 'parity' })).secret
  client = createClient({ baseUrl: service.baseUrl, apiKey: merchantKey })
})

after(async () => {
  await Promise.all(servers.map((server) => server.close()))
  await service?.stop()
})

/** A proxy that forwards the first `lost` requests to the service and answers each of them 503 (the answer is lost). */
async function losingProxy (lost: number): Promise<LocalServer> {
  let forwarded = 0
  const losing = await listen(async (request) => {
    const answer = await fetch(new URL(request.url, service.baseUrl), {
      method: request.method,
      headers: Object.entries(request.headers).flatMap(([name, value]) =>
        value === undefined || ['host', 'content-length', 'connection'].includes(name) ? [] : [[name, String(value)] as [string, string]]),
      body: request.method === 'GET' ? undefined : request.body
    })
    if (forwarded++ < lost) { await answer.body?.cancel(); return problemResponse(503, 'urn:problem-type:service-unavailable', 0) }
    return new Response(await answer.arrayBuffer(), { status: answer.status, headers: { 'content-type': answer.headers.get('content-type') ?? 'application/json', 'idempotent-replayed': answer.headers.get('idempotent-replayed') ?? 'false' } })
  })
  servers.push(losing)
  return losing
}

test('item 1: a retried apiKeys.create behind a proxy that answers 503 after forwarding makes one key', async () => {
  const losing = await losingProxy(2)
  const retrying = createClient({ baseUrl: losing.url, apiKey: ADMIN_API_KEY, maxRetries: 2, retryBaseDelayMs: 1 })
  const before = (await admin.apiKeys.list(merchantId)).data.length
  const created = await retrying.apiKeys.create(merchantId, { name: 'through a lossy proxy' })
  assert.equal(losing.received.length, 3, 'two answers lost, the third replayed')
  const keys = losing.received.map((request) => request.headers['idempotency-key'])
  assert.deepEqual(keys, [keys[0], keys[0], keys[0]], 'one Idempotency-Key for the call')
  assert.equal((await admin.apiKeys.list(merchantId)).data.length, before + 1, 'one key, not three')
  assert.match(created.secret, /^sk_/)
  const works = createClient({ baseUrl: service.baseUrl, apiKey: created.secret })
  assert.equal((await works.payments.create({ amount: 1.5, currency: 'USD' })).status, 'succeeded', 'the replayed secret is the key\'s')

  const endpoints = await losingProxy(1)
  const viaProxy = createClient({ baseUrl: endpoints.url, apiKey: merchantKey, retryBaseDelayMs: 1 })
  const endpoint = await viaProxy.webhookEndpoints.create(merchantId, { url: 'https://hooks.example.com/once' })
  assert.equal((await client.webhookEndpoints.list(merchantId)).data.filter((e) => e.url === 'https://hooks.example.com/once').length, 1)
  assert.match(endpoint.secret, /^whsec_/)
})

test('item 4: a server that never answers times out (client default or per call); a caller\'s signal aborts without retrying', async () => {
  const silent = await listen(() => new Promise<Response>(() => {}))
  servers.push(silent)
  const patient = createClient({ baseUrl: silent.url, apiKey: merchantKey, timeoutMs: 100, maxRetries: 1, retryBaseDelayMs: 1 })
  const error = await patient.payments.retrieve('00000000-0000-4000-8000-000000000000').then(() => undefined, (caught: unknown) => caught)
  assert.ok(error instanceof ApiConnectionError)
  assert.equal(error.timedOut, true)
  assert.equal(error.attempts, 2, 'a GET that timed out is retried')
  assert.match(error.message, /no answer within 100 ms/)
  assert.equal(silent.received.length, 2)

  const defaults = createClient({ baseUrl: silent.url, apiKey: merchantKey, maxRetries: 0 })
  const perCall = await defaults.payments.create({ amount: 1, currency: 'USD' }, { timeoutMs: 50 }).then(() => undefined, (caught: unknown) => caught)
  assert.ok(perCall instanceof ApiConnectionError && perCall.timedOut, 'the per-call time-out wins over the 80 s default')
  assert.match(String(perCall.idempotencyKey), /^[0-9a-f-]{36}$/, 'the error names the key to retry with')

  const controller = new AbortController()
  const received = silent.received.length
  const stopped = defaults.payments.retrieve('00000000-0000-4000-8000-000000000000', { signal: controller.signal, timeoutMs: 60_000 })
  await eventually(() => silent.received.length > received ? true : undefined)
  controller.abort()
  await assert.rejects(stopped, (caught: unknown) => caught instanceof Error && caught.name === 'AbortError')
  assert.equal(silent.received.length, received + 1, 'an abort is not retried')
})

/** A server whose first connection is destroyed without an answer; later requests are passed to the service. */
async function droppingServer (): Promise<{ url: string, keys: string[], close: () => Promise<void> }> {
  const keys: string[] = []
  let dropped = false
  const server = createServer((req, res) => {
    keys.push(String(req.headers['idempotency-key']))
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      if (!dropped) { dropped = true; req.socket.destroy(); return }
      const headers = Object.entries(req.headers).flatMap(([name, value]) =>
        value === undefined || ['host', 'content-length', 'connection'].includes(name) ? [] : [[name, String(value)] as [string, string]])
      fetch(new URL(req.url ?? '/', service.baseUrl), { method: req.method ?? 'GET', headers, body: req.method === 'GET' ? undefined : Buffer.concat(chunks) })
        .then(async (answer) => { res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer())) })
        .catch(() => res.writeHead(502).end())
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, keys, close: async () => { server.closeAllConnections(); await new Promise<void>((resolve) => server.close(() => resolve())) } }
}

test('item 9: a POST whose connection drops is retried under the same key (one payment); 429 Retry-After is honoured', async () => {
  const dropping = await droppingServer()
  servers.push(dropping)
  const retrying = createClient({ baseUrl: dropping.url, apiKey: merchantKey, retryBaseDelayMs: 1 })
  const payment = await retrying.payments.create({ amount: 9.09, currency: 'USD' })
  assert.equal(dropping.keys.length, 2)
  assert.equal(dropping.keys[0], dropping.keys[1], 'the retry carries the first attempt\'s key')
  const ids: string[] = []
  for await (const listed of client.payments.list()) if (listed.amount === 9.09) ids.push(listed.id)
  assert.deepEqual(ids, [payment.id])

  const limited = await proxy(service.baseUrl, [() => problemResponse(429, 'https://www.rfc-editor.org/rfc/rfc6585#section-4', 1)])
  servers.push(limited)
  const patient = createClient({ baseUrl: limited.url, apiKey: merchantKey, retryBaseDelayMs: 1, maxRetryDelayMs: 10 })
  assert.equal((await patient.payments.retrieve(payment.id)).id, payment.id, 'a Retry-After longer than the back-off cap is still honoured')
  assert.equal(limited.received.length, 2)

  const noRetry = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: merchantKey, maxRetries: 1, retryBaseDelayMs: 1 })
  const refused = await noRetry.merchants.update(merchantId, { name: 'x' }).then(() => undefined, (caught: unknown) => caught)
  assert.ok(refused instanceof ApiConnectionError)
  assert.equal(refused.attempts, 1, 'a PATCH without an Idempotency-Key is not sent again')
  assert.match(refused.message, /connection failed/)
})

test('item 2: helpers have declared types; a Payment is assignable as it is (the built .d.ts is checked strictly in package.test)', async () => {
  const payment: Payment = await client.payments.create({ amount: 3.3, currency: 'USD' })
  assert.equal(payment.status, 'succeeded')
})

test('item 6: apiVersion is a union of the document\'s versions', () => {
  // @ts-expect-error a typo does not compile
  const typo = createClient({ baseUrl: service.baseUrl, apiKey: merchantKey, apiVersion: '2026-11-52' })
  assert.ok(typo)
  assert.ok(createClient({ baseUrl: service.baseUrl, apiKey: merchantKey, apiVersion: '2026-11-01' }))
})

test('item 8: a 400\'s message carries its field errors', async () => {
  const error = await client.payments.create({ amount: -1, currency: 'USD' }).then(() => undefined, (caught: unknown) => caught)
  assert.ok(error instanceof ApiError)
  assert.equal(error.status, 400)
  const fields = Object.keys((error.problem && 'errors' in error.problem ? error.problem.errors : undefined) ?? {})
  assert.ok(fields.length > 0)
  for (const field of fields) assert.match(error.message, new RegExp(`${field}: `), `the message names ${field}`)
})

test('item 10: lastResponse gives requestId, idempotentReplayed and apiVersion; per-call headers are sent', async () => {
  const first = await client.payments.create({ amount: 4.4, currency: 'USD' }, { idempotencyKey: 'parity-10' })
  assert.ok(first.lastResponse.requestId)
  assert.equal(first.lastResponse.idempotentReplayed, false)
  assert.equal(first.lastResponse.apiVersion, '2026-11-25')
  assert.equal(first.lastResponse.status, 201)
  assert.equal(JSON.stringify(first).includes('lastResponse'), false, 'not part of the resource\'s JSON')
  const again = await client.payments.create({ amount: 4.4, currency: 'USD' }, { idempotencyKey: 'parity-10' })
  assert.equal(again.lastResponse.idempotentReplayed, true)
  assert.deepEqual(again, first)

  const recorder = await proxy(service.baseUrl, [])
  servers.push(recorder)
  const recorded = createClient({ baseUrl: recorder.url, apiKey: merchantKey })
  await recorded.payments.retrieve(first.id, { headers: { 'X-Trace': 'order-77' } })
  assert.equal(recorder.received[0]?.headers['x-trace'], 'order-77')
})

test('item 5: a client at 2026-11-25 for a merchant pinned to 2026-11-01 creates 2026-11-25 endpoints; verifyWebhook\'s default fits them', async () => {
  const pinned = await admin.merchants.create({ name: 'Old Shop', email: 'old@example.com', apiVersion: '2026-11-01' })
  const key = (await admin.apiKeys.create(pinned.id)).secret
  const current = createClient({ baseUrl: service.baseUrl, apiKey: key, apiVersion: '2026-11-25' })
  const receiver = await listen(() => new Response(null, { status: 204 }))
  servers.push(receiver)
  const endpoint = await current.webhookEndpoints.create(pinned.id, { url: `${receiver.url}/hook`, enabledEvents: ['payment.succeeded'] })
  assert.equal(endpoint.apiVersion, '2026-11-25')
  const payment = await current.payments.create({ amount: 5.5, currency: 'USD' })
  const delivered = await eventually(() => receiver.received.find((request) => request.body.includes(payment.id)))
  const event = verifyWebhook(delivered.body, delivered.headers, endpoint.secret)
  assert.equal(event.type, 'payment.succeeded')
})

test('item 5: verifyWebhook reads the version from the delivery (webhook-api-version), the caller\'s only when it names none', async () => {
  const pinned = await admin.merchants.create({ name: 'Older Shop', email: 'older@example.com', apiVersion: '2026-11-01' })
  const key = (await admin.apiKeys.create(pinned.id)).secret
  const latest = createClient({ baseUrl: service.baseUrl, apiKey: key, apiVersion: '2026-11-25' })
  const pinnedClient = createClient({ baseUrl: service.baseUrl, apiKey: key })
  const receiver = await listen(() => new Response(null, { status: 204 }))
  servers.push(receiver)
  const current = await latest.webhookEndpoints.create(pinned.id, { url: `${receiver.url}/current`, enabledEvents: ['payment.succeeded'] })
  const older = await pinnedClient.webhookEndpoints.create(pinned.id, { url: `${receiver.url}/older`, enabledEvents: ['payment.succeeded'] })
  assert.equal(current.apiVersion, '2026-11-25')
  assert.equal(older.apiVersion, '2026-11-01', 'a client without apiVersion creates endpoints in the merchant\'s pinned version')
  const payment = await latest.payments.create({ amount: 5.05, currency: 'USD' })
  const deliveryTo = (path: string) => eventually(() => receiver.received.find((request) => request.url === path && request.body.includes(payment.id)))
  const [toCurrent, toOlder] = await Promise.all([deliveryTo('/current'), deliveryTo('/older')])

  assert.equal(toCurrent.headers['webhook-api-version'], '2026-11-25', 'the delivery names the endpoint\'s version')
  const event = verifyWebhook(toCurrent.body, toCurrent.headers, current.secret)
  assert.equal(event.apiVersion, '2026-11-25')
  if (event.apiVersion !== '2026-11-25' || event.type !== 'payment.succeeded') throw new Error('narrowed to the current Event')
  assert.equal(event.id, toCurrent.headers['webhook-id'])
  assert.deepEqual(event.resource, { type: 'payment', id: payment.id })
  assert.equal(event.data.amount, 5.05)
  assert.deepEqual(JSON.parse(JSON.stringify(event)), JSON.parse(toCurrent.body), 'apiVersion is not part of the body')

  assert.equal(toOlder.headers['webhook-api-version'], '2026-11-01')
  const legacy = verifyWebhook(toOlder.body, toOlder.headers, older.secret)
  assert.equal(legacy.apiVersion, '2026-11-01', 'default options read the older body too')
  if (legacy.apiVersion !== '2026-11-01' || legacy.type !== 'payment.succeeded') throw new Error('narrowed to the 2026-11-01 body')
  assert.equal(legacy.timestamp, event.createdAt)
  assert.equal(legacy.data.id, payment.id)
  assert.deepEqual(Object.keys(legacy), ['type', 'timestamp', 'data', 'sequence'])

  assert.equal(verifyWebhook(toOlder.body, toOlder.headers, older.secret, { apiVersion: '2026-11-01' }).timestamp, legacy.timestamp, 'naming the same version is fine')
  assert.throws(() => verifyWebhook(toOlder.body, toOlder.headers, older.secret, { apiVersion: '2026-11-25' }), /the delivery is of API version 2026-11-01 \(webhook-api-version\), not API version 2026-11-25/)
  const { 'webhook-api-version': _named, ...unnamed } = toOlder.headers
  assert.equal(verifyWebhook(toOlder.body, unnamed, older.secret, { apiVersion: '2026-11-01' }).apiVersion, '2026-11-01', 'without the header, the caller\'s version')
  assert.throws(() => verifyWebhook(toOlder.body, { ...unnamed, 'webhook-api-version': '2030-01-01' }, older.secret), /2030-01-01 \(webhook-api-version\), unknown to this SDK/)
  assert.throws(() => verifyWebhook(toOlder.body, { ...unnamed, 'webhook-api-version': '2026-11-25' }, older.secret), /not an event of API version 2026-11-25/, 'the header is unsigned, but the body must fit it')
})

test('item 12: verifyWebhook takes Buffer and Uint8Array, a tolerance; signTestWebhook signs as the service does', async () => {
  const receiver = await listen(() => new Response(null, { status: 204 }))
  servers.push(receiver)
  const endpoint = await client.webhookEndpoints.create(merchantId, { url: `${receiver.url}/bytes`, enabledEvents: ['payment.succeeded'] })
  const payment = await client.payments.create({ amount: 12.12, currency: 'USD' })
  const delivered = await eventually(() => receiver.received.find((request) => request.url === '/bytes' && request.body.includes(payment.id)))
  const bytes = Buffer.from(delivered.body, 'utf8')
  assert.equal(verifyWebhook(bytes, delivered.headers, endpoint.secret).type, 'payment.succeeded', 'a Buffer')
  assert.equal(verifyWebhook(new Uint8Array(bytes), delivered.headers, endpoint.secret).type, 'payment.succeeded', 'a Uint8Array')

  const sentAt = new Date(Number(delivered.headers['webhook-timestamp']) * 1000)
  const later = new Date(sentAt.getTime() + 10 * 60_000)
  assert.throws(() => verifyWebhook(delivered.body, delivered.headers, endpoint.secret, { now: later }), WebhookVerificationError, 'ten minutes late: refused by default')
  assert.equal(verifyWebhook(delivered.body, delivered.headers, endpoint.secret, { now: later, toleranceSeconds: 900 }).type, 'payment.succeeded')

  const signed = signTestWebhook(delivered.body, endpoint.secret, { id: String(delivered.headers['webhook-id']), timestamp: sentAt })
  assert.deepEqual(signed['webhook-signature'].split(' '), String(delivered.headers['webhook-signature']).split(' ').slice(0, 1), 'the service\'s signature, byte for byte')
  const test = JSON.stringify({ ...JSON.parse(delivered.body) as object, id: 'evt_test' })
  assert.equal(verifyWebhook(test, signTestWebhook(test, endpoint.secret), endpoint.secret, { apiVersion: '2026-11-25' }).id, 'evt_test')
  const legacy = JSON.stringify({ type: 'payment.succeeded', timestamp: sentAt.toISOString(), data: { id: 'p_test' }, sequence: 1 })
  const legacyHeaders = signTestWebhook(legacy, endpoint.secret, { apiVersion: '2026-11-01' })
  assert.equal(legacyHeaders['webhook-api-version'], '2026-11-01')
  assert.equal(verifyWebhook(legacy, legacyHeaders, endpoint.secret).apiVersion, '2026-11-01', 'signTestWebhook names the version too')
  assert.throws(() => verifyWebhook(test, signTestWebhook(test, `whsec_${Buffer.from('another secret, 32 bytes long!!!').toString('base64')}`), endpoint.secret), /No matching signature/)
})

test('item 11: the document the service publishes does not forbid new response members; request bodies stay closed', async () => {
  const document = await (await fetch(`${service.baseUrl}/docs/json`)).json() as { components: { schemas: Record<string, { additionalProperties?: unknown }> } }
  const { Payment, Merchant, WebhookEndpoint, CreatePaymentRequest } = document.components.schemas
  assert.equal(Payment?.additionalProperties, undefined, 'a Payment may gain a member without a new version')
  assert.equal(Merchant?.additionalProperties, undefined)
  assert.equal(WebhookEndpoint?.additionalProperties, undefined)
  assert.equal(CreatePaymentRequest?.additionalProperties, false, 'an unknown request member is 400, and documented so')
  const payment = await client.payments.create({ amount: 6.6, currency: 'USD' })
  assert.equal(payment.status, 'succeeded')
})
