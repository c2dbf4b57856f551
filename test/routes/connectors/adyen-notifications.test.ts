import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import { buildTestApp, merchantWithKey, ADMIN_AUTH, type MerchantCredentials } from '../../helpers/app'
import { spyGateway, type SpyGateway } from '../../helpers/gateway'
import { manualClock } from '../../helpers/payments'
import { adyenAccount, HMAC_KEY, notificationBody, notificationItem } from '../../helpers/adyen-notifications'
import type { App } from '../../../app/app'
import type { ConnectorFactory } from '../../../src/gateway/connectors'
import { GatewayError, type ChargeRequest, type ChargeResult } from '../../../src/gateway/types'
import type { AdyenNotificationItem } from '../../../src/gateway/adyen/notifications'
import { adyenNotificationService, type AdyenNotificationService } from '../../../src/gateway/adyen/inbound'
import { inboundPortsOf } from '../../../plugins/services'

/** The app's Adyen applier itself, over the app's services (the route reaches it through app.connectorEvents). */
function notificationsOf (app: App): AdyenNotificationService {
  return adyenNotificationService(inboundPortsOf(app))
}

const NO_KEY = { authorization: undefined }

interface Setup {
  app: App
  gateway: SpyGateway
  merchant: MerchantCredentials
  connectorId: string
  url: string
  lines: string[]
  /** What the next charges answer (default: Adyen authorises, reference PSP-{paymentId}). */
  charge: { next: (request: ChargeRequest) => Promise<ChargeResult> }
}

const pspOf = (paymentId: string): string => `PSP-${paymentId}`

/** An app whose adyen account's gateway answers captures, refunds and cancels `received`, as Adyen does. */
async function setup (t: Test, overrides: { clock?: () => number } = {}, env: Record<string, string> = {}): Promise<Setup> {
  const charge: Setup['charge'] = {
    next: async (request) => ({ outcome: request.captureMethod === 'manual' ? 'authorized' : 'succeeded', chargeId: pspOf(request.paymentId) })
  }
  const gateway = spyGateway(
    async (request) => await charge.next(request),
    (request) => ({ outcome: 'received', gatewayRefundId: `REF-${request.idempotencyKey}` }),
    () => ({ outcome: 'received' }),
    { capture: (request) => ({ outcome: 'received', captureId: `CAP-${request.idempotencyKey}` }) }
  )
  const factory: ConnectorFactory = () => ({ gateway, verify: async () => {} })
  const lines: string[] = []
  const logger = { level: 'info', stream: new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } }) }
  const app = await buildTestApp(t, env, { connectorFactory: factory, logger, ...overrides })
  const merchant = await merchantWithKey(app)
  const connectorId = await adyenAccount(app, merchant.merchantId)
  return { app, gateway, merchant, connectorId, url: `/connectors/${connectorId}/adyen-notifications`, lines, charge }
}

async function deliver (s: Setup, ...items: AdyenNotificationItem[]) {
  return await s.app.inject({ method: 'POST', url: s.url, headers: { ...NO_KEY, 'content-type': 'application/json' }, payload: notificationBody(...items) as object })
}

async function pay (s: Setup, fields: Record<string, unknown> = {}) {
  return await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 10, currency: 'USD', paymentMethod: 'stored-1', ...fields } })
}

async function paymentOf (s: Setup, id: string) {
  return (await s.app.inject({ method: 'GET', url: `/api/payments/${id}`, headers: s.merchant.auth })).json()
}

async function eventTypes (s: Setup, resourceId: string): Promise<string[]> {
  const page = await s.app.db.events.list({ merchantId: s.merchant.merchantId, limit: 100 })
  return page.data.filter((e) => e.resourceId === resourceId).map((e) => e.type).reverse()
}

/** An authorization (manual capture) whose capture Adyen received: the capture is reserved, 202. */
async function captureReceived (s: Setup, amount = 7.5): Promise<string> {
  const created = await pay(s, { captureMethod: 'manual' })
  t.equal(created.statusCode, 201)
  const id = created.json().id as string
  const capture = await s.app.inject({ method: 'POST', url: `/api/payments/${id}/capture`, headers: s.merchant.auth, payload: { amount } })
  t.equal(capture.statusCode, 202)
  return id
}

