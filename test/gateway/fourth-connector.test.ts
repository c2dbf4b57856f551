import t, { type Test } from 'tap'
import { buildTestApp, merchantWithKey } from '../helpers/app'
import { BUILT_IN_CONNECTORS } from '../../src/gateway/registry'
import { acmeModule, acmeSignature, type AcmeBook } from './fourth-connector/acme'

// Issue 39 item 1: a PSP is one module. A fourth one, written in a test folder alone (./fourth-connector/acme.ts),
// registered through buildApp's overrides, takes accounts, payments, refunds and its own signed events over HTTP with no other file changed.
// Responses are not checked against the committed openapi.yaml: that document is the built-in connectors' one, and
// `acme` is not in its ConnectorType; this instance's own document, which has it, is checked below instead.
async function setup (t: Test) {
  const book: AcmeBook = { charges: [], refunds: [], built: [], applied: [] }
  const app = await buildTestApp(t, { PUBLIC_BASE_URL: 'https://pay.example' }, { connectorModules: [...BUILT_IN_CONNECTORS, acmeModule(book)] }, { validateResponses: false })
  const merchant = await merchantWithKey(app)
  const add = async (payload: Record<string, unknown>) =>
    await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: merchant.auth, payload })
  return { app, book, merchant, add }
}

t.test('an account of the fourth type: its credentials are checked by its module, hinted, never returned', async (t) => {
  const { app, book, add } = await setup(t)
  const refused = await add({ type: 'acme', credentials: { token: 'not-a-token' } })
  t.equal(refused.statusCode, 400)
  t.match(refused.json(), { errors: { 'credentials.token': ['The token must be an Acme token: acme_test_… or acme_live_….'] } })
  t.notOk(refused.body.includes('not-a-token'), 'the problem never quotes the credentials')

  const unknownMember = await add({ type: 'acme', credentials: { token: 'acme_test_0123456789abcdef', password: 'x' } })
  t.equal(unknownMember.statusCode, 400, 'a member no connector module declares is refused by the credentials schema')

  const atPsp = await add({ type: 'acme', credentials: { token: 'acme_test_refused0123456789' } })
  t.equal(atPsp.statusCode, 400)
  t.match(atPsp.json(), { type: 'urn:problem-type:connector-credentials-refused' })

  const created = await add({ type: 'acme', credentials: { token: 'acme_test_0123456789abcdef' }, description: 'Acme EU' })
  t.equal(created.statusCode, 201)
  t.match(created.json(), { type: 'acme', status: 'enabled', description: 'Acme EU', credentialsHint: '…cdef' })
  t.notOk(created.body.includes('0123456789abcdef'))
  t.equal(book.built.length, 2, 'a connector built for each check the PSP answered')
  t.equal(book.built.at(-1), created.json().id, 'the last one for the new account\'s id')

  const docs = (await app.inject({ url: '/docs/json' })).json()
  t.same(docs.components.schemas.ConnectorType.enum, ['simulated', 'stripe', 'adyen', 'acme'], 'the instance\'s document lists the type')
  t.match(docs.components.schemas.ConnectorCredentials.properties.token, { type: 'string', maxLength: 80 })
})

t.test('payments route to it, charge with its token under our derived key, and refund through it', async (t) => {
  const { app, book, merchant, add } = await setup(t)
  const account = (await add({ type: 'acme', credentials: { token: 'acme_test_0123456789abcdef' } })).json()

  const paid = await app.inject({ method: 'POST', url: '/api/payments', headers: { ...merchant.auth, 'idempotency-key': 'order-4411' }, payload: { amount: 12.5, currency: 'EUR', paymentMethods: { acme: 'acme_pm_visa' } } })
  t.equal(paid.statusCode, 201)
  const payment = paid.json()
  t.match(payment, { status: 'succeeded', connector: { id: account.id, type: 'acme' }, attempts: [{ connectorId: account.id, connectorType: 'acme', outcome: 'succeeded' }] })
  t.equal(book.charges.length, 1)
  t.match(book.charges[0], { idempotencyKey: `payment-${String(payment.id)}`, amountMinor: 1250, currency: 'EUR', paymentMethod: 'acme_pm_visa' })

  const replay = await app.inject({ method: 'POST', url: '/api/payments', headers: { ...merchant.auth, 'idempotency-key': 'order-4411' }, payload: { amount: 12.5, currency: 'EUR', paymentMethods: { acme: 'acme_pm_visa' } } })
  t.equal(replay.json().id, payment.id, 'a retried request replays')
  t.equal(book.charges.length, 1, 'and charges nothing again')

  const refund = await app.inject({ method: 'POST', url: `/api/payments/${String(payment.id)}/refunds`, headers: merchant.auth, payload: { amount: 5 } })
  t.equal(refund.statusCode, 201)
  t.match(refund.json(), { status: 'succeeded', amount: 5 })
  t.equal(book.refunds.length, 1)
  t.match(book.refunds[0], { amountMinor: 500, currency: 'EUR', chargeIdempotencyKey: `payment-${String(payment.id)}`, chargeReference: `acme_ch_payment-${String(payment.id)}` })

  const declined = await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 3, currency: 'EUR', paymentMethods: { acme: 'acme_pm_declined' } } })
  t.equal(declined.statusCode, 402, 'its decline is a decline')
  t.match(declined.json(), { type: 'urn:problem-type:payment-declined' })
  const listed = (await app.inject({ url: '/api/payments?status=declined', headers: merchant.auth })).json()
  t.match(listed.data, [{ status: 'declined', attempts: [{ connectorType: 'acme', outcome: 'declined', code: 'card_declined' }] }])
})

