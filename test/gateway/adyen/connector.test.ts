import t, { type Test } from 'tap'
import { Types } from '@adyen/api-library'
import { adyenCheckoutUrl, adyenConnector, adyenDisputesBase, adyenIdempotencyKey, chargeResultOf, ADYEN_TEST_CHECKOUT_URL } from '../../../src/gateway/adyen/connector'
import { CredentialsRefusedError } from '../../../src/gateway/connectors'
import { GatewayError, type ChargeRequest } from '../../../src/gateway/types'
import { FAKE_ADYEN_API_KEY, FAKE_ADYEN_DISPUTES_PATH, FAKE_ADYEN_MERCHANT, FakeAdyen } from '../../helpers/fake-adyen'

const CREDENTIALS = { apiKey: FAKE_ADYEN_API_KEY, merchantAccount: FAKE_ADYEN_MERCHANT, hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056' }

async function fakeAdyen (t: Test): Promise<FakeAdyen> {
  const fake = await FakeAdyen.start()
  t.teardown(async () => { await fake.close() })
  return fake
}

const gatewayOn = (url: string, timeoutMs = 1000, credentials: Record<string, string> = CREDENTIALS) =>
  adyenConnector(credentials, { checkoutUrl: url, timeoutMs }).gateway

const charge = (paymentId: string, paymentMethod: string, amountMinor = 1000, currency = 'USD'): ChargeRequest => ({
  idempotencyKey: `payment-${paymentId}`,
  paymentId,
  paymentMethod,
  shopperReference: 'shopper_42',
  amountMinor,
  amount: (amountMinor / 100).toFixed(2),
  currency
})

async function rejection (promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => undefined, (cause: unknown) => cause)
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(error)}`)
  return error
}

t.test('a charge sends exactly the documented /payments request, under our key and the account\'s API key', async (t) => {
  const fake = await fakeAdyen(t)
  const gateway = gatewayOn(fake.url)
  const result = await gateway.charge(charge('pay_1', 'stored_visa', 1050, 'EUR'))
  const [payment] = fake.paymentsOf('pay_1')
  t.same(result, {
    outcome: 'succeeded',
    chargeId: payment?.pspReference,
    // paymentMethod.brand and additionalData's cardSummary, expiryDate, cardIssuingCountry; never the BIN or the holder's name.
    paymentMethodDetails: { type: 'card', card: { brand: 'visa', last4: '1111', expMonth: 3, expYear: 2030, country: 'NL' } }
  }, 'chargeId: the pspReference')
  t.equal(fake.requests.length, 1)
  const [request] = fake.requests
  t.match(request, { method: 'POST', path: '/v72/payments' })
  t.same(request?.body, {
    amount: { value: 1050, currency: 'EUR' },
    reference: 'pay_1',
    merchantAccount: FAKE_ADYEN_MERCHANT,
    paymentMethod: { type: 'scheme', storedPaymentMethodId: 'stored_visa' },
    shopperReference: 'shopper_42',
    shopperInteraction: 'ContAuth',
    recurringProcessingModel: 'UnscheduledCardOnFile',
    captureDelayHours: 0
  })
  t.equal(request?.headers['idempotency-key'], 'payment-pay_1', 'the key derived from the payment')
  t.equal(request?.headers['x-api-key'], FAKE_ADYEN_API_KEY)
  t.match(request?.headers['content-type'], /^application\/json/)

  const held = await gateway.charge({ ...charge('pay_2', 'stored_visa', 3000), captureMethod: 'manual' })
  t.match(held, { outcome: 'authorized', chargeId: fake.paymentsOf('pay_2')[0]?.pspReference })
  t.same(fake.requests[1]?.body.additionalData, { manualCapture: 'true' }, 'manual capture for this payment')
  t.equal(fake.requests[1]?.body.captureDelayHours, undefined)
  t.match(fake.paymentsOf('pay_2'), [{ status: 'authorised', manualCapture: true }])
})

t.test('amounts in Adyen\'s units: ISK and CLP in hundredths, IDR whole; an amount Adyen cannot take is never sent', async (t) => {
  const fake = await fakeAdyen(t)
  const gateway = gatewayOn(fake.url)
  await gateway.charge(charge('pay_isk', 'stored_visa', 5, 'ISK'))
  await gateway.charge(charge('pay_jpy', 'stored_visa', 500, 'jpy'))
  await gateway.charge(charge('pay_idr', 'stored_visa', 150000, 'IDR'))
  t.same(fake.requests.map((request) => request.body.amount), [{ value: 500, currency: 'ISK' }, { value: 500, currency: 'JPY' }, { value: 1500, currency: 'IDR' }])
  t.same(await gateway.charge(charge('pay_idr2', 'stored_visa', 150050, 'IDR')), { outcome: 'declined', chargeId: '', declineCode: 'invalid_amount' })
  t.equal(fake.requests.length, 3)
})

t.test('declines: Adyen\'s refusal reason code; a shopper action is authentication_required; a validation error is Adyen\'s errorCode', async (t) => {
  const fake = await fakeAdyen(t)
  const gateway = gatewayOn(fake.url)
  t.same(await gateway.charge(charge('pay_d1', 'stored_refused')), { outcome: 'declined', chargeId: fake.paymentsOf('pay_d1')[0]?.pspReference, declineCode: '2' })
  t.match(await gateway.charge(charge('pay_d2', 'stored_insufficient')), { outcome: 'declined', declineCode: '12' })
  t.match(await gateway.charge(charge('pay_d3', 'stored_3ds')), { outcome: 'declined', declineCode: 'authentication_required' })
  t.same(await gateway.charge(charge('pay_d4', 'stored_unknown')), { outcome: 'declined', chargeId: '', declineCode: '803' }, '422: an answer, no money moved')
  fake.owners.set('stored_visa', 'shopper_other')
  t.match(await gateway.charge(charge('pay_d5', 'stored_visa')), { outcome: 'declined', declineCode: '803' }, 'another shopper\'s stored method')
  t.match(await rejection(gateway.charge(charge('pay_d6', 'stored_pending'))), { kind: 'unavailable', code: 'charge_pending' }, 'Received: not an outcome yet')
})

t.test('without a stored method or a shopper reference, nothing is sent: not processed (the router tries the next connector)', async (t) => {
  const fake = await fakeAdyen(t)
  const gateway = gatewayOn(fake.url)
  const { shopperReference: _shopper, ...anonymous } = charge('pay_n1', 'stored_visa')
  t.match(await rejection(gateway.charge(anonymous)), { kind: 'not_processed', code: 'shopper_reference_missing' })
  const { paymentMethod: _method, ...methodless } = charge('pay_n2', 'stored_visa')
  t.match(await rejection(gateway.charge(methodless)), { kind: 'not_processed', code: 'payment_method_missing' })
  const controller = new AbortController()
  controller.abort()
  t.match(await rejection(gateway.charge(charge('pay_n3', 'stored_visa'), { signal: controller.signal })), { kind: 'aborted' })
  t.equal(fake.requests.length, 0)
})

t.test('error classification: only what Adyen certainly did not do is not_processed', async (t) => {
  t.test('a refused connection, a server that stopped listening, no such host: not_processed', async (t) => {
    t.match(await rejection(gatewayOn(await FakeAdyen.closedPortUrl()).charge(charge('pay_e1', 'stored_visa'))), { kind: 'not_processed', code: 'connection_refused' })
    const fake = await fakeAdyen(t)
    const gateway = gatewayOn(fake.url)
    await fake.stopListening()
    t.match(await rejection(gateway.capture({ idempotencyKey: 'k', chargeIdempotencyKey: 'c', chargeReference: 'X', amountMinor: 1, amount: '0.01', currency: 'USD' })),
      { kind: 'not_processed', code: 'connection_refused' })
    t.match(await rejection(gatewayOn('https://checkout.invalid', 3000).charge(charge('pay_e2', 'stored_visa'))), { kind: 'not_processed', code: 'dns_failed' })
  })
  t.test('401, 403, 429: not_processed, and nothing was charged', async (t) => {
    const fake = await fakeAdyen(t)
    t.match(await rejection(gatewayOn(fake.url, 1000, { ...CREDENTIALS, apiKey: 'AQEwrong' }).charge(charge('pay_e3', 'stored_visa'))), { kind: 'not_processed', code: 'authentication_failed' })
    t.match(await rejection(gatewayOn(fake.url, 1000, { ...CREDENTIALS, merchantAccount: 'SomeoneElse' }).charge(charge('pay_e4', 'stored_visa'))), { kind: 'not_processed', code: 'permission_denied' })
    fake.failNext('rateLimit429')
    t.match(await rejection(gatewayOn(fake.url).charge(charge('pay_e5', 'stored_visa'))), { kind: 'not_processed', code: 'rate_limited' })
    t.equal(fake.payments.size, 0)
  })
  t.test('500: unknown, then resumed under the same key', async (t) => {
    const fake = await fakeAdyen(t)
    const gateway = gatewayOn(fake.url)
    fake.failNext('status500')
    t.match(await rejection(gateway.charge(charge('pay_e6', 'stored_visa'))), { kind: 'unavailable', code: 'server_error' })
    t.match(await gateway.charge(charge('pay_e6', 'stored_visa')), { outcome: 'succeeded' })
    t.same(fake.requests.map((request) => request.headers['idempotency-key']), ['payment-pay_e6', 'payment-pay_e6'])
  })
  t.test('no answer: timeout; the retry replays the same payment', async (t) => {
    const fake = await fakeAdyen(t)
    const gateway = gatewayOn(fake.url, 200)
    fake.failNext('hangAfterWork')
    t.match(await rejection(gateway.charge(charge('pay_e7', 'stored_visa'))), { kind: 'timeout', code: 'timeout' })
    const [made] = fake.paymentsOf('pay_e7')
    t.match(await gateway.charge(charge('pay_e7', 'stored_visa')), { outcome: 'succeeded', chargeId: made?.pspReference })
    t.equal(fake.paymentsOf('pay_e7').length, 1)
  })
  t.test('dropped after the work: unknown (connection_lost), then the replay finds one payment', async (t) => {
    const fake = await fakeAdyen(t)
    const gateway = gatewayOn(fake.url)
    fake.failNext('dropAfterWork')
    t.match(await rejection(gateway.charge(charge('pay_e8', 'stored_visa'))), { kind: 'unavailable', code: 'connection_lost' })
    t.match(await gateway.charge(charge('pay_e8', 'stored_visa')), { outcome: 'succeeded' })
    t.equal(fake.paymentsOf('pay_e8').length, 1, 'one charge')
  })
  t.test('422 errorCode 704 (the key is still being processed): unknown, never a decline', async (t) => {
    const fake = await fakeAdyen(t)
    fake.failNext('inProgress704')
    t.match(await rejection(gatewayOn(fake.url).charge(charge('pay_e9', 'stored_visa'))), { kind: 'unavailable', code: 'request_in_progress' })
  })
})

t.test('captures, refunds and cancels: the documented requests under their keys, answered received', async (t) => {
  const fake = await fakeAdyen(t)
  const gateway = gatewayOn(fake.url)
  const held = await gateway.charge({ ...charge('pay_c1', 'stored_visa', 3000), captureMethod: 'manual' })
  fake.requests.length = 0
  const capture = { idempotencyKey: 'payment-pay_c1-capture-1', chargeIdempotencyKey: 'payment-pay_c1', chargeReference: held.chargeId, amountMinor: 2500, amount: '25.00', currency: 'USD' }
  const captured = await gateway.capture(capture)
  t.same(captured, { outcome: 'received', captureId: fake.modifications[0]?.pspReference }, 'captureId: the modification\'s pspReference')
  t.match(fake.requests[0], { method: 'POST', path: `/v72/payments/${held.chargeId}/captures`, headers: { 'idempotency-key': 'payment-pay_c1-capture-1', 'x-api-key': FAKE_ADYEN_API_KEY } })
  t.same(fake.requests[0]?.body, { merchantAccount: FAKE_ADYEN_MERCHANT, amount: { value: 2500, currency: 'USD' }, reference: 'payment-pay_c1-capture-1' })
  t.match(fake.modifications, [{ eventCode: 'CAPTURE', originalReference: held.chargeId, success: true, amount: { value: 2500 } }])
  t.same(await gateway.capture(capture), captured, 'repeated under its key: replayed, one capture')
  t.equal(fake.modifications.length, 1)
  const { chargeReference: _captureReference, ...unreferencedCapture } = capture
  t.same(await gateway.capture(unreferencedCapture), { outcome: 'failed', failureCode: 'authorization_not_found' })
  t.same(await gateway.capture({ ...capture, idempotencyKey: 'c-idr', amountMinor: 1, currency: 'IDR' }), { outcome: 'failed', failureCode: 'invalid_amount' })
  fake.failNext('invalid167')
  t.same(await gateway.capture({ ...capture, idempotencyKey: 'c-167' }), { outcome: 'failed', failureCode: '167' }, 'a validation answer: failed, nothing captured')

  fake.requests.length = 0
  const refund = { idempotencyKey: 'refund-re_1', refundId: 're_1', paymentId: 'pay_c1', chargeIdempotencyKey: 'payment-pay_c1', chargeReference: held.chargeId, amountMinor: 700, amount: '7.00', currency: 'USD' }
  const refunded = await gateway.refund(refund)
  t.same(refunded, { outcome: 'received', gatewayRefundId: fake.modifications.at(-1)?.pspReference })
  t.match(fake.requests[0], { method: 'POST', path: `/v72/payments/${held.chargeId}/refunds`, headers: { 'idempotency-key': 'refund-re_1' } })
  t.same(fake.requests[0]?.body, { merchantAccount: FAKE_ADYEN_MERCHANT, amount: { value: 700, currency: 'USD' }, reference: 're_1' }, 'reference: our refund id, as the REFUND notification names it back')
  t.same(await gateway.refund(refund), refunded, 'repeated under its key')
  const { refundId: _refundId, ...unnamed } = refund
  await gateway.refund({ ...unnamed, idempotencyKey: 'refund-re_2' })
  t.equal(fake.requests.at(-1)?.body.reference, 'refund-re_2', 'without a refund id: the key')
  const { chargeReference: _refundReference, ...unreferencedRefund } = refund
  t.same(await gateway.refund(unreferencedRefund), { outcome: 'failed', gatewayRefundId: '', failureCode: 'charge_not_found' })
  t.same(await gateway.refund({ ...refund, idempotencyKey: 'r-cve', amountMinor: 1, currency: 'CVE' }), { outcome: 'failed', gatewayRefundId: '', failureCode: 'invalid_amount' })
  fake.failNext('invalid167')
  t.same(await gateway.refund({ ...refund, idempotencyKey: 'r-167' }), { outcome: 'failed', gatewayRefundId: '', failureCode: '167' })
  fake.failNext('status500')
  t.match(await rejection(gateway.refund({ ...refund, idempotencyKey: 'r-500' })), { kind: 'unavailable', code: 'server_error' })

  const other = await gateway.charge({ ...charge('pay_v1', 'stored_visa', 3000), captureMethod: 'manual' })
  fake.requests.length = 0
  t.same(await gateway.void({ chargeIdempotencyKey: 'payment-pay_v1', paymentId: 'pay_v1', chargeReference: other.chargeId }), { outcome: 'received' })
  t.same(await gateway.void({ chargeIdempotencyKey: 'payment-pay_v2', paymentId: 'pay_v2' }), { outcome: 'received' })
  t.same(await gateway.void({ chargeIdempotencyKey: 'payment-pay_v3', chargeReference: 'FAKE000000000999' }), { outcome: 'received' })
  t.same(fake.requests.map((request) => [request.path, request.headers['idempotency-key'], request.body]), [
    [`/v72/payments/${other.chargeId}/cancels`, 'payment-pay_v1:void', { merchantAccount: FAKE_ADYEN_MERCHANT, reference: 'pay_v1' }],
    ['/v72/cancels', 'payment-pay_v2:void', { merchantAccount: FAKE_ADYEN_MERCHANT, paymentReference: 'pay_v2', reference: 'pay_v2' }],
    ['/v72/payments/FAKE000000000999/cancels', 'payment-pay_v3:void', { merchantAccount: FAKE_ADYEN_MERCHANT, reference: 'payment-pay_v3' }]
  ])
  t.match(fake.paymentsOf('pay_v1'), [{ status: 'cancelled' }])
  t.match(await rejection(gateway.void({ chargeIdempotencyKey: 'payment-x' })), { kind: 'unavailable', code: 'charge_not_identifiable' })
  fake.failNext('invalid167')
  t.match(await rejection(gateway.void({ chargeIdempotencyKey: 'payment-pay_v4', paymentId: 'pay_v4' })), { kind: 'unavailable', code: 'invalid_request' })
  t.match(await rejection(gateway.retrieve({ chargeIdempotencyKey: 'payment-pay_v1', chargeReference: other.chargeId })), { kind: 'unavailable', code: 'retrieve_not_supported' })
})

t.test('verify: POST /paymentMethods for the merchant account; 401 and 403 refuse the credentials; unreachable is a GatewayError', async (t) => {
  const fake = await fakeAdyen(t)
  await adyenConnector(CREDENTIALS, { checkoutUrl: fake.url, timeoutMs: 1000 }).verify()
  t.match(fake.requests, [{ method: 'POST', path: '/v72/paymentMethods', headers: { 'x-api-key': FAKE_ADYEN_API_KEY } }])
  t.same(fake.requests[0]?.body, { merchantAccount: FAKE_ADYEN_MERCHANT })
  await t.rejects(adyenConnector({ ...CREDENTIALS, apiKey: 'AQEwrong' }, { checkoutUrl: fake.url, timeoutMs: 1000 }).verify(), { name: 'CredentialsRefusedError', code: 'authentication_failed' })
  await t.rejects(adyenConnector({ ...CREDENTIALS, merchantAccount: 'SomeoneElse' }, { checkoutUrl: fake.url, timeoutMs: 1000 }).verify(), { name: 'CredentialsRefusedError', code: 'permission_denied' })
  await t.rejects(adyenConnector(CREDENTIALS, { checkoutUrl: await FakeAdyen.closedPortUrl(), timeoutMs: 1000 }).verify(), { name: 'GatewayError', kind: 'not_processed' })
  t.throws(() => adyenConnector({ merchantAccount: FAKE_ADYEN_MERCHANT }, { timeoutMs: 1000 }), CredentialsRefusedError)
  t.throws(() => adyenConnector({ apiKey: FAKE_ADYEN_API_KEY }, { timeoutMs: 1000 }), CredentialsRefusedError)
})

t.test('the Checkout URL: ADYEN_CHECKOUT_URL, else the live prefix\'s endpoint, else Adyen\'s test endpoint', async (t) => {
  t.equal(adyenCheckoutUrl(CREDENTIALS), ADYEN_TEST_CHECKOUT_URL)
  t.equal(adyenCheckoutUrl({ ...CREDENTIALS, liveUrlPrefix: '1797a841fbb37ca7-AdyenDemo' }), 'https://1797a841fbb37ca7-AdyenDemo-checkout-live.adyenpayments.com/checkout')
  t.equal(adyenCheckoutUrl({ ...CREDENTIALS, liveUrlPrefix: 'abc-Co' }, 'http://127.0.0.1:9'), 'http://127.0.0.1:9')
  t.equal(adyenCheckoutUrl(CREDENTIALS, ''), ADYEN_TEST_CHECKOUT_URL)
})

t.test('acceptDispute: the documented Disputes API request at ADYEN_DISPUTES_URL under our key; success false is a refusal; 5xx unknown', async (t) => {
  const fake = await fakeAdyen(t)
  fake.disputes.set('DSP0001', 'open')
  const gateway = adyenConnector(CREDENTIALS, { checkoutUrl: fake.url, disputesUrl: `${fake.url}${FAKE_ADYEN_DISPUTES_PATH}/v30`, timeoutMs: 1000 }).gateway
  t.same(await gateway.acceptDispute?.({ disputeReference: 'DSP0001', idempotencyKey: 'dispute-019aaa10-0b1c-7d2e-8f30-415263748596:accept' }), { outcome: 'accepted' })
  t.match(fake.requests, [{
    method: 'POST',
    path: `${FAKE_ADYEN_DISPUTES_PATH}/v30/acceptDispute`,
    headers: { 'x-api-key': FAKE_ADYEN_API_KEY, 'idempotency-key': 'dispute-019aaa10-0b1c-7d2e-8f30-415263748596:accept' },
    body: { disputePspReference: 'DSP0001', merchantAccountCode: FAKE_ADYEN_MERCHANT }
  }])
  t.same(Object.keys(fake.requests[0]?.body ?? {}).sort(), ['disputePspReference', 'merchantAccountCode'], 'nothing else is sent')
  t.equal(fake.disputes.get('DSP0001'), 'accepted')
  t.same(await gateway.acceptDispute?.({ disputeReference: 'DSP0001', idempotencyKey: 'dispute-x:accept' }), { outcome: 'refused', reason: 'Dispute is already closed' })
  t.same(await gateway.acceptDispute?.({ disputeReference: 'NOSUCH', idempotencyKey: 'dispute-y:accept' }), { outcome: 'refused', reason: 'Could not find dispute' })
  fake.failNext('status500')
  t.match(await rejection(gateway.acceptDispute?.({ disputeReference: 'DSP0001', idempotencyKey: 'dispute-z:accept' }) ?? Promise.resolve()), { kind: 'unavailable' })
  const refused = adyenConnector(CREDENTIALS, { checkoutUrl: fake.url, disputesUrl: await FakeAdyen.closedPortUrl(), timeoutMs: 1000 }).gateway
  t.match(await rejection(refused.acceptDispute?.({ disputeReference: 'DSP0001', idempotencyKey: 'dispute-z:accept' }) ?? Promise.resolve()), { kind: 'not_processed' })
})

t.test('the Disputes API base: ADYEN_DISPUTES_URL (its version is the library\'s), else ca-live for a live account, else ca-test', async (t) => {
  t.equal(adyenDisputesBase(CREDENTIALS), 'https://ca-test.adyen.com/ca/services/DisputeService')
  t.equal(adyenDisputesBase({ ...CREDENTIALS, liveUrlPrefix: 'abc-Co' }), 'https://ca-live.adyen.com/ca/services/DisputeService')
  t.equal(adyenDisputesBase(CREDENTIALS, 'http://127.0.0.1:9/ca/services/DisputeService/v30/'), 'http://127.0.0.1:9/ca/services/DisputeService')
  t.equal(adyenDisputesBase(CREDENTIALS, 'http://127.0.0.1:9/disputes'), 'http://127.0.0.1:9/disputes')
})

t.test('idempotency keys: ours as they are up to Adyen\'s 64 characters, longer ones by their SHA-256 (derived, stable)', async (t) => {
  t.equal(adyenIdempotencyKey('payment-0190f5a2-7c1e-7b3d-9a4f-1c2d3e4f5a6b-capture-1'), 'payment-0190f5a2-7c1e-7b3d-9a4f-1c2d3e4f5a6b-capture-1')
  const long = `payment-${'x'.repeat(80)}`
  t.equal(adyenIdempotencyKey(long), adyenIdempotencyKey(long))
  t.ok(adyenIdempotencyKey(long).length <= 64)
  t.not(adyenIdempotencyKey(long), adyenIdempotencyKey(`${long}y`))
})

t.test('result codes: Error and Cancelled are declines; PartiallyAuthorised and the unexpected are unknown', async (t) => {
  const code = Types.checkout.PaymentResponse.ResultCodeEnum
  t.same(chargeResultOf({ resultCode: code.Error, pspReference: 'P1', refusalReasonCode: '905' }, false), { outcome: 'declined', chargeId: 'P1', declineCode: '905' })
  t.same(chargeResultOf({ resultCode: code.Error }, false), { outcome: 'declined', chargeId: '', declineCode: 'error' })
  t.same(chargeResultOf({ resultCode: code.Refused, pspReference: 'P2' }, false), { outcome: 'declined', chargeId: 'P2', declineCode: 'refused' })
  t.same(chargeResultOf({ resultCode: code.Cancelled, pspReference: 'P3' }, true), { outcome: 'declined', chargeId: 'P3', declineCode: 'cancelled' })
  t.throws(() => chargeResultOf({ resultCode: code.PartiallyAuthorised, pspReference: 'P4' }, false), { name: 'GatewayError', kind: 'unavailable', code: 'charge_unexpected_result' })
  t.throws(() => chargeResultOf({}, false), { name: 'GatewayError', code: 'charge_unexpected_result' })
  t.throws(() => chargeResultOf({ resultCode: code.Authorised }, false), { name: 'GatewayError', code: 'reference_missing' })
})