/** A succeeded payment with a refund of 4.00 that Adyen received (pending). */
async function refundReceived (s: Setup): Promise<{ paymentId: string, refundId: string }> {
  const created = await pay(s)
  const paymentId = created.json().id as string
  const refund = await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/refunds`, headers: s.merchant.auth, payload: { amount: 4 } })
  t.equal(refund.statusCode, 202)
  return { paymentId, refundId: refund.json().id as string }
}

t.test('no API key: verified items are answered [accepted] as text/plain; other event codes are recorded and ignored', async (t) => {
  const s = await setup(t)
  t.equal(s.app.routeAccess().find((route) => route.url === '/connectors/:connectorId/adyen-notifications')?.auth, 'public')
  const item = notificationItem({ eventCode: 'REPORT_AVAILABLE', merchantReference: 'report', pspReference: 'REPORT1' })
  const res = await deliver(s, item)
  t.equal(res.statusCode, 200)
  t.equal(res.body, '[accepted]')
  t.match(res.headers['content-type'], /^text\/plain/)
  t.match(await s.app.db.connectorEvents.get(s.connectorId, 'REPORT1:REPORT_AVAILABLE:true'), { type: 'adyen:REPORT_AVAILABLE', processedAt: String })
})

t.test('a bad HMAC anywhere in the batch is 401, nothing recorded or changed; unknown or non-adyen accounts too', async (t) => {
  const s = await setup(t)
  const paymentId = await captureReceived(s)
  const payment = await paymentOf(s, paymentId)
  const good = notificationItem({ eventCode: 'CAPTURE', merchantReference: paymentId, originalReference: payment.connectorReference, amount: { value: 750, currency: 'USD' }, pspReference: 'CAP1' })
  const forged = { ...good, amount: { value: 1000, currency: 'USD' }, pspReference: 'CAP2' }
  const otherKey = notificationItem({ eventCode: 'CAPTURE', merchantReference: paymentId, pspReference: 'CAP3' }, 'AB'.repeat(32))
  const unsigned = { ...good, pspReference: 'CAP4', additionalData: {} }
  const simulated = await s.app.inject({ method: 'POST', url: `/merchants/${s.merchant.merchantId}/connectors`, headers: ADMIN_AUTH, payload: { type: 'simulated' } })
  const cases: Array<[string, Awaited<ReturnType<typeof deliver>>]> = [
    ['a tampered item after a good one', await deliver(s, good, forged)],
    ['signed with another key', await deliver(s, otherKey)],
    ['no signature', await deliver(s, unsigned)],
    ['an item without its signed fields', await s.app.inject({ method: 'POST', url: s.url, headers: NO_KEY, payload: { notificationItems: [{ NotificationRequestItem: { eventCode: 'CAPTURE' } }] } })],
    ['an unknown connector', await s.app.inject({ method: 'POST', url: '/connectors/019ab0c2-5d1e-7f20-8a31-b4c5d6e7f809/adyen-notifications', headers: NO_KEY, payload: notificationBody(good) as object })],
    ['a connector id that is no id', await s.app.inject({ method: 'POST', url: '/connectors/nope/adyen-notifications', headers: NO_KEY, payload: notificationBody(good) as object })],
    ['a simulated account', await s.app.inject({ method: 'POST', url: `/connectors/${String(simulated.json().id)}/adyen-notifications`, headers: NO_KEY, payload: notificationBody(good) as object })]
  ]
  for (const [name, res] of cases) {
    t.equal(res.statusCode, 401, name)
    t.match(res.json(), { type: 'urn:problem-type:adyen-notification-unverified', status: 401 }, name)
    t.notOk(res.body.includes(HMAC_KEY), `${name}: the key is never quoted`)
  }
  t.equal(await s.app.db.connectorEvents.get(s.connectorId, 'CAP1:CAPTURE:true'), undefined, 'the good item of a forged batch is not recorded either')
  t.match(await paymentOf(s, paymentId), { status: 'requires_capture', amountCapturePending: 7.5 }, 'nothing changed')
  t.ok(s.lines.join('').includes('Adyen notification refused'), 'the refusal is logged')
  t.notOk(s.lines.join('').includes(HMAC_KEY), 'the key is in no log line')
  const notBatch = await s.app.inject({ method: 'POST', url: s.url, headers: NO_KEY, payload: { hello: 'world' } })
  t.equal(notBatch.statusCode, 400, 'a body that is no batch is 400')
})

t.test('CAPTURE settles the reserved capture once (a repeat, and a second CAPTURE, change nothing)', async (t) => {
  const s = await setup(t)
  const paymentId = await captureReceived(s)
  const reference = (await paymentOf(s, paymentId)).connectorReference as string
  t.equal(reference, pspOf(paymentId))
  const capture = notificationItem({ eventCode: 'CAPTURE', merchantReference: `${paymentId}-capture-1`, originalReference: reference, amount: { value: 750, currency: 'USD' } })
  t.equal((await deliver(s, capture)).body, '[accepted]')
  const captured = await paymentOf(s, paymentId)
  t.match(captured, { status: 'succeeded', amountCaptured: 7.5 })
  t.notOk('amountCapturePending' in captured, 'the reservation is gone')
  t.same(await eventTypes(s, paymentId), ['payment.authorized', 'payment.succeeded'])
  t.equal((await deliver(s, capture)).statusCode, 200, 'Adyen repeats it: accepted')
  const again = notificationItem({ eventCode: 'CAPTURE', merchantReference: `${paymentId}-capture-1`, originalReference: reference, amount: { value: 750, currency: 'USD' } })
  t.equal((await deliver(s, again)).statusCode, 200, 'another CAPTURE of it: accepted')
  t.same(await eventTypes(s, paymentId), ['payment.authorized', 'payment.succeeded'], 'applied once')
})

t.test('CAPTURE_FAILED releases the reservation: still requires_capture, capturable again', async (t) => {
  const s = await setup(t)
  const paymentId = await captureReceived(s)
  const reference = (await paymentOf(s, paymentId)).connectorReference as string
  const failed = notificationItem({ eventCode: 'CAPTURE_FAILED', merchantReference: paymentId, originalReference: reference, amount: { value: 750, currency: 'USD' }, reason: 'Insufficient balance' })
  t.equal((await deliver(s, failed)).statusCode, 200)
  const payment = await paymentOf(s, paymentId)
  t.match(payment, { status: 'requires_capture', amountCapturable: 10 })
  t.notOk('amountCapturePending' in payment)
  t.ok(s.lines.join('').includes('Adyen refused a capture'), 'logged')
  const retry = await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/capture`, headers: s.merchant.auth, payload: {} })
  t.equal(retry.statusCode, 202, 'a new capture may be asked for')
})

