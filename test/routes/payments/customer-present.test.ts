import t, { type Test } from 'tap'
import { buildTestApp, merchantWithKey } from '../../helpers/app'
import { FAKE_ADYEN_API_KEY, FAKE_ADYEN_MERCHANT, FakeAdyen } from '../../helpers/fake-adyen'
import { spyGateway } from '../../helpers/gateway'
import { manualClock, postJson, PROBLEM, refundsOf } from '../../helpers/payments'
import type { App } from '../../../app/app'
import { ensurePostgres, freshSchema } from '../../helpers/postgres'

const BASE = 'https://pay.example.com'
const RETURN = 'https://shop.example.com/checkout/complete?order=A-1042'
const ACTION = 6001
const env = { PUBLIC_BASE_URL: BASE }

async function eventTypes (app: App, paymentId: string): Promise<string[]> {
  const events = (await app.inject({ method: 'GET', url: '/api/events?limit=100' })).json().data as Array<{ type: string, resource: { id: string } }>
  return events.filter((event) => event.resource.id === paymentId).map((event) => event.type).reverse()
}

/** Creates a customer-present payment of the action amount: 201 requires_action with nextAction to the simulated bank. */
async function waitingPayment (t: Test, app: App, body: Record<string, unknown> = {}, key?: string): Promise<{ id: string, bankUrl: URL, returnAddress: string }> {
  const res = await app.inject(postJson('/api/payments', { amount: ACTION, currency: 'EUR', returnUrl: RETURN, ...body }, key))
  t.equal(res.statusCode, 201, res.body)
  const payment = res.json()
  t.match(payment, { status: 'requires_action', returnUrl: RETURN, nextAction: { type: 'redirect', method: 'GET' }, amountCaptured: 0 })
  const bankUrl = new URL(payment.nextAction.url)
  t.equal(`${bankUrl.origin}${bankUrl.pathname}`, `${BASE}/checkout/simulated-bank`, 'the simulated bank is on the service')
  const returnAddress = bankUrl.searchParams.get('returnUrl') ?? ''
  t.ok(returnAddress.startsWith(`${BASE}/checkout/return/`), 'the PSP returns the shopper to the service')
  t.notOk(returnAddress.includes(payment.id), 'the return address carries a token, not the payment id')
  return { id: payment.id, bankUrl, returnAddress }
}

/** The simulated bank's button: 303 to the service's return address. */
async function bankChooses (t: Test, app: App, bankUrl: URL, outcome: 'succeed' | 'fail'): Promise<void> {
  const page = await app.inject({ method: 'GET', url: `${bankUrl.pathname}${bankUrl.search}` })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.body, /value="succeed"/)
  // The form's navigation ends on the merchant's page (through the return address): its origin may be a form target.
  t.match(page.headers['content-security-policy'], /form-action 'self' https:\/\/shop\.example\.com[;\s]/)
  const form = new URLSearchParams({ key: bankUrl.searchParams.get('key') ?? '', returnUrl: bankUrl.searchParams.get('returnUrl') ?? '', outcome })
  const account = bankUrl.searchParams.get('account')
  if (account !== null) form.set('account', account)
  const res = await app.inject({ method: 'POST', url: bankUrl.pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() })
  t.equal(res.statusCode, 303, res.body)
  t.equal(res.headers.location, bankUrl.searchParams.get('returnUrl'))
}

/** The shopper's browser follows the PSP back to the service: 303 to the merchant with paymentId and status. */
async function shopperReturns (app: App, returnAddress: string, method: 'GET' | 'POST' = 'GET'): Promise<{ statusCode: number, location: URL | undefined, body: string }> {
  const url = new URL(returnAddress)
  const res = await app.inject(method === 'GET'
    ? { method, url: `${url.pathname}?payment_intent=pi_forged&status=succeeded` }
    : { method, url: url.pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'redirectResult=forged&status=succeeded' })
  const location = res.headers.location
  return { statusCode: res.statusCode, location: typeof location === 'string' ? new URL(location) : undefined, body: res.body }
}

