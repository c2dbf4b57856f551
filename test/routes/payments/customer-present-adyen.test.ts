/**
 * Customer-present payments through an Adyen account (issue 37), against the local stand-in speaking Adyen's Checkout
 * wire format: /payments with shopperInteraction Ecommerce, channel Web, our return address, the Web Components'
 * paymentMethod object passed on, browserInfo and origin; RedirectShopper → requires_action with Adyen's redirect;
 * settled by the return (/payments/details with the redirectResult Adyen gave the browser) or by the AUTHORISATION
 * notification, whichever comes first; cancel and abandonment cancel at Adyen (its CANCELLATION settles them). The
 * exact requests sent are asserted.
 */
import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import { buildTestApp, merchantWithKey, type MerchantCredentials } from '../../helpers/app'
import { FAKE_ADYEN_API_KEY, FAKE_ADYEN_MERCHANT, FakeAdyen, type RecordedRequest } from '../../helpers/fake-adyen'
import { HMAC_KEY, notificationBody, notificationItem } from '../../helpers/adyen-notifications'
import { manualClock } from '../../helpers/payments'
import { ensurePostgres, freshSchema } from '../../helpers/postgres'
import type { App } from '../../../app/app'
import type { AdyenNotificationItem } from '../../../src/gateway/adyen/notifications'

const BASE = 'https://pay.example.com'
const RETURN = 'https://shop.example.com/done?order=A-7'
/** What Adyen's Web Components give the merchant's page (state.data): encrypted card fields, the shopper's browser. */
const CARD_3DS = { type: 'scheme', encryptedCardNumber: 'test_encrypted_3ds', encryptedExpiryMonth: 'adyenjs_0_1_25$mm', encryptedExpiryYear: 'adyenjs_0_1_25$yy', encryptedSecurityCode: 'adyenjs_0_1_25$cvc', holderName: 'J. Smith' }
const BROWSER = { userAgent: 'Mozilla/5.0 (X11; Linux x86_64)', acceptHeader: 'text/html', language: 'nl-NL', colorDepth: 24, screenHeight: 1080, screenWidth: 1920, timeZoneOffset: -60, javaEnabled: false }
const ORIGIN = 'https://shop.example.com'

interface Setup { app: App, fake: FakeAdyen, merchant: MerchantCredentials, connectorId: string, clock: ReturnType<typeof manualClock>, lines: string[] }

type Backend = (t: Test) => Promise<Record<string, string>>
const sqlite: Backend = async () => ({})
const postgres: Backend = async (t) => ({ DATABASE_URL: (await freshSchema(t)).url })

async function setup (t: Test, backend: Backend, env: Record<string, string> = {}, simulatedFirst = false): Promise<Setup> {
  const database = await backend(t)
  const fake = await FakeAdyen.start()
  t.teardown(async () => { await fake.close() })
  const clock = manualClock(Date.now())
  const lines: string[] = []
  const logger = { level: 'info', stream: new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } }) }
  const app = await buildTestApp(t, { ADYEN_CHECKOUT_URL: fake.url, PUBLIC_BASE_URL: BASE, GATEWAY: 'none', ...database, ...env }, { clock: clock.read, logger })
  const merchant = await merchantWithKey(app)
  const add = async (body: Record<string, unknown>): Promise<string> => {
    const res = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: merchant.auth, payload: body })
    t.equal(res.statusCode, 201, res.body)
    return res.json().id
  }
  if (simulatedFirst) await add({ type: 'simulated', priority: 0 })
  const connectorId = await add({ type: 'adyen', credentials: { apiKey: FAKE_ADYEN_API_KEY, merchantAccount: FAKE_ADYEN_MERCHANT, hmacKey: HMAC_KEY }, priority: 1 })
  return { app, fake, merchant, connectorId, clock, lines }
}

const paymentsSent = (s: Setup): RecordedRequest[] => s.fake.requests.filter((request) => request.path === '/v72/payments')
const detailsSent = (s: Setup): RecordedRequest[] => s.fake.requests.filter((request) => request.path === '/v72/payments/details')