t.test('a capture made in the Customer Area (a CAPTURE we never asked for) moves the authorization as a capture made here, once', async (t) => {
  const s = await setup(t)
  const created = await pay(s, { captureMethod: 'manual' })
  const paymentId = created.json().id as string
  const reference = (await paymentOf(s, paymentId)).connectorReference as string
  const capture = notificationItem({ eventCode: 'CAPTURE', merchantReference: 'captured-in-customer-area', originalReference: reference, amount: { value: 600, currency: 'USD' } })
  t.equal((await deliver(s, capture)).body, '[accepted]')
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', amountCaptured: 6, amountCapturable: 0 })
  t.equal((await deliver(s, capture)).statusCode, 200, 'Adyen repeats it')
  t.same(await eventTypes(s, paymentId), ['payment.authorized', 'payment.succeeded'], 'applied once')
  t.equal(s.gateway.captures.length, 0, 'nothing asked of Adyen')
  const refund = await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/refunds`, headers: s.merchant.auth, payload: { amount: 6.01 } })
  t.equal(refund.statusCode, 409, 'refunds are bounded by what Adyen captured')
})

t.test('CAPTURE_FAILED after a confirmed CAPTURE: captured amount back, capturable again, payment.capture_failed and a warning; once', async (t) => {
  const s = await setup(t)
  const paymentId = await captureReceived(s)
  const reference = (await paymentOf(s, paymentId)).connectorReference as string
  const fields = { merchantReference: `payment-${paymentId}-capture-1`, originalReference: reference, amount: { value: 750, currency: 'USD' } }
  await deliver(s, notificationItem({ eventCode: 'CAPTURE', ...fields }))
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', amountCaptured: 7.5 })
  const failed = notificationItem({ eventCode: 'CAPTURE_FAILED', ...fields, reason: 'Capture refused by the scheme' })
  t.equal((await deliver(s, failed)).body, '[accepted]')
  t.match(await paymentOf(s, paymentId), { status: 'requires_capture', amountCaptured: 0, amountCapturable: 10 })
  t.ok(s.lines.some((line) => line.includes('"level":40') && line.includes('failed later')), 'a warning in the log')
  t.equal((await deliver(s, failed)).statusCode, 200, 'Adyen repeats it')
  t.same(await eventTypes(s, paymentId), ['payment.authorized', 'payment.succeeded', 'payment.capture_failed'], 'the merchant learns it once')
  const again = await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/capture`, headers: s.merchant.auth, payload: { amount: 7.5 } })
  t.equal(again.statusCode, 202, 'capturable again while the authorization lasts')
})

t.test('Adyen re-captures after a technical failure (CAPTURE, Transaction Recaptured): the payment is succeeded again, once', async (t) => {
  const s = await setup(t)
  const paymentId = await captureReceived(s)
  const reference = (await paymentOf(s, paymentId)).connectorReference as string
  t.equal(s.gateway.captures[0]?.idempotencyKey, `payment-${paymentId}-capture-1`, 'Adyen names our captures by their key')
  const fields = { merchantReference: `payment-${paymentId}-capture-1`, originalReference: reference, amount: { value: 750, currency: 'USD' }, pspReference: 'CAPTURE-1' }
  await deliver(s, notificationItem({ eventCode: 'CAPTURE', ...fields }))
  await deliver(s, notificationItem({ eventCode: 'CAPTURE_FAILED', ...fields, reason: 'Capture rejected by card scheme because of a technical issue' }))
  t.match(await paymentOf(s, paymentId), { status: 'requires_capture', amountCaptured: 0 })
  const recaptured = notificationItem({ eventCode: 'CAPTURE', ...fields, reason: 'Transaction Recaptured' })
  t.equal((await deliver(s, recaptured)).body, '[accepted]')
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', amountCaptured: 7.5 }, 'the same modification, taken after all')
  await deliver(s, recaptured)
  t.same(await eventTypes(s, paymentId), ['payment.authorized', 'payment.succeeded', 'payment.capture_failed', 'payment.succeeded'])
})