t.test('its capabilities drive routing: no customer-present payment, no payment without its token', async (t) => {
  const { app, merchant, add } = await setup(t)
  await add({ type: 'acme', credentials: { token: 'acme_test_0123456789abcdef' } })
  const withoutToken = await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 3, currency: 'EUR' } })
  t.equal(withoutToken.statusCode, 400)
  t.match(withoutToken.json(), { errors: { paymentMethod: [/with a token of acme/] } })
  const present = await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 3, currency: 'EUR', paymentMethod: 'acme_pm_visa', returnUrl: 'https://shop.example/back' } })
  t.equal(present.statusCode, 409, 'a customer-present payment no connector of the merchant can take is a conflict')
  t.match(present.json(), { type: 'urn:problem-type:customer-present-unsupported', detail: /acme charge off-session only/ })
})

t.test('its webhook is served and documented from its module: a signed event settles a payment its time-out left pending, once', async (t) => {
  const { app, book, merchant, add } = await setup(t)
  const token = 'acme_test_0123456789abcdef'
  const account = (await add({ type: 'acme', credentials: { token } })).json()
  const slow = await app.inject({ method: 'POST', url: '/api/payments', headers: { ...merchant.auth, 'idempotency-key': 'order-slow' }, payload: { amount: 8, currency: 'EUR', paymentMethod: 'acme_pm_slow' } })
  t.equal(slow.statusCode, 503, 'Acme did not answer: the outcome is unknown')
  const paymentId = String(slow.json().paymentId)
  t.match((await app.inject({ url: `/api/payments/${paymentId}`, headers: merchant.auth })).json(), { status: 'pending', connector: { id: account.id, type: 'acme' } })

  const event = JSON.stringify({ id: 'evt_acme_1', type: 'charge.succeeded', paymentId, chargeId: 'acme_ch_slow' })
  const deliver = async (body: string, signature?: string) => await app.inject({
    method: 'POST',
    url: `/connectors/${String(account.id)}/acme-events`,
    headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { 'acme-signature': signature }) },
    payload: body
  })

  const unsigned = await deliver(event)
  t.equal(unsigned.statusCode, 401)
  t.match(unsigned.json(), { type: 'urn:problem-type:acme-event-unverified', title: 'The Acme event could not be verified.', status: 401 }, 'its own problem type')
  const forged = await deliver(event, acmeSignature('acme_test_someoneelse000', event))
  t.equal(forged.statusCode, 401)
  const malformed = await deliver(JSON.stringify({ id: 'evt_acme_2' }), acmeSignature(token, JSON.stringify({ id: 'evt_acme_2' })))
  t.equal(malformed.statusCode, 400, 'its body schema is checked')
  t.same(book.applied, [], 'nothing was acted on')

  const received = await deliver(event, acmeSignature(token, event))
  t.equal(received.statusCode, 200)
  t.same(received.json(), { ok: true }, 'the answer its module describes')
  t.match((await app.inject({ url: `/api/payments/${paymentId}`, headers: merchant.auth })).json(), { status: 'succeeded', connectorReference: 'acme_ch_slow' })
  const again = await deliver(event, acmeSignature(token, event))
  t.equal(again.statusCode, 200, 'a redelivery is answered')
  t.same(book.applied, ['evt_acme_1'], 'and acted on once')
  t.equal(book.charges.length, 1, 'nothing charged again')

  const docs = (await app.inject({ url: '/docs/json' })).json()
  const operation = docs.paths['/connectors/{connectorId}/acme-events'].post
  t.match(operation, { operationId: 'receiveAcmeEvent', security: [], requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/AcmeEvent' } } } } })
  t.ok(operation.responses['401'], 'its refusal is documented')
  t.match(docs.components.schemas.ProblemDetails.discriminator.mapping, { 'urn:problem-type:acme-event-unverified': '#/components/schemas/AcmeEventUnverifiedProblem' })
  t.ok(docs.components.schemas.AcmeEventReceived, 'its answer is a component')
  t.ok(docs.paths['/connectors/{connectorId}/stripe-events'], 'beside the built-in modules\' webhooks')
})

t.test('an instance refuses to start with a module whose URL settings the configuration never read, or whose problem type is the service\'s', async (t) => {
  const book: AcmeBook = { charges: [], refunds: [], built: [], applied: [] }
  const acme = acmeModule(book)
  await t.rejects(buildTestApp(t, {}, { connectorModules: [...BUILT_IN_CONNECTORS, { ...acme, urlSettings: [{ name: 'ACME_API_URL' }] }] }),
    /the acme connector module's setting ACME_API_URL was not read: give loadConfig the modules given to buildApp/)
  const inbound = acme.inbound
  if (inbound === undefined) throw new Error('acme receives events')
  const [own] = inbound.webhook.problemTypes ?? []
  if (own === undefined) throw new Error('acme has a problem type')
  const stealing = { ...acme, inbound: { ...inbound, webhook: { ...inbound.webhook, problemTypes: [{ ...own, type: 'urn:problem-type:payment-declined' }] } } }
  await t.rejects(buildTestApp(t, {}, { connectorModules: [...BUILT_IN_CONNECTORS, stealing] }),
    /the problem type ACME_EVENT_UNVERIFIED \(urn:problem-type:payment-declined\) of a connector module is one of the service's own/)
})