/** A customer-present payment with a 3-D Secure test card: 201 requires_action, nextAction to Adyen's redirect. */
async function waiting (t: Test, s: Setup, body: Record<string, unknown> = {}): Promise<{ id: string, pspReference: string, returnAddress: string, nextAction: Record<string, unknown> }> {
  const res = await s.app.inject({
    method: 'POST',
    url: '/api/payments',
    headers: s.merchant.auth,
    payload: { amount: 25, currency: 'EUR', paymentMethod: CARD_3DS, browserInfo: BROWSER, origin: ORIGIN, returnUrl: RETURN, ...body }
  })
  t.equal(res.statusCode, 201, res.body)
  t.notMatch(res.body, /adyenjs_|test_encrypted/, 'the encrypted card fields are never shown')
  const payment = res.json()
  t.match(payment, { status: 'requires_action', connector: { id: s.connectorId, type: 'adyen' }, connectorReference: /^FAKE/, nextAction: { type: 'redirect', url: `${s.fake.url}/threeds2/redirect?psp=${String(payment.connectorReference)}` } })
  const create = paymentsSent(s).at(-1)
  t.equal(create?.headers['idempotency-key'], `payment-${String(payment.id)}`, 'under the key derived from the payment')
  const sent = create?.body as Record<string, unknown>
  t.match(sent, {
    amount: { value: 2500, currency: 'EUR' },
    reference: payment.id,
    merchantAccount: FAKE_ADYEN_MERCHANT,
    shopperInteraction: 'Ecommerce',
    channel: 'Web',
    paymentMethod: { ...CARD_3DS, ...(body.paymentMethod as object | undefined) },
    browserInfo: BROWSER,
    origin: ORIGIN
  })
  t.match(sent.returnUrl, new RegExp(`^${BASE}/checkout/return/[A-Za-z0-9_-]{43}$`), 'Adyen returns the shopper to the service')
  t.notOk('recurringProcessingModel' in sent, 'not a card-on-file payment')
  t.equal((await s.app.db.payments.get(String(payment.id)))?.checkoutData, undefined, 'the card fields are erased once Adyen answered')
  return { id: payment.id, pspReference: payment.connectorReference, returnAddress: String(sent.returnUrl), nextAction: payment.nextAction }
}

/** The shopper's browser comes back with what Adyen appends (GET query, or a form POST). */
async function shopperReturns (t: Test, s: Setup, returnAddress: string, redirectResult?: string, form = false): Promise<URL> {
  const path = new URL(returnAddress).pathname
  const params = new URLSearchParams(redirectResult === undefined ? {} : { redirectResult })
  const res = form
    ? await s.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: params.toString() })
    : await s.app.inject({ method: 'GET', url: `${path}${redirectResult === undefined ? '' : `?${params.toString()}`}` })
  t.equal(res.statusCode, 303, res.body)
  return new URL(String(res.headers.location))
}

async function notify (t: Test, s: Setup, item: Partial<AdyenNotificationItem> & Pick<AdyenNotificationItem, 'eventCode' | 'merchantReference'>): Promise<void> {
  const res = await s.app.inject({
    method: 'POST',
    url: `/connectors/${s.connectorId}/adyen-notifications`,
    headers: { authorization: undefined, 'content-type': 'application/json' },
    payload: notificationBody(notificationItem({ merchantAccountCode: FAKE_ADYEN_MERCHANT, amount: { value: 2500, currency: 'EUR' }, ...item })) as object
  })
  t.equal(res.statusCode, 200, res.body)
}

async function paymentOf (s: Setup, id: string) {
  return (await s.app.inject({ method: 'GET', url: `/api/payments/${id}`, headers: s.merchant.auth })).json()
}

async function eventTypes (s: Setup, id: string): Promise<string[]> {
  const page = await s.app.db.events.list({ merchantId: s.merchant.merchantId, limit: 100 })
  return page.data.filter((e) => e.resourceId === id).map((e) => e.type).reverse()
}