t.test('a CAPTURE_FAILED that overtakes its CAPTURE: the failure stands (the late CAPTURE changes nothing); a re-capture still counts', async (t) => {
  const s = await setup(t)
  const paymentId = await captureReceived(s)
  const reference = (await paymentOf(s, paymentId)).connectorReference as string
  const fields = { merchantReference: `payment-${paymentId}-capture-1`, originalReference: reference, amount: { value: 750, currency: 'USD' }, pspReference: 'CAPTURE-OVERTAKEN' }
  await deliver(s, notificationItem({ eventCode: 'CAPTURE_FAILED', ...fields, reason: 'Capture refused by the scheme' }))
  t.match(await paymentOf(s, paymentId), { status: 'requires_capture', amountCaptured: 0 }, 'our capture in flight failed')
  t.equal((await deliver(s, notificationItem({ eventCode: 'CAPTURE', ...fields }))).body, '[accepted]')
  t.match(await paymentOf(s, paymentId), { status: 'requires_capture', amountCaptured: 0 }, 'the CAPTURE it overtook is not taken for a re-capture')
  t.ok(s.lines.some((line) => line.includes('"level":40') && line.includes('after the failure of the same capture')))
  t.same(await eventTypes(s, paymentId), ['payment.authorized'])
  await deliver(s, notificationItem({ eventCode: 'CAPTURE', ...fields, reason: 'Transaction Recaptured' }))
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', amountCaptured: 7.5 }, 'Adyen\'s re-capture says so itself')
})

t.test('a late report of an earlier capture of ours changes nothing: the failure of a first capture after a second one succeeded, repeated', async (t) => {
  const s = await setup(t)
  const paymentId = await captureReceived(s)
  const reference = (await paymentOf(s, paymentId)).connectorReference as string
  const first = { merchantReference: `payment-${paymentId}-capture-1`, originalReference: reference, amount: { value: 750, currency: 'USD' } }
  await deliver(s, notificationItem({ eventCode: 'CAPTURE_FAILED', ...first }))
  t.match(await paymentOf(s, paymentId), { status: 'requires_capture', amountCaptured: 0 }, 'our capture in flight failed: released')
  t.equal((await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/capture`, headers: s.merchant.auth, payload: { amount: 5 } })).statusCode, 202)
  await deliver(s, notificationItem({ eventCode: 'CAPTURE', ...first, merchantReference: `payment-${paymentId}-capture-2`, amount: { value: 500, currency: 'USD' } }))
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', amountCaptured: 5 })
  await deliver(s, notificationItem({ eventCode: 'CAPTURE_FAILED', ...first }))
  await deliver(s, notificationItem({ eventCode: 'CAPTURE', ...first }))
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', amountCaptured: 5 }, 'the first capture\'s reports, late, change nothing')
  t.notOk((await eventTypes(s, paymentId)).includes('payment.capture_failed'))
})

t.test('a capture or refund made in the Customer Area that overtakes the AUTHORISATION of a payment waiting for its shopper waits for it (503), then applies', async (t) => {
  const s = await setup(t, {}, { PUBLIC_BASE_URL: 'https://pay.example.com' })
  s.charge.next = async (request) => ({ outcome: 'requires_action', chargeId: pspOf(request.paymentId), nextAction: { type: 'redirect', url: 'https://checkoutshopper-test.adyen.com/3ds', method: 'GET' } })
  const created = await pay(s, { captureMethod: 'manual', returnUrl: 'https://shop.example.com/done' })
  t.equal(created.json().status, 'requires_action', created.body)
  const paymentId = created.json().id as string
  const capture = notificationItem({ eventCode: 'CAPTURE', merchantReference: 'captured-in-customer-area', pspReference: 'CAP-AREA', originalReference: pspOf(paymentId), amount: { value: 1000, currency: 'USD' } })
  const refund = notificationItem({ eventCode: 'REFUND', merchantReference: 'refunded-in-customer-area', pspReference: 'REF-AREA', originalReference: pspOf(paymentId), amount: { value: 400, currency: 'USD' } })
  t.equal((await deliver(s, capture)).statusCode, 503, 'the capture waits for the authorisation')
  t.equal((await deliver(s, refund)).statusCode, 503, 'the refund too')
  t.match(await paymentOf(s, paymentId), { status: 'requires_action', amountCaptured: 0, amountRefunded: 0 })
  await deliver(s, notificationItem({ eventCode: 'AUTHORISATION', merchantReference: paymentId, pspReference: pspOf(paymentId) }))
  t.match(await paymentOf(s, paymentId), { status: 'requires_capture' })
  t.equal((await deliver(s, capture)).statusCode, 200, 'sent again: applied')
  t.equal((await deliver(s, refund)).statusCode, 200)
  t.match(await paymentOf(s, paymentId), { status: 'partially_refunded', amountCaptured: 10, amountRefunded: 4 }, 'our records equal Adyen\'s')
})

t.test('a capture made in the Customer Area of a payment whose answer was lost (its pspReference unknown here) waits (503), then applies', async (t) => {
  const s = await setup(t)
  s.charge.next = async () => { throw new GatewayError('timeout', 'Adyen did not answer') }
  const pending = await pay(s, { captureMethod: 'manual' })
  t.equal(pending.statusCode, 503)
  const paymentId = pending.json().paymentId as string
  const capture = notificationItem({ eventCode: 'CAPTURE', merchantReference: 'captured-in-customer-area', pspReference: 'CAP-LOST', originalReference: 'AUTH-LOST', amount: { value: 1000, currency: 'USD' } })
  t.equal((await deliver(s, capture)).statusCode, 503, 'no payment names that pspReference yet, and one is pending')
  await deliver(s, notificationItem({ eventCode: 'AUTHORISATION', merchantReference: paymentId, pspReference: 'AUTH-LOST' }))
  t.match(await paymentOf(s, paymentId), { status: 'requires_capture', connectorReference: 'AUTH-LOST' })
  t.equal((await deliver(s, capture)).statusCode, 200, 'sent again: applied')
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', amountCaptured: 10 })
})

t.test('a capture made in the Customer Area that fails later: requires capture again, payment.capture_failed', async (t) => {
  const s = await setup(t)
  const paymentId = (await pay(s, { captureMethod: 'manual' })).json().id as string
  const fields = { merchantReference: 'captured-in-customer-area', originalReference: pspOf(paymentId), amount: { value: 1000, currency: 'USD' } }
  await deliver(s, notificationItem({ eventCode: 'CAPTURE', ...fields }))
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', amountCaptured: 10 })
  await deliver(s, notificationItem({ eventCode: 'CAPTURE_FAILED', ...fields }))
  t.match(await paymentOf(s, paymentId), { status: 'requires_capture', amountCaptured: 0 })
  t.same(await eventTypes(s, paymentId), ['payment.authorized', 'payment.succeeded', 'payment.capture_failed'])
})

t.test('CAPTURE_FAILED after money went out of the payment (a refund) leaves it unchanged, for a person (an error in the log)', async (t) => {
  const s = await setup(t)
  const paymentId = await captureReceived(s)
  const reference = (await paymentOf(s, paymentId)).connectorReference as string
  const fields = { merchantReference: `payment-${paymentId}-capture-1`, originalReference: reference, amount: { value: 750, currency: 'USD' } }
  await deliver(s, notificationItem({ eventCode: 'CAPTURE', ...fields }))
  t.equal((await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/refunds`, headers: s.merchant.auth, payload: { amount: 2 } })).statusCode, 202)
  await deliver(s, notificationItem({ eventCode: 'CAPTURE_FAILED', ...fields }))
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', amountCaptured: 7.5 })
  t.ok(s.lines.some((line) => line.includes('"level":50') && line.includes('needs follow-up')))
  t.notOk((await eventTypes(s, paymentId)).includes('payment.capture_failed'))
})

