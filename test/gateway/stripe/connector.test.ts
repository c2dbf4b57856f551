import t, { type Test } from 'tap'
import { stripeConnector, stripeAddress, STRIPE_API_VERSION } from '../../../src/gateway/stripe/connector'
import { CredentialsRefusedError } from '../../../src/gateway/connectors'
import { GatewayError } from '../../../src/gateway/types'
import { FakeStripe } from '../../helpers/fake-stripe'
import { until } from '../../helpers/local-psp'
import { connectorContract } from '../connector-contract'

const SECRET = 'sk_test_fake'

async function fakeStripe (t: Test): Promise<FakeStripe> {
  const fake = await FakeStripe.start()
  t.teardown(async () => { await fake.close() })
  return fake
}

const charge = (paymentId: string, paymentMethod: string, amountMinor = 1000, currency = 'USD') => ({
  idempotencyKey: `payment:${paymentId}`,
  paymentId,
  paymentMethod,
  amountMinor,
  amount: (amountMinor / 100).toFixed(2),
  currency
})

async function rejection (promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => undefined, (cause: unknown) => cause)
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(error)}`)
  return error
}

t.test('the connector contract, against the local Stripe', async (t) => {
  connectorContract(t, async (t) => {
    const fake = await fakeStripe(t)
    return {
      gateway: stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 1000 }).gateway,
      approvedCharge: (paymentId, amount) => charge(paymentId, 'pm_card_visa', Math.round(Number(amount) * 100)),
      declinedCharge: (paymentId) => charge(paymentId, 'pm_card_chargeDeclined'),
      lostAnswerCharge: (paymentId) => {
        fake.failNext('hangAfterWork')
        return charge(paymentId, 'pm_card_visa')
      },
      chargesFor: async (paymentId) => fake.intentsOf(paymentId).length
    }
  })
})

t.test('a charge sends exactly the documented PaymentIntent, under our key and the account\'s secret key', async (t) => {
  const fake = await fakeStripe(t)
  const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 10_000 })
  const result = await gateway.charge({ ...charge('pay_1', 'pm_card_visa', 1050, 'EUR'), captureMethod: 'manual' })
  t.match(result, { outcome: 'authorized', chargeId: /^pi_/ })
  // The expanded charge's payment_method_details, kept to what a payment stores (no fingerprint, funding, checks).
  t.same(result.paymentMethodDetails, { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2034, country: 'US' } })
  t.equal(fake.requests.length, 1)
  const [request] = fake.requests
  t.match(request, { method: 'POST', path: '/v1/payment_intents' })
  t.same(request?.body, {
    amount: '1050',
    currency: 'eur',
    payment_method: 'pm_card_visa',
    confirm: 'true',
    off_session: 'true',
    capture_method: 'manual',
    metadata: { payment_id: 'pay_1' },
    expand: { 0: 'latest_charge' }
  })
  t.equal(request?.headers['idempotency-key'], 'payment:pay_1', 'the key derived from the payment, not the SDK\'s random one')
  t.equal(request?.headers.authorization, `Bearer ${SECRET}`)
  t.equal(request?.headers['stripe-version'], STRIPE_API_VERSION)
  t.match(request?.headers['content-type'], /^application\/x-www-form-urlencoded/)
})

t.test('amounts in Stripe\'s units: JPY is not multiplied, ISK is', async (t) => {
  const fake = await fakeStripe(t)
  const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 10_000 })
  await gateway.charge(charge('pay_jpy', 'pm_card_visa', 500, 'JPY'))
  await gateway.charge(charge('pay_isk', 'pm_card_visa', 5, 'ISK'))
  t.same(fake.requests.map((request) => [request.body.amount, request.body.currency]), [['500', 'jpy'], ['500', 'isk']])
  t.match(await gateway.charge(charge('pay_kwd', 'pm_card_visa', 5125, 'KWD')), { outcome: 'declined', declineCode: 'invalid_amount' })
  t.equal(fake.requests.length, 2, 'an amount Stripe cannot take is never sent')
})

t.test('declines: decline_code, else code; authentication required off-session is a decline', async (t) => {
  const fake = await fakeStripe(t)
  const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 10_000 })
  const generic = await gateway.charge(charge('pay_d1', 'pm_card_chargeDeclined'))
  t.match(generic, { outcome: 'declined', declineCode: 'generic_decline', chargeId: /^pi_/ })
  t.match(await gateway.charge(charge('pay_d2', 'pm_card_chargeDeclinedInsufficientFunds')), { outcome: 'declined', declineCode: 'insufficient_funds' })
  const authentication = await gateway.charge(charge('pay_d3', 'pm_card_authenticationRequired'))
  t.match(authentication, { outcome: 'declined', declineCode: 'authentication_required', chargeId: /^pi_/ })
  t.match(await gateway.retrieve({ chargeIdempotencyKey: 'payment:pay_d3', paymentId: 'pay_d3' }), { state: 'declined', declineCode: 'authentication_required' })
  t.match(await gateway.void({ chargeIdempotencyKey: 'payment:pay_d3', paymentId: 'pay_d3' }), { outcome: 'declined', declineCode: 'authentication_required' })
  t.match(await gateway.charge(charge('pay_d4', 'pm_unknown')), { outcome: 'declined', declineCode: 'resource_missing' }, 'an invalid request is Stripe\'s answer too')
})

t.test('error classification: only what Stripe certainly did not do is not_processed', async (t) => {
  t.test('a refused connection: not_processed connection_refused', async (t) => {
    const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: await FakeStripe.closedPortUrl(), timeoutMs: 10_000 })
    t.match(await rejection(gateway.charge(charge('pay_e1', 'pm_card_visa'))), { kind: 'not_processed', code: 'connection_refused' })
  })
  t.test('a server that stopped listening: not_processed', async (t) => {
    const fake = await fakeStripe(t)
    const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 10_000 })
    await fake.stopListening()
    t.match(await rejection(gateway.retrieve({ chargeIdempotencyKey: 'k', chargeReference: 'pi_x' })), { kind: 'not_processed', code: 'connection_refused' })
  })
  t.test('no such host: not_processed dns_failed', async (t) => {
    const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: 'https://stripe.invalid', timeoutMs: 3000 })
    t.match(await rejection(gateway.charge(charge('pay_e2', 'pm_card_visa'))), { kind: 'not_processed', code: 'dns_failed' })
  })
  t.test('401, 429, idempotency_error: not_processed, and nothing was charged', async (t) => {
    const fake = await fakeStripe(t)
    const refused = stripeConnector({ secretKey: 'sk_test_unknown' }, { apiUrl: fake.url, timeoutMs: 10_000 }).gateway
    t.match(await rejection(refused.charge(charge('pay_e3', 'pm_card_visa'))), { kind: 'not_processed', code: 'authentication_failed' })
    const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 10_000 })
    fake.failNext('rateLimit429')
    t.match(await rejection(gateway.charge(charge('pay_e4', 'pm_card_visa'))), { kind: 'not_processed', code: 'rate_limited' })
    t.equal(fake.intentsOf('pay_e3').length + fake.intentsOf('pay_e4').length, 0)
    await gateway.charge(charge('pay_e5', 'pm_card_visa'))
    const changed = { ...charge('pay_e5', 'pm_card_visa'), amountMinor: 2000 }
    t.match(await rejection(gateway.charge(changed)), { kind: 'not_processed', code: 'idempotency_error' })
  })
  t.test('500: unknown (unavailable), then resumed under the same key', async (t) => {
    const fake = await fakeStripe(t)
    const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 10_000 })
    fake.failNext('status500')
    t.match(await rejection(gateway.charge(charge('pay_e6', 'pm_card_visa'))), { kind: 'unavailable', code: 'server_error' })
    t.match(await gateway.charge(charge('pay_e6', 'pm_card_visa')), { outcome: 'succeeded' })
    t.same(fake.requests.map((request) => request.headers['idempotency-key']), ['payment:pay_e6', 'payment:pay_e6'])
  })
  t.test('no answer: timeout; the retry replays the same PaymentIntent', async (t) => {
    const fake = await fakeStripe(t)
    const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 200 })
    fake.failNext('hangAfterWork')
    t.match(await rejection(gateway.charge(charge('pay_e7', 'pm_card_visa'))), { kind: 'timeout', code: 'timeout' })
    const [made] = fake.intentsOf('pay_e7')
    t.match(await gateway.charge(charge('pay_e7', 'pm_card_visa')), { outcome: 'succeeded', chargeId: made?.id })
    t.equal(fake.intentsOf('pay_e7').length, 1)
  })
  t.test('dropped after the work: unknown (connection_lost), never retried behind our back; our replay finds the one PaymentIntent', async (t) => {
    const fake = await fakeStripe(t)
    const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 10_000 })
    fake.failNext('dropAfterWork')
    t.match(await rejection(gateway.charge(charge('pay_e8', 'pm_card_visa'))), { kind: 'unavailable', code: 'connection_lost' })
    t.equal(fake.requests.length, 1, 'the SDK did not send the reset request again')
    t.match(await gateway.charge(charge('pay_e8', 'pm_card_visa')), { outcome: 'succeeded' })
    t.same(fake.requests.map((request) => request.headers['idempotency-key']), ['payment:pay_e8', 'payment:pay_e8'])
    t.equal(fake.intentsOf('pay_e8').length, 1)
  })
  t.test('dropped after the work, then Stripe refuses connections: still unknown, never not_processed', async (t) => {
    const fake = await fakeStripe(t)
    const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 10_000 })
    fake.failNext('dropAfterWork')
    const lost = rejection(gateway.charge(charge('pay_e9', 'pm_card_visa')))
    await until(() => fake.requests.length === 1)
    await fake.stopListening()
    t.match(await lost, { kind: 'unavailable', code: 'connection_lost' })
    t.equal(fake.intentsOf('pay_e9').length, 1, 'Stripe charged once')
  })
  t.test('a call we give up on is aborted: the request ends, and Stripe is not asked again', async (t) => {
    const fake = await fakeStripe(t)
    const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 60_000 })
    fake.failNext('hangAfterWork')
    const giveUp = new AbortController()
    const call = rejection(gateway.charge(charge('pay_e10', 'pm_card_visa'), { signal: giveUp.signal }))
    await until(() => fake.requests.length === 1)
    giveUp.abort()
    t.match(await call, { kind: 'aborted' })
    await until(() => fake.openConnections() === 0)
    t.equal(fake.requests.length, 1)
  })
})

t.test('refunds, captures and voids send their documented requests under their keys', async (t) => {
  const fake = await fakeStripe(t)
  const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 10_000 })
  const paid = await gateway.charge(charge('pay_r1', 'pm_card_visa', 2000))
  fake.requests.length = 0
  const refund = { idempotencyKey: 'refund:re_1', chargeIdempotencyKey: 'payment:pay_r1', chargeReference: paid.chargeId, amountMinor: 700, amount: '7.00', currency: 'USD' }
  t.match(await gateway.refund(refund), { outcome: 'succeeded', gatewayRefundId: /^re_/ })
  t.match(fake.requests[0], { method: 'POST', path: '/v1/refunds', headers: { 'idempotency-key': 'refund:re_1' } })
  t.same(fake.requests[0]?.body, { payment_intent: paid.chargeId, amount: '700' })
  const named = await gateway.refund({ ...refund, idempotencyKey: 'refund:re_named', refundId: 'ref_1', paymentId: 'pay_r1', amountMinor: 100, amount: '1.00' })
  t.same(fake.requests.at(-1)?.body, { payment_intent: paid.chargeId, amount: '100', metadata: { refund_id: 'ref_1', payment_id: 'pay_r1' } },
    'our refund and payment ids travel in metadata, so Stripe\'s refund events name them back')
  t.same(fake.refunds.get(named.gatewayRefundId)?.metadata, { refund_id: 'ref_1', payment_id: 'pay_r1' })
  t.match(await gateway.refund({ ...refund, idempotencyKey: 'refund:re_2', amountMinor: 5000, amount: '50.00' }), { outcome: 'failed', failureCode: 'amount_too_large' })
  const { chargeReference: _refundReference, ...unreferencedRefund } = refund
  t.match(await gateway.refund({ ...unreferencedRefund, idempotencyKey: 'refund:re_3' }), { outcome: 'failed', failureCode: 'charge_not_found' })
  fake.failNext('refundPending')
  t.match(await rejection(gateway.refund({ ...refund, idempotencyKey: 'refund:re_4', amountMinor: 100, amount: '1.00' })), { kind: 'unavailable', code: 'refund_pending' }, 'pending is not an outcome yet')

  const held = await gateway.charge({ ...charge('pay_c1', 'pm_card_visa', 3000), captureMethod: 'manual' })
  fake.requests.length = 0
  const capture = { idempotencyKey: 'capture:cap_1', chargeIdempotencyKey: 'payment:pay_c1', chargeReference: held.chargeId, amountMinor: 2500, amount: '25.00', currency: 'USD' }
  t.match(await gateway.capture(capture), { outcome: 'captured', amountMinor: 2500 })
  t.match(fake.requests[0], { method: 'POST', path: `/v1/payment_intents/${held.chargeId}/capture`, headers: { 'idempotency-key': 'capture:cap_1' } })
  t.same(fake.requests[0]?.body, { amount_to_capture: '2500' })
  t.match(await gateway.capture({ ...capture, idempotencyKey: 'capture:cap_2' }), { outcome: 'captured', amountMinor: 2500 }, 'captured already (under another key): the PaymentIntent says so')
  const { chargeReference: _captureReference, ...unreferencedCapture } = capture
  t.match(await gateway.capture(unreferencedCapture), { outcome: 'failed', failureCode: 'authorization_not_found' })
  t.same(await gateway.void({ chargeIdempotencyKey: 'payment:pay_c1', chargeReference: held.chargeId }), { outcome: 'charged', chargeId: held.chargeId, amountCapturedMinor: 2500 },
    'captured for 2500 of 3000: a void finds the charge and what it took')

  const other = await gateway.charge({ ...charge('pay_v1', 'pm_card_visa', 3000), captureMethod: 'manual' })
  fake.requests.length = 0
  t.same(await gateway.void({ chargeIdempotencyKey: 'payment:pay_v1', paymentId: 'pay_v1' }), { outcome: 'voided' })
  t.match(fake.requests.map((request) => [request.method, request.path, request.query.query, request.headers['idempotency-key']]), [
    ['GET', '/v1/payment_intents/search', "metadata['payment_id']:'pay_v1'", undefined],
    ['POST', `/v1/payment_intents/${other.chargeId}/cancel`, undefined, 'payment:pay_v1:void']
  ])
  t.match(await gateway.capture({ ...capture, chargeReference: other.chargeId, idempotencyKey: 'capture:cap_3' }), { outcome: 'failed', failureCode: 'authorization_voided' })
  await t.rejects(gateway.void({ chargeIdempotencyKey: 'payment:x' }), { name: 'GatewayError', code: 'charge_not_identifiable' })
})

t.test('verify: GET /v1/balance; 401 and 403 refuse the credentials; unreachable is a GatewayError', async (t) => {
  const fake = await fakeStripe(t)
  await stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 10_000 }).verify()
  t.match(fake.requests, [{ method: 'GET', path: '/v1/balance', headers: { authorization: `Bearer ${SECRET}` } }])
  await t.rejects(stripeConnector({ secretKey: 'sk_test_wrong' }, { apiUrl: fake.url, timeoutMs: 10_000 }).verify(), CredentialsRefusedError)
  fake.keys.add('rk_test_restricted')
  fake.restrictedKeys.add('rk_test_restricted')
  await t.rejects(stripeConnector({ secretKey: 'rk_test_restricted' }, { apiUrl: fake.url, timeoutMs: 10_000 }).verify(), { name: 'CredentialsRefusedError', code: 'permission_denied' })
  const unreachable = stripeConnector({ secretKey: SECRET }, { apiUrl: await FakeStripe.closedPortUrl(), timeoutMs: 10_000 })
  await t.rejects(unreachable.verify(), { name: 'GatewayError', kind: 'not_processed' })
  t.throws(() => stripeConnector({}, { apiUrl: fake.url, timeoutMs: 10_000 }), CredentialsRefusedError)
})

t.test('the API URL becomes the SDK\'s host, port and protocol', async (t) => {
  t.same(stripeAddress('https://api.stripe.com'), { host: 'api.stripe.com', port: 443, protocol: 'https' })
  t.same(stripeAddress('http://127.0.0.1:12111'), { host: '127.0.0.1', port: 12111, protocol: 'http' })
  t.same(stripeAddress('http://[::1]:8080/'), { host: '::1', port: 8080, protocol: 'http' })
  t.same(stripeAddress('http://localhost'), { host: 'localhost', port: 80, protocol: 'http' })
  t.throws(() => stripeAddress('ftp://example.com'))
})

t.test('a lookup asks for the charge expanded and says what it carries of the card (by reference and by search)', async (t) => {
  const fake = await fakeStripe(t)
  const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 10_000 })
  const paid = await gateway.charge(charge('pay_d1', 'pm_card_visa'))
  const card = { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2034, country: 'US' } }
  fake.requests.length = 0
  t.same(await gateway.retrieve({ chargeIdempotencyKey: 'payment:pay_d1', chargeReference: paid.chargeId }),
    { state: 'captured', chargeId: paid.chargeId, amountCapturedMinor: 1000, paymentMethodDetails: card }, 'by reference: only the members a payment keeps')
  t.match(fake.requests.at(-1), { method: 'GET', path: `/v1/payment_intents/${paid.chargeId}`, query: { 'expand[0]': 'latest_charge' } })
  t.match(await gateway.retrieve({ chargeIdempotencyKey: 'payment:pay_d1', paymentId: 'pay_d1' }), { state: 'captured', paymentMethodDetails: card }, 'by search')
  t.match(fake.requests.at(-1), { method: 'GET', path: '/v1/payment_intents/search', query: { 'expand[0]': 'data.latest_charge' } })
  const declined = await gateway.charge(charge('pay_d2', 'pm_card_chargeDeclined'))
  t.notOk('paymentMethodDetails' in await gateway.retrieve({ chargeIdempotencyKey: 'payment:pay_d2', chargeReference: declined.chargeId }), 'a decline carries none')
})

t.test('found by search: the PaymentIntent that took money wins; one still processing is unknown', async (t) => {
  const fake = await fakeStripe(t)
  const { gateway } = stripeConnector({ secretKey: SECRET }, { apiUrl: fake.url, timeoutMs: 10_000 })
  await gateway.charge(charge('pay_s1', 'pm_card_chargeDeclined'))
  const paid = await gateway.charge({ ...charge('pay_s1', 'pm_card_visa'), idempotencyKey: 'payment:pay_s1:second' })
  t.match(await gateway.retrieve({ chargeIdempotencyKey: 'payment:pay_s1', paymentId: 'pay_s1' }), { state: 'captured', chargeId: paid.chargeId })
  const held = await gateway.charge({ ...charge('pay_s2', 'pm_card_visa'), captureMethod: 'manual' })
  const intent = fake.intents.get(held.chargeId)
  if (intent !== undefined) intent.status = 'processing'
  t.match(await rejection(gateway.retrieve({ chargeIdempotencyKey: 'payment:pay_s2', chargeReference: held.chargeId })), { kind: 'unavailable', code: 'charge_processing' })
  t.match(await rejection(gateway.void({ chargeIdempotencyKey: 'payment:pay_s2', chargeReference: held.chargeId })), { kind: 'unavailable', code: 'charge_processing' })
})