function cases (t: Test, backend: Backend): void {
  t.test('authenticated, return before notification: /payments/details with the redirectResult → succeeded; the late AUTHORISATION and a second return change nothing', async (t) => {
    const s = await setup(t, backend)
    const { id, pspReference, returnAddress } = await waiting(t, s)
    const early = await shopperReturns(t, s, returnAddress)
    t.equal(early.searchParams.get('status'), 'requires_action', 'no redirectResult: Adyen is not asked, nothing is taken from the query')
    t.equal(detailsSent(s).length, 0)
    const redirectResult = s.fake.authenticate(pspReference, true)
    const back = await shopperReturns(t, s, returnAddress, redirectResult)
    t.equal(back.searchParams.get('status'), 'succeeded')
    t.equal(back.searchParams.get('paymentId'), id)
    t.equal(back.searchParams.get('order'), 'A-7')
    const [details] = detailsSent(s)
    t.same(details?.body, { details: { redirectResult } }, 'only what Adyen gave the browser')
    t.match(details?.headers['idempotency-key'], new RegExp(`^payment-${id}:rr-[A-Za-z0-9_-]{12}$`), 'under a key derived from the payment and the redirectResult')
    await notify(t, s, { eventCode: 'AUTHORISATION', merchantReference: id, pspReference })
    t.equal((await shopperReturns(t, s, returnAddress, redirectResult, true)).searchParams.get('status'), 'succeeded', 'a second return (a form post) only redirects')
    t.equal(detailsSent(s).length, 1, 'a settled payment is not asked about again')
    t.match(await paymentOf(s, id), { status: 'succeeded', amountCaptured: 25, connectorReference: pspReference, paymentMethodDetails: { type: 'card', card: { last4: '0008' } } })
    t.same(await eventTypes(s, id), ['payment.requires_action', 'payment.succeeded'], 'settled once')
    t.equal(paymentsSent(s).length, 1, 'one payment at Adyen')
  })

  t.test('AUTHORISATION before the return settles it; the return only redirects', async (t) => {
    const s = await setup(t, backend)
    const { id, pspReference, returnAddress } = await waiting(t, s)
    const redirectResult = s.fake.authenticate(pspReference, true)
    await notify(t, s, { eventCode: 'AUTHORISATION', merchantReference: id, pspReference })
    t.equal((await paymentOf(s, id)).status, 'succeeded')
    t.equal((await shopperReturns(t, s, returnAddress, redirectResult)).searchParams.get('status'), 'succeeded')
    t.equal(detailsSent(s).length, 0)
    t.same(await eventTypes(s, id), ['payment.requires_action', 'payment.succeeded'])
  })

  t.test('failed authentication → declined authentication_failed (return or AUTHORISATION false); a form-post redirect; manual → requires_capture', async (t) => {
    const s = await setup(t, backend)
    const failed = await waiting(t, s)
    const redirectResult = s.fake.authenticate(failed.pspReference, false)
    t.equal((await shopperReturns(t, s, failed.returnAddress, redirectResult, true)).searchParams.get('status'), 'declined')
    t.match(await paymentOf(s, failed.id), { status: 'declined', declineCode: 'authentication_failed' })
    await notify(t, s, { eventCode: 'AUTHORISATION', merchantReference: failed.id, pspReference: failed.pspReference, success: 'false', reason: '3D Not Authenticated' })
    t.same(await eventTypes(s, failed.id), ['payment.requires_action', 'payment.declined'])

    const notified = await waiting(t, s)
    await notify(t, s, { eventCode: 'AUTHORISATION', merchantReference: notified.id, pspReference: notified.pspReference, success: 'false', reason: '3D Not Authenticated' })
    t.match(await paymentOf(s, notified.id), { status: 'declined', declineCode: 'authentication_failed' }, 'the notification first reads as the return would')

    const posted = await waiting(t, s, { paymentMethod: { ...CARD_3DS, encryptedCardNumber: 'test_encrypted_3ds_post' } })
    t.match(posted.nextAction, { method: 'POST', data: { MD: `md-${posted.pspReference}`, TermUrl: posted.returnAddress } }, 'the form the page posts for the shopper')

    const manual = await waiting(t, s, { captureMethod: 'manual' })
    const result = s.fake.authenticate(manual.pspReference, true)
    t.equal((await shopperReturns(t, s, manual.returnAddress, result)).searchParams.get('status'), 'requires_capture')
    t.match(await paymentOf(s, manual.id), { status: 'requires_capture', amountCapturable: 25 })
  })

  t.test('a tampered token is a 404 page; a forged redirectResult learns nothing (Adyen refuses it): the payment keeps waiting', async (t) => {
    const s = await setup(t, backend)
    const { id, returnAddress } = await waiting(t, s)
    const path = new URL(returnAddress).pathname
    const tampered = `${path.slice(0, -1)}${path.endsWith('A') ? 'B' : 'A'}`
    const res = await s.app.inject({ method: 'GET', url: `${tampered}?redirectResult=x` })
    t.equal(res.statusCode, 404)
    t.match(res.headers['content-type'], /text\/html/)
    t.equal((await shopperReturns(t, s, returnAddress, 'X6XtfGC3!forged')).searchParams.get('status'), 'requires_action')
    t.equal((await paymentOf(s, id)).status, 'requires_action')
    // The real return after a forged one: Adyen's refusal of the forgery is never replayed to it.
    const redirectResult = s.fake.authenticate((await paymentOf(s, id)).connectorReference, true)
    t.equal((await shopperReturns(t, s, returnAddress, redirectResult)).searchParams.get('status'), 'succeeded')
  })

  t.test('cancel while waiting: canceled at Adyen under a derived key; its CANCELLATION → canceled requested', async (t) => {
    const s = await setup(t, backend)
    const { id, pspReference, returnAddress } = await waiting(t, s)
    const res = await s.app.inject({ method: 'POST', url: `/api/payments/${id}/cancel`, headers: s.merchant.auth })
    t.ok(res.statusCode < 300, res.body)
    const cancel = s.fake.requests.find((request) => request.path === `/v72/payments/${pspReference}/cancels`)
    t.equal(cancel?.headers['idempotency-key'], `payment-${id}:void`)
    await notify(t, s, { eventCode: 'CANCELLATION', merchantReference: id, originalReference: pspReference })
    t.match(await paymentOf(s, id), { status: 'canceled', cancellationReason: 'requested' })
    t.equal((await shopperReturns(t, s, returnAddress)).searchParams.get('status'), 'canceled')
    t.same(await eventTypes(s, id), ['payment.requires_action', 'payment.canceled'])
  })

  t.test('abandoned: past ACTION_TTL_SECONDS the recovery worker cancels at Adyen → canceled abandoned; one authorised meanwhile succeeds', async (t) => {
    const s = await setup(t, backend, { ACTION_TTL_SECONDS: '900' })
    const abandoned = await waiting(t, s)
    const late = await waiting(t, s)
    s.clock.now += 901_000
    s.fake.authenticate(late.pspReference, true)
    await notify(t, s, { eventCode: 'AUTHORISATION', merchantReference: late.id, pspReference: late.pspReference })
    t.same(await s.app.backgroundJobs.recoverActions(), { settled: 0, abandoned: 0, waiting: 1 }, 'Adyen accepted the cancel; its notification tells')
    t.ok(s.fake.requests.some((request) => request.path === `/v72/payments/${abandoned.pspReference}/cancels`), 'canceled at Adyen')
    await notify(t, s, { eventCode: 'CANCELLATION', merchantReference: abandoned.id, originalReference: abandoned.pspReference })
    t.match(await paymentOf(s, abandoned.id), { status: 'canceled', cancellationReason: 'abandoned' })
    t.equal((await paymentOf(s, late.id)).status, 'succeeded', 'success at Adyen wins')
    t.notOk(s.fake.requests.some((request) => request.path === `/v72/payments/${late.pspReference}/cancels`))
  })

  t.test('a lost answer (Adyen 500): pending on Adyen with the checkout data kept; the retry sends the same object under the same key, then it is erased', async (t) => {
    const s = await setup(t, backend)
    const body = { amount: 25, currency: 'EUR', paymentMethod: CARD_3DS, browserInfo: BROWSER, origin: ORIGIN, returnUrl: RETURN }
    const headers = { ...s.merchant.auth, 'idempotency-key': 'checkout-A-7' }
    s.fake.failNext('status500')
    const first = await s.app.inject({ method: 'POST', url: '/api/payments', headers, payload: body })
    t.equal(first.statusCode, 503, first.body)
    const id = String(first.json().paymentId)
    t.same((await s.app.db.payments.get(id))?.checkoutData, { paymentMethod: CARD_3DS, browserInfo: BROWSER, origin: ORIGIN }, 'kept while pending: the call can be made again')
    const retried = await s.app.inject({ method: 'POST', url: '/api/payments', headers, payload: body })
    t.equal(retried.statusCode, 201, retried.body)
    t.match(retried.json(), { id, status: 'requires_action', connector: { id: s.connectorId } })
    const [lost, again] = paymentsSent(s)
    t.equal(again?.headers['idempotency-key'], lost?.headers['idempotency-key'], 'the same key: Adyen replays instead of charging again')
    t.same(again?.body, lost?.body, 'the same request')
    t.equal((await s.app.db.payments.get(id))?.checkoutData, undefined, 'erased with Adyen\'s answer')
  })

  // The whole number in any of the forms sent: four digits alone also turn up in the random part of an id or a trace id.
  const CARD_NUMBER_SENT = /4111[ -]?1111[ -]?1111[ -]?1111/
  t.test('a card number in the paymentMethod object is a 400 and never logged; an object needs returnUrl; the object goes to Adyen only', async (t) => {
    const s = await setup(t, backend, {}, true)
    const before = paymentsSent(s).length
    const pay = async (body: Record<string, unknown>) => await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 25, currency: 'EUR', returnUrl: RETURN, ...body } })
    const deep = { type: 'scheme', a: { b: { c: { d: { e: { f: { g: { h: 'x' } } } } } } } }
    for (const paymentMethod of [{ type: 'scheme', number: '4111111111111111', cvc: '737' }, { type: 'scheme', encryptedCardNumber: '4111 1111 1111 1111' },
      { type: 'scheme', card: 4111111111111111 }, { type: 'scheme', 4111111111111111: 'x' }, deep]) {
      const res = await pay({ paymentMethod })
      t.equal(res.statusCode, 400)
      t.match(res.json(), { status: 400, errors: { paymentMethod: [/card number/] } })
      t.notMatch(res.body, CARD_NUMBER_SENT)
    }
    const browser = await pay({ paymentMethod: CARD_3DS, browserInfo: { ...BROWSER, userAgent: '4111111111111111' } })
    t.equal(browser.statusCode, 400)
    t.match(browser.json(), { errors: { browserInfo: [/card number/] } })
    const offSession = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 25, currency: 'EUR', paymentMethod: CARD_3DS } })
    t.equal(offSession.statusCode, 400)
    t.match(offSession.json(), { errors: { paymentMethod: [/customer-present/] } })
    const notAnOrigin = await pay({ paymentMethod: CARD_3DS, origin: 'https://shop.example.com/checkout?x=1' })
    t.equal(notAnOrigin.statusCode, 400)
    t.match(notAnOrigin.json(), { errors: { origin: [/origin of the shopper's page/] } })
    const browserOffSession = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 25, currency: 'EUR', browserInfo: BROWSER } })
    t.equal(browserOffSession.statusCode, 400)
    t.match(browserOffSession.json(), { errors: { browserInfo: [/customer-present/] } })
    t.equal(paymentsSent(s).length, before, 'nothing reached Adyen')
    t.notOk(s.lines.some((line) => CARD_NUMBER_SENT.test(line)), 'the card number is in no log line')

    const routed = await pay({ paymentMethod: { ...CARD_3DS, encryptedCardNumber: 'test_encrypted_visa' } })
    t.equal(routed.statusCode, 201, routed.body)
    t.match(routed.json(), { status: 'succeeded', connector: { id: s.connectorId, type: 'adyen' }, attempts: [{ connectorType: 'simulated', outcome: 'skipped', code: 'no_payment_method' }, { connectorType: 'adyen', outcome: 'succeeded' }] })
  })
}

t.test('SQLite', async (t) => { cases(t, sqlite) })
t.test('PostgreSQL', async (t) => {
  if (!await ensurePostgres(t)) return
  cases(t, postgres)
})