t.test('REFUND settles the pending refund (refund.succeeded); REFUND_FAILED fails it and releases the hold (refund.failed)', async (t) => {
  const s = await setup(t)
  const first = await refundReceived(s)
  const reference = pspOf(first.paymentId)
  const refunded = notificationItem({ eventCode: 'REFUND', merchantReference: first.refundId, originalReference: reference, amount: { value: 400, currency: 'USD' } })
  t.equal((await deliver(s, refunded, refunded)).statusCode, 200, 'twice in one batch')
  const refund = (await s.app.inject({ method: 'GET', url: `/api/payments/${first.paymentId}/refunds/${first.refundId}`, headers: s.merchant.auth })).json()
  t.equal(refund.status, 'succeeded')
  t.match(await paymentOf(s, first.paymentId), { status: 'partially_refunded', amountRefunded: 4 })
  t.same(await eventTypes(s, first.refundId), ['refund.succeeded'], 'once')
  // A contrary report later is for a person.
  const contrary = notificationItem({ eventCode: 'REFUND_FAILED', merchantReference: first.refundId, originalReference: reference, amount: { value: 400, currency: 'USD' } })
  t.equal((await deliver(s, contrary)).statusCode, 200)
  t.ok(s.lines.join('').includes('contrary to the one recorded'))

  const second = await refundReceived(s)
  const failed = notificationItem({ eventCode: 'REFUND_FAILED', merchantReference: second.refundId, originalReference: pspOf(second.paymentId), amount: { value: 400, currency: 'USD' }, reason: 'Insufficient balance' })
  t.equal((await deliver(s, failed)).statusCode, 200)
  t.match((await s.app.inject({ method: 'GET', url: `/api/payments/${second.paymentId}/refunds/${second.refundId}`, headers: s.merchant.auth })).json(),
    { status: 'failed', failureCode: 'insufficient_balance' })
  t.match(await paymentOf(s, second.paymentId), { status: 'succeeded', amountRefunded: 0 }, 'the held amount is released')
  t.same(await eventTypes(s, second.refundId), ['refund.failed'])
})

t.test('a cancel made in the Customer Area (a CANCELLATION not naming our payment) cancels the authorization: reason connector, once', async (t) => {
  const s = await setup(t)
  const created = await pay(s, { captureMethod: 'manual' })
  const paymentId = created.json().id as string
  const canceled = notificationItem({ eventCode: 'CANCELLATION', merchantReference: 'canceled-in-customer-area', originalReference: pspOf(paymentId) })
  t.equal((await deliver(s, canceled)).statusCode, 200)
  t.match(await paymentOf(s, paymentId), { status: 'canceled', cancellationReason: 'connector' })
  t.equal((await deliver(s, canceled)).statusCode, 200, 'Adyen repeats it')
  t.same(await eventTypes(s, paymentId), ['payment.authorized', 'payment.canceled'])
  t.equal(s.gateway.voids.length, 0, 'nothing asked of Adyen')
})