type Backend = (t: Test) => Promise<Record<string, string>>
const sqlite: Backend = async () => ({})
const postgres: Backend = async (t) => ({ DATABASE_URL: (await freshSchema(t)).url })

function cases (t: Test, backend: Backend): void {
  t.test('authenticated: requires_action → the bank page → return → 303 to returnUrl with paymentId and status=succeeded; one charge; events', async (t) => {
    const app = await buildTestApp(t, { ...await backend(t), ...env })
    const { id, bankUrl, returnAddress } = await waitingPayment(t, app)
    t.match((await app.inject({ method: 'GET', url: `/api/payments/${id}` })).json(), { status: 'requires_action', nextAction: { url: bankUrl.toString() } })
    t.same((await app.inject({ method: 'GET', url: '/api/payments?status=requires_action' })).json().data.map((p: { id: string }) => p.id), [id], 'listing filter')
    // Before the shopper authenticated, a return only redirects with the current status.
    const early = await shopperReturns(app, returnAddress)
    t.equal(early.statusCode, 303)
    t.equal(early.location?.searchParams.get('status'), 'requires_action', 'the forged status in the query is never trusted')
    await bankChooses(t, app, bankUrl, 'succeed')
    const back = await shopperReturns(app, returnAddress)
    t.equal(back.statusCode, 303)
    t.equal(back.location?.origin, 'https://shop.example.com')
    t.equal(back.location?.pathname, '/checkout/complete')
    t.equal(back.location?.searchParams.get('order'), 'A-1042', 'the merchant\'s own query is kept')
    t.equal(back.location?.searchParams.get('paymentId'), id)
    t.equal(back.location?.searchParams.get('status'), 'succeeded')
    const payment = (await app.inject({ method: 'GET', url: `/api/payments/${id}` })).json()
    t.match(payment, { status: 'succeeded', amountCaptured: ACTION })
    t.notOk('nextAction' in payment, 'no nextAction once settled')
    // A reload, a double submit (POST form), a late second return: only redirects.
    for (const method of ['GET', 'POST'] as const) {
      const again = await shopperReturns(app, returnAddress, method)
      t.equal(again.statusCode, 303)
      t.equal(again.location?.searchParams.get('status'), 'succeeded')
    }
    t.same(await eventTypes(app, id), ['payment.requires_action', 'payment.succeeded'], 'each change once')
    t.equal((await app.inject(postJson(refundsOf(id), {}))).statusCode, 201, 'refundable once succeeded')
  })

  t.test('authentication failed → declined authentication_failed, payment.declined; manual capture → requires_capture', async (t) => {
    const app = await buildTestApp(t, { ...await backend(t), ...env })
    const failed = await waitingPayment(t, app)
    await bankChooses(t, app, failed.bankUrl, 'fail')
    const back = await shopperReturns(app, failed.returnAddress, 'POST')
    t.equal(back.statusCode, 303)
    t.equal(back.location?.searchParams.get('status'), 'declined')
    t.match((await app.inject({ method: 'GET', url: `/api/payments/${failed.id}` })).json(), { status: 'declined', declineCode: 'authentication_failed' })
    t.same(await eventTypes(app, failed.id), ['payment.requires_action', 'payment.declined'])

    const manual = await waitingPayment(t, app, { captureMethod: 'manual' })
    await bankChooses(t, app, manual.bankUrl, 'succeed')
    t.equal((await shopperReturns(app, manual.returnAddress)).location?.searchParams.get('status'), 'requires_capture')
    const captured = await app.inject({ method: 'POST', url: `/api/payments/${manual.id}/capture` })
    t.match(captured.json(), { status: 'succeeded', amountCaptured: ACTION })
  })

  t.test('while requires_action: capture and refund are 409 with paymentStatus; cancel → canceled requested; a late authentication changes nothing', async (t) => {
    const app = await buildTestApp(t, { ...await backend(t), ...env })
    const { id, bankUrl, returnAddress } = await waitingPayment(t, app, { captureMethod: 'manual' })
    const capture = await app.inject({ method: 'POST', url: `/api/payments/${id}/capture` })
    t.equal(capture.statusCode, 409)
    t.equal(capture.headers['content-type'], PROBLEM)
    t.match(capture.json(), { type: 'urn:problem-type:payment-not-capturable', paymentStatus: 'requires_action' })
    const refund = await app.inject(postJson(refundsOf(id), {}))
    t.equal(refund.statusCode, 409)
    t.match(refund.json(), { type: 'urn:problem-type:payment-not-refundable', paymentStatus: 'requires_action' })
    const cancel = await app.inject({ method: 'POST', url: `/api/payments/${id}/cancel` })
    t.equal(cancel.statusCode, 200)
    t.match(cancel.json(), { status: 'canceled', cancellationReason: 'requested' })
    // The shopper authenticates at the bank after all: the void came first at the PSP; nothing moves.
    const form = new URLSearchParams({ key: bankUrl.searchParams.get('key') ?? '', returnUrl: returnAddress, outcome: 'succeed' })
    await app.inject({ method: 'POST', url: bankUrl.pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() })
    t.equal((await shopperReturns(app, returnAddress)).location?.searchParams.get('status'), 'canceled')
    t.same(await eventTypes(app, id), ['payment.requires_action', 'payment.canceled'])
  })

  t.test('the return endpoint: an unknown or tampered token is a plain 404 page; it needs no API key', async (t) => {
    const app = await buildTestApp(t, { ...await backend(t), ...env }, {}, { credentials: 'none' })
    for (const token of ['nope', 'A'.repeat(43), '019aa9f2-3c41-7e2b-9d5a-4f0c6b2e8a17']) {
      const res = await app.inject({ method: 'GET', url: `/checkout/return/${token}` })
      t.equal(res.statusCode, 404)
      t.match(res.headers['content-type'], /^text\/html/)
      t.notOk(res.headers.location)
    }
    const bank = await app.inject({ method: 'GET', url: `/checkout/simulated-bank?key=payment-x&returnUrl=${encodeURIComponent('https://evil.example.com/')}` })
    t.equal(bank.statusCode, 404, 'the simulated bank follows only the service\'s own return addresses')
  })

  t.test('returnUrl validation: https (http only for loopback), ≤ 2048 characters, no credentials; 400 errors.returnUrl before anything', async (t) => {
    const gateway = spyGateway()
    const app = await buildTestApp(t, { ...await backend(t), ...env }, { gateway })
    for (const returnUrl of ['http://shop.example.com/done', 'shop.example.com/done', 'ftp://shop.example.com/', 'https://user:pw@shop.example.com/',
      `https://shop.example.com/${'a'.repeat(2040)}`, 'javascript:alert(1)', '']) {
      const res = await app.inject(postJson('/api/payments', { amount: 10, currency: 'EUR', returnUrl }))
      t.equal(res.statusCode, 400, returnUrl.slice(0, 40))
      t.ok(res.json().errors.returnUrl, 'errors.returnUrl')
    }
    for (const returnUrl of ['http://localhost:5173/done', 'http://127.0.0.1/done', 'http://[::1]:8080/done', 'https://shop.example.com/done']) {
      t.equal((await app.inject(postJson('/api/payments', { amount: 10, currency: 'EUR', returnUrl }))).statusCode, 201, returnUrl)
    }
    t.equal(gateway.calls.length, 4, 'refused requests never reached the gateway')
    t.match(gateway.calls[0], { returnUrl: new RegExp(`^${BASE}/checkout/return/[A-Za-z0-9_-]{43}$`) }, 'the connector gets the service\'s return address')
    const offSession = await app.inject(postJson('/api/payments', { amount: 10, currency: 'EUR' }))
    t.equal(offSession.statusCode, 201)
    t.notOk('returnUrl' in (gateway.calls.at(-1) ?? {}), 'without returnUrl: off-session, as always')
    t.notOk('returnUrl' in offSession.json())
  })

  t.test('returnUrl is part of the Idempotency-Key fingerprint; the replay answers the stored requires_action', async (t) => {
    const app = await buildTestApp(t, { ...await backend(t), ...env })
    const first = await waitingPayment(t, app, {}, 'k-3ds')
    const replay = await app.inject(postJson('/api/payments', { amount: ACTION, currency: 'EUR', returnUrl: RETURN }, 'k-3ds'))
    t.equal(replay.statusCode, 201)
    t.equal(replay.headers['idempotent-replayed'], 'true')
    t.match(replay.json(), { id: first.id, status: 'requires_action' })
    const other = await app.inject(postJson('/api/payments', { amount: ACTION, currency: 'EUR', returnUrl: `${RETURN}&x=1` }, 'k-3ds'))
    t.equal(other.statusCode, 409)
    t.equal(other.json().type, 'urn:problem-type:idempotency-key-reused')
  })

  t.test('without PUBLIC_BASE_URL a customer-present payment is 409 public-base-url-required and nothing is stored', async (t) => {
    const gateway = spyGateway()
    const app = await buildTestApp(t, await backend(t), { gateway })
    const res = await app.inject(postJson('/api/payments', { amount: 10, currency: 'EUR', returnUrl: RETURN }, 'k-none'))
    t.equal(res.statusCode, 409)
    t.equal(res.headers['content-type'], PROBLEM)
    t.equal(res.json().type, 'urn:problem-type:public-base-url-required')
    t.equal(gateway.calls.length, 0)
    t.same((await app.inject({ method: 'GET', url: '/api/payments' })).json().data, [], 'nothing stored')
    t.equal((await app.inject(postJson('/api/payments', { amount: 10, currency: 'EUR' }, 'k-none'))).statusCode, 201, 'the key was not consumed')
  })

  t.test('the simulated gateway off-session: the action amount is declined authentication_required (402)', async (t) => {
    const app = await buildTestApp(t, { ...await backend(t), ...env })
    const res = await app.inject(postJson('/api/payments', { amount: ACTION, currency: 'EUR' }))
    t.equal(res.statusCode, 402)
    t.match(res.json(), { type: 'urn:problem-type:payment-declined', declineCode: 'authentication_required' })
  })

  t.test('the recovery worker: asks the PSP after a minute (success wins), cancels after ACTION_TTL_SECONDS → canceled abandoned', async (t) => {
    const clock = manualClock()
    const app = await buildTestApp(t, { ...await backend(t), ...env, ACTION_TTL_SECONDS: '600' }, { clock: clock.read })
    const authenticated = await waitingPayment(t, app)
    const abandoned = await waitingPayment(t, app)
    const lateSuccess = await waitingPayment(t, app)
    await bankChooses(t, app, authenticated.bankUrl, 'succeed')
    t.same(await app.backgroundJobs.recoverActions(), { settled: 0, abandoned: 0, waiting: 0 }, 'younger than a minute: not asked')
    clock.now += 61_000
    t.same(await app.backgroundJobs.recoverActions(), { settled: 1, abandoned: 0, waiting: 2 }, 'the shopper closed the tab: the worker asks the PSP')
    t.equal((await app.inject({ method: 'GET', url: `/api/payments/${authenticated.id}` })).json().status, 'succeeded')
    clock.now += 600_000
    await bankChooses(t, app, lateSuccess.bankUrl, 'succeed')
    t.same(await app.backgroundJobs.recoverActions(), { settled: 1, abandoned: 1, waiting: 0 })
    t.match((await app.inject({ method: 'GET', url: `/api/payments/${abandoned.id}` })).json(), { status: 'canceled', cancellationReason: 'abandoned' })
    t.equal((await app.inject({ method: 'GET', url: `/api/payments/${lateSuccess.id}` })).json().status, 'succeeded', 'money taken is never left as canceled')
    // The abandoned payment's shopper comes back at last: the bank answers the void, the return only redirects.
    const form = new URLSearchParams({ key: abandoned.bankUrl.searchParams.get('key') ?? '', returnUrl: abandoned.returnAddress, outcome: 'succeed' })
    await app.inject({ method: 'POST', url: abandoned.bankUrl.pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() })
    t.equal((await shopperReturns(app, abandoned.returnAddress)).location?.searchParams.get('status'), 'canceled')
    t.same(await eventTypes(app, abandoned.id), ['payment.requires_action', 'payment.canceled'])
  })

  t.test('connectors: a stored Adyen card is charged customer-present (Ecommerce, CardOnFile); a payment without a token skips Adyen to a simulated account, whose bank decides on its own ledger', async (t) => {
    const adyen = await FakeAdyen.start()
    t.teardown(async () => { await adyen.close() })
    const app = await buildTestApp(t, { ...await backend(t), ...env, ADYEN_CHECKOUT_URL: adyen.url })
    const merchant = await merchantWithKey(app)
    const addConnector = async (body: Record<string, unknown>): Promise<string> => {
      const res = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: merchant.auth, payload: body })
      t.equal(res.statusCode, 201, res.body)
      return res.json().id
    }
    await addConnector({ type: 'adyen', credentials: { apiKey: FAKE_ADYEN_API_KEY, merchantAccount: FAKE_ADYEN_MERCHANT, hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056' }, priority: 0 })
    const pay = async (body: Record<string, unknown>) => await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: body })
    const paymentsAtAdyen = () => adyen.requests.filter((request) => request.path.endsWith('/payments'))
    const stored = await pay({ amount: ACTION, currency: 'EUR', paymentMethod: 'stored_3ds', shopperReference: 'shopper-8812', returnUrl: RETURN })
    t.equal(stored.statusCode, 201, stored.body)
    t.match(stored.json(), { status: 'requires_action', connector: { type: 'adyen' }, nextAction: { type: 'redirect', method: 'GET' } })
    t.match(paymentsAtAdyen().at(-1)?.body, {
      shopperInteraction: 'Ecommerce',
      channel: 'Web',
      recurringProcessingModel: 'CardOnFile',
      shopperReference: 'shopper-8812',
      paymentMethod: { type: 'scheme', storedPaymentMethodId: 'stored_3ds' },
      returnUrl: /\/checkout\/return\//
    })
    const before = paymentsAtAdyen().length
    const simulatedId = await addConnector({ type: 'simulated', priority: 1 })
    const res = await pay({ amount: ACTION, currency: 'EUR', returnUrl: RETURN })
    t.equal(res.statusCode, 201)
    const payment = res.json()
    t.match(payment, { status: 'requires_action', connector: { id: simulatedId, type: 'simulated' }, attempts: [{ outcome: 'skipped', code: 'no_payment_method' }, { outcome: 'requires_action', connectorId: simulatedId }] })
    t.equal(paymentsAtAdyen().length, before, 'Adyen, without a token, is not asked')
    const bankUrl = new URL(payment.nextAction.url)
    t.equal(bankUrl.searchParams.get('account'), simulatedId)
    await bankChooses(t, app, bankUrl, 'succeed')
    const back = await shopperReturns(app, bankUrl.searchParams.get('returnUrl') ?? '')
    t.equal(back.location?.searchParams.get('status'), 'succeeded')
  })
}

t.test('SQLite', async (t) => { cases(t, sqlite) })
t.test('PostgreSQL', async (t) => {
  if (!await ensurePostgres(t)) return
  cases(t, postgres)
})