t.test('CANCELLATION cancels an authorization whose void Adyen received; a REFUND after it names no refund of ours', async (t) => {
  const s = await setup(t)
  const created = await pay(s, { captureMethod: 'manual' })
  const paymentId = created.json().id as string
  const cancel = await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/cancel`, headers: s.merchant.auth })
  t.equal(cancel.statusCode, 202)
  t.equal((await paymentOf(s, paymentId)).status, 'requires_capture')
  const reference = pspOf(paymentId)
  const canceled = notificationItem({ eventCode: 'CANCELLATION', merchantReference: paymentId, originalReference: reference })
  t.equal((await deliver(s, canceled)).statusCode, 200)
  t.match(await paymentOf(s, paymentId), { status: 'canceled', cancellationReason: 'requested' })
  t.same(await eventTypes(s, paymentId), ['payment.authorized', 'payment.canceled'])
  const late = notificationItem({ eventCode: 'REFUND', merchantReference: '019ab0c2-5d1e-7f20-8a31-b4c5d6e7f809', originalReference: reference })
  t.equal((await deliver(s, late)).statusCode, 200, 'out of order and naming nothing: accepted')
  t.ok(s.lines.join('').includes('names no refund of ours'))
  t.equal((await paymentOf(s, paymentId)).status, 'canceled')
})

t.test('TECHNICAL_CANCEL (a cancel by our reference) cancels a payment left pending, once; a late AUTHORISATION does not revive it', async (t) => {
  const s = await setup(t)
  s.charge.next = async () => { throw new GatewayError('timeout', 'Adyen did not answer') }
  const pending = await pay(s, { captureMethod: 'manual' })
  t.equal(pending.statusCode, 503)
  const paymentId = pending.json().paymentId as string
  const cancel = await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/cancel`, headers: s.merchant.auth })
  t.equal(cancel.statusCode, 202, cancel.body)
  t.match(s.gateway.voids, [{ paymentId }], 'asked by our reference')
  t.equal(s.gateway.voids[0]?.chargeReference, undefined, 'no pspReference was ever learned')
  // Adyen names the payment's own pspReference, which we never recorded: found by the merchant reference (our id).
  const canceled = notificationItem({ eventCode: 'TECHNICAL_CANCEL', merchantReference: paymentId, originalReference: 'AUTH-NEVER-SEEN', pspReference: 'TECH1' })
  t.equal((await deliver(s, canceled)).statusCode, 200)
  t.equal((await deliver(s, canceled)).statusCode, 200, 'sent again')
  t.match(await paymentOf(s, paymentId), { status: 'canceled' })
  const late = notificationItem({ eventCode: 'AUTHORISATION', merchantReference: paymentId, pspReference: 'AUTH-NEVER-SEEN' })
  t.equal((await deliver(s, late)).statusCode, 200)
  t.match(await paymentOf(s, paymentId), { status: 'canceled' }, 'the authorisation Adyen canceled stays canceled')
  t.same(await eventTypes(s, paymentId), ['payment.pending', 'payment.canceled'], 'one cancel, nothing after it')
})

/** An automatic payment whose outcome was lost (pending), canceled by the merchant: Adyen received the cancel by our reference. */
async function canceledWhileUnknown (t: Test, s: Setup): Promise<string> {
  s.charge.next = async () => { throw new GatewayError('timeout', 'Adyen did not answer') }
  const pending = await pay(s)
  t.equal(pending.statusCode, 503)
  const paymentId = pending.json().paymentId as string
  const cancel = await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/cancel`, headers: s.merchant.auth })
  t.equal(cancel.statusCode, 202, cancel.body)
  t.match(cancel.json().attempts.at(-1), { outcome: 'cancel_requested', code: 'requested' }, 'the cancel request is remembered')
  const again = await s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/cancel`, headers: s.merchant.auth })
  t.equal(again.json().attempts.filter((a: { outcome: string }) => a.outcome === 'cancel_requested').length, 1, 'once')
  return paymentId
}

t.test('a cancel Adyen could not make (the automatic payment was captured) refunds the charge in full, once, whichever arrives first', async (t) => {
  const s = await setup(t)
  const paymentId = await canceledWhileUnknown(t, s)
  const refused = notificationItem({ eventCode: 'TECHNICAL_CANCEL', merchantReference: paymentId, pspReference: 'TECH-REFUSED', success: 'false', reason: 'Transaction already captured' })
  t.equal((await deliver(s, refused)).statusCode, 503, 'before the AUTHORISATION: Adyen is asked to send it again')
  t.match(await paymentOf(s, paymentId), { status: 'pending' })
  t.equal(s.gateway.refunds.length, 0)
  await deliver(s, notificationItem({ eventCode: 'AUTHORISATION', merchantReference: paymentId, pspReference: 'AUTH-CAPTURED' }))
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', connectorReference: 'AUTH-CAPTURED' })
  t.equal((await deliver(s, refused)).statusCode, 200, 'sent again: now acted on')
  t.equal((await deliver(s, refused)).statusCode, 200, 'and again: a duplicate')
  t.equal(s.gateway.refunds.length, 1, 'one refund asked of Adyen')
  t.match(s.gateway.refunds[0], { chargeReference: 'AUTH-CAPTURED', amountMinor: 1000 }, 'the whole charge')
  const refunds = (await s.app.inject({ method: 'GET', url: `/api/payments/${paymentId}/refunds`, headers: s.merchant.auth })).json().data
  t.match(refunds, [{ reason: 'payment_canceled', amount: 10, status: 'pending' }])
  await deliver(s, notificationItem({ eventCode: 'REFUND', merchantReference: refunds[0].id, originalReference: 'AUTH-CAPTURED' }))
  t.match(await paymentOf(s, paymentId), { status: 'refunded', amountRefunded: 10 }, 'no money left captured on a payment the merchant canceled')
})

t.test('a refused cancel whose AUTHORISATION never comes waits an hour at most, then is left for a person (an error in the log)', async (t) => {
  const clock = manualClock(Date.now())
  const s = await setup(t, { clock: clock.read })
  const paymentId = await canceledWhileUnknown(t, s)
  const refused = notificationItem({ eventCode: 'TECHNICAL_CANCEL', merchantReference: paymentId, pspReference: 'TECH-NOTHING', success: 'false' })
  t.equal((await deliver(s, refused)).statusCode, 503, 'within the hour: waits for the AUTHORISATION')
  clock.now += 3600_000
  t.equal((await deliver(s, refused)).body, '[accepted]', 'then accepted: Adyen stops sending it, the worker stops draining it')
  t.ok(s.lines.some((line) => line.includes('"level":50') && line.includes('authorisation never arrived')))
  t.match(await paymentOf(s, paymentId), { status: 'pending' })
  t.equal(s.gateway.refunds.length, 0)
})

t.test('a refused cancel nobody asked for here (the expiry\'s or a Customer Area one) leaves a succeeded payment as it is', async (t) => {
  const s = await setup(t)
  s.charge.next = async (request) => ({ outcome: 'succeeded', chargeId: pspOf(request.paymentId) })
  const paid = (await pay(s)).json().id as string
  await deliver(s, notificationItem({ eventCode: 'CANCELLATION', merchantReference: paid, originalReference: pspOf(paid), success: 'false' }))
  t.match(await paymentOf(s, paid), { status: 'succeeded' }, 'no cancel was asked here: left as it is')
  t.equal(s.gateway.refunds.length, 0)
})

t.test('unknown references are accepted and logged; a notification for another merchant account is ignored', async (t) => {
  const s = await setup(t)
  const unknown = notificationItem({ eventCode: 'AUTHORISATION', merchantReference: 'order-42', pspReference: 'UNKNOWN1' })
  const unknownCapture = notificationItem({ eventCode: 'CAPTURE', merchantReference: 'x', originalReference: 'NOSUCHPSP' })
  t.equal((await deliver(s, unknown, unknownCapture)).body, '[accepted]')
  t.ok(s.lines.join('').includes('names no payment of ours'))
  const created = await pay(s, { captureMethod: 'manual' })
  const paymentId = created.json().id as string
  const elsewhere = notificationItem({ eventCode: 'CANCELLATION', merchantReference: paymentId, originalReference: pspOf(paymentId), merchantAccountCode: 'SomeoneElse' })
  t.equal((await deliver(s, elsewhere)).statusCode, 200)
  t.equal((await paymentOf(s, paymentId)).status, 'requires_capture')
  t.ok(s.lines.join('').includes('another merchant account'))
})

t.test('AUTHORISATION settles a payment left pending; a refused one declines it with the reason', async (t) => {
  const s = await setup(t)
  s.charge.next = async () => { throw new GatewayError('unavailable', 'Adyen answered 500') }
  const pending = await pay(s)
  t.equal(pending.statusCode, 503)
  const paymentId = pending.json().paymentId as string
  const manual = await pay(s, { captureMethod: 'manual' })
  const manualId = manual.json().paymentId as string
  const refused = await pay(s)
  const refusedId = refused.json().paymentId as string
  const wrongAmount = await pay(s)
  const wrongId = wrongAmount.json().paymentId as string
  const res = await deliver(s,
    notificationItem({ eventCode: 'AUTHORISATION', merchantReference: paymentId, pspReference: 'AUTH1' }),
    notificationItem({ eventCode: 'AUTHORISATION', merchantReference: manualId, pspReference: 'AUTH2' }),
    notificationItem({ eventCode: 'AUTHORISATION', merchantReference: refusedId, pspReference: 'AUTH3', success: 'false', reason: 'CVC Declined' }),
    notificationItem({ eventCode: 'AUTHORISATION', merchantReference: wrongId, pspReference: 'AUTH4', amount: { value: 999, currency: 'USD' } }))
  t.equal(res.statusCode, 200)
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', connectorReference: 'AUTH1', connector: { id: s.connectorId, type: 'adyen' } })
  t.match(await paymentOf(s, manualId), { status: 'requires_capture', connectorReference: 'AUTH2' })
  t.match(await paymentOf(s, refusedId), { status: 'declined', declineCode: 'cvc_declined' })
  t.equal((await paymentOf(s, wrongId)).status, 'pending', 'a different amount settles nothing')
  t.ok(s.lines.join('').includes('amount or currency differs'))
  t.same(await eventTypes(s, paymentId), ['payment.pending', 'payment.succeeded'])
})

t.test('AUTHORISATION that arrives before our own /payments answer committed: settled once; our answer is what is stored', async (t) => {
  const s = await setup(t)
  let notified!: () => void
  const applied = new Promise<void>((resolve) => { notified = resolve })
  let paymentId = ''
  s.charge.next = async (request) => {
    paymentId = request.paymentId
    // Adyen sends the notification while our call is still in flight; the answer arrives after it was applied.
    const res = await deliver(s, notificationItem({ eventCode: 'AUTHORISATION', merchantReference: request.paymentId, pspReference: pspOf(request.paymentId) }))
    t.equal(res.statusCode, 200)
    notified()
    return { outcome: 'succeeded', chargeId: pspOf(request.paymentId) }
  }
  const created = await pay(s)
  await applied
  t.equal(created.statusCode, 201)
  t.match(created.json(), { id: paymentId, status: 'succeeded', connectorReference: pspOf(paymentId) })
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', connectorReference: pspOf(paymentId) })
  t.same(await eventTypes(s, paymentId), ['payment.succeeded'], 'one event')
  t.equal(s.gateway.calls.length, 1)
})

t.test('an item recorded but never processed (a crash in between) is processed by the next delivery, or by the recovery worker, once', async (t) => {
  const s = await setup(t)
  const paymentId = await captureReceived(s)
  const item = notificationItem({ eventCode: 'CAPTURE', merchantReference: paymentId, originalReference: pspOf(paymentId), amount: { value: 750, currency: 'USD' } })
  const id = `${item.pspReference}:CAPTURE:true`
  // What a crash after the inbox write leaves: the item recorded with its payload, unprocessed.
  await s.app.db.connectorEvents.record({ connectorId: s.connectorId, eventId: id, type: 'adyen:CAPTURE', receivedAt: new Date(Date.now() - 120_000).toISOString(), payload: JSON.stringify(item) })
  const notifications = notificationsOf(s.app)
  t.equal((await notifications.drainInbox({ ageSeconds: 600 })).processed, 0, 'not yet old enough')
  t.same(await notifications.drainInbox({ ageSeconds: 60 }), { processed: 1 })
  t.match(await paymentOf(s, paymentId), { status: 'succeeded', amountCaptured: 7.5 })
  t.match(await s.app.db.connectorEvents.get(s.connectorId, id), { processedAt: String })
  t.same(await notifications.drainInbox({ ageSeconds: 0 }), { processed: 0 }, 'processed once')
  t.equal((await deliver(s, item)).statusCode, 200, 'Adyen\'s retry is accepted')
  t.same(await eventTypes(s, paymentId), ['payment.authorized', 'payment.succeeded'], 'and applied once')

  const second = await captureReceived(s)
  const next = notificationItem({ eventCode: 'CAPTURE', merchantReference: second, originalReference: pspOf(second), amount: { value: 750, currency: 'USD' } })
  await s.app.db.connectorEvents.record({ connectorId: s.connectorId, eventId: `${next.pspReference}:CAPTURE:true`, type: 'adyen:CAPTURE', receivedAt: new Date().toISOString(), payload: JSON.stringify(next) })
  t.equal((await deliver(s, next)).statusCode, 200)
  t.match(await paymentOf(s, second), { status: 'succeeded' }, 'the redelivery processes what was recorded only')
})

t.test('reconciliation: what waits on a notification is counted by kind and warned about once; the worker drains and sets the metric', async (t) => {
  const s = await setup(t)
  const captureId = await captureReceived(s)
  const { refundId } = await refundReceived(s)
  const authorization = (await pay(s, { captureMethod: 'manual' })).json().id as string
  await s.app.inject({ method: 'POST', url: `/api/payments/${authorization}/cancel`, headers: s.merchant.auth })
  // Past its captureBefore and still requires_capture: its void was received, no CANCELLATION came.
  const held = await s.app.db.payments.get(authorization)
  t.ok(held)
  const notifications = notificationsOf(s.app)
  t.same(await notifications.awaitingNotification({ ageSeconds: 0 }), { capture: 1, refund: 1, void: 0 })
  const later = await notifications.awaitingNotification({ ageSeconds: -8 * 86_400 })
  t.same(later, { capture: 1, refund: 1, void: 1 }, 'an authorization past captureBefore counts as a void awaiting its notification')
  const warnings = (): string[] => s.lines.filter((line) => line.includes('sent no notification yet'))
  t.equal(warnings().length, 3, 'one warning per item')
  t.ok(warnings().some((line) => line.includes(captureId)) && warnings().some((line) => line.includes(refundId)))
  await notifications.awaitingNotification({ ageSeconds: -8 * 86_400 })
  t.equal(warnings().length, 3, 'not again while it keeps waiting')

  t.same(await s.app.backgroundJobs.reconcileConnectorEvents(), { processed: 0, awaiting: { capture: 0, refund: 0, void: 0 } }, 'nothing is an hour old yet')
  const metrics = await s.app.metrics.registry.getSingleMetricAsString('connector_outcomes_awaiting_notification')
  t.match(metrics, /connector_outcomes_awaiting_notification\{kind="capture"\} 0/)
})
