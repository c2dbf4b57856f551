// The dashboard at /dashboard/ in a real Chromium against the built server (npm run test:browser): a merchant and
// the operator use it through the session the way a person would, every page passes axe (no violation of any
// impact), and any CSP violation, page error, console error or unexpected HTTP error fails the test.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import * as harness from './harness.mjs'
import { ADMIN, ADMIN_API_KEY, ROOT, SCREENSHOTS, apiClient, assertAccessible, closeHttp, launchChromium, startService, startServiceWithPublicUrl } from './harness.mjs'
import { SIMULATED_ACTION_AMOUNT } from '../dist/src/gateway/simulated/gateway.js'

/** Committed, shown in docs/dashboard.md. */
const DOCS_SCREENSHOT = join(ROOT, 'docs', 'dashboard-payments.png')

let server
let base
let browser
let receiver
/** Merchant A signs in; merchant B's payment must stay invisible to A. */
let merchantA
let merchantB
let paymentOfA
let paymentOfB
/** Merchant C sells mostly in USD: 8 of its 9 settled payments, two authorizations to capture, one EUR payment. */
let merchantC
const ofC = {}
/** Merchant D takes payments at its shoppers' checkout: two wait for their shopper (requires_action), one succeeded. */
let merchantD
const ofD = {}
const SHOP_RETURN = 'https://shop.example.com/checkout/complete'

/** A webhook receiver on loopback: answers 500 to the first delivery, 200 afterwards. */
async function startReceiver () {
  const received = []
  const http = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (chunk) => { body += chunk }).on('end', () => {
      received.push(body)
      res.writeHead(received.length === 1 ? 500 : 200).end(received.length === 1 ? 'receiver down' : 'ok')
    })
  })
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve))
  return { http, received, url: `http://127.0.0.1:${http.address().port}/hooks` }
}

const call = apiClient(() => base)

/** A merchant and its API key, created the way an operator would (admin key over HTTP). */
async function merchant (name) {
  const created = await call('POST', '/merchants', ADMIN, { name, email: `${name.toLowerCase().replace(/\W/g, '-')}@example.com` })
  assert.equal(created.status, 201)
  const key = await call('POST', `/merchants/${created.body.id}/api-keys`, ADMIN, { name: 'checkout' })
  assert.equal(key.status, 201)
  return { id: created.body.id, name, secret: key.body.secret, auth: { authorization: `Bearer ${key.body.secret}` } }
}

async function createPayment (owner, body) {
  const created = await call('POST', '/api/payments', { ...owner.auth, 'idempotency-key': crypto.randomUUID() }, body)
  assert.equal(created.status, 201, JSON.stringify(created.body))
  return created.body
}

before(async () => {
  // PUBLIC_BASE_URL (the service's own URL): customer-present payments need it.
  server = await startServiceWithPublicUrl({
    // The test's webhook receiver is plain http on loopback; a failed delivery waits an hour, so only Retry resends it.
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_DELAYS: '1h',
    WEBHOOK_POLL_INTERVAL_MS: '200'
  })
  base = server.url
  receiver = await startReceiver()
  browser = await launchChromium()
  merchantA = await merchant('Acme Shop')
  merchantB = await merchant('Other Shop')
  paymentOfA = await createPayment(merchantA, { amount: 25, currency: 'EUR', metadata: { order_id: 'order-1001' }, customer: { email: 'ada@example.com', name: 'Ada Lovelace' } })
  await createPayment(merchantA, { amount: 12.5, currency: 'EUR', metadata: { order_id: 'order-1002' }, paymentMethod: 'pm_card_mastercard', customer: { email: 'grace@example.com' } })
  // 2000-2999.99 is declined by the simulated gateway: the Overview then has all its outcomes to show.
  const declined = await call('POST', '/api/payments', { ...merchantA.auth, 'idempotency-key': crypto.randomUUID() }, { amount: 2500, currency: 'EUR' })
  assert.equal(declined.status, 402, JSON.stringify(declined.body))
  paymentOfB = await createPayment(merchantB, { amount: 40, currency: 'EUR' })

  merchantC = await merchant('Dollar Diner')
  ofC.eur = await createPayment(merchantC, { amount: 100, currency: 'EUR' })
  ofC.jane = await createPayment(merchantC, { amount: 12.34, currency: 'USD', paymentMethod: 'pm_card_mastercard', customer: { email: 'Jane.Doe@example.com', name: 'Jane Doe' } })
  ofC.usd35 = await createPayment(merchantC, { amount: 35, currency: 'USD', metadata: { order_id: 'C-35' } })
  for (const amount of [8, 9.5, 21, 64, 3]) await createPayment(merchantC, { amount, currency: 'USD' })
  const declinedC = await call('POST', '/api/payments', { ...merchantC.auth, 'idempotency-key': crypto.randomUUID() }, { amount: 2100, currency: 'USD' })
  assert.equal(declinedC.status, 402)
  ofC.declined = declinedC.body.paymentId
  ofC.auth10 = await createPayment(merchantC, { amount: 10, currency: 'USD', captureMethod: 'manual' })
  ofC.auth50 = await createPayment(merchantC, { amount: 50, currency: 'USD', captureMethod: 'manual' })

  merchantD = await merchant('Checkout Shop')
  ofD.paid = await createPayment(merchantD, { amount: 15, currency: 'EUR' })
  // The simulated gateway's authentication amount with a returnUrl: 201 requires_action, nextAction to its bank's page.
  ofD.waiting = await createPayment(merchantD, { amount: SIMULATED_ACTION_AMOUNT, currency: 'EUR', returnUrl: `${SHOP_RETURN}?order=D-1`, metadata: { order_id: 'D-1' } })
  ofD.abandoned = await createPayment(merchantD, { amount: SIMULATED_ACTION_AMOUNT, currency: 'EUR', returnUrl: `${SHOP_RETURN}?order=D-2`, metadata: { order_id: 'D-2' } })
  for (const payment of [ofD.waiting, ofD.abandoned]) assert.equal(payment.status, 'requires_action')
})

after(async () => {
  await browser?.close()
  closeHttp(receiver?.http)
  await server?.stop()
})

/**
 * Runs `body` on a fresh page, then fails on any problem the page reported. `expected` lists the error answers a test
 * provokes on purpose ({ path: RegExp, status }). A first visit is not one: GET /dashboard/session answers 204 without
 * a session cookie, so the console stays clean.
 */
async function onPage (expected, body) {
  await harness.onPage(browser, body, { expected })
}

/** Signs in through the form; resolves with the session the server answered (its CSRF token included). */
async function signIn (page, apiKey, at = base) {
  return await harness.signIn(page, at, apiKey)
}

async function openPage (page, hash, heading) {
  await harness.openPage(page, base, hash, heading)
}

test('merchant: sign in, the payment in the list and its timeline, a partial refund from its page', async () => {
  await onPage([], async (page, context) => {
    await page.goto(`${base}/dashboard/`)
    await page.getByLabel('API key').waitFor()
    await assertAccessible(page, 'sign in')
    const session = await signIn(page, merchantA.secret)
    assert.deepEqual(session.principal, { kind: 'merchant', merchantId: merchantA.id })

    // The key is not kept in the browser: not in storage, and the session cookie is out of the page's reach.
    const storage = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie)
    assert.ok(!storage.includes(merchantA.secret), 'the key is in no browser storage')
    assert.ok(!storage.includes('dashboard_session'), 'the session cookie is HttpOnly')
    const cookie = (await context.cookies()).find((c) => c.name === 'dashboard_session')
    assert.equal(cookie?.httpOnly, true)
    assert.equal(cookie?.sameSite, 'Strict')

    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    // From GET /api/payments/summary: today's figures, the totals, the success rate and the chart.
    await page.getByTestId('success-rate').waitFor()
    assert.equal(await page.getByTestId('success-rate').innerText(), '66.7 %', 'two succeeded payments, one declined')
    const totals = await page.locator('dl.totals').innerText()
    assert.match(totals, /Succeeded\s+2 · €37\.50/)
    assert.match(totals, /Declined\s+1 · €2,500\.00/)
    assert.match(totals, /Refunded\s+0 · €0\.00/)
    assert.equal(await page.locator('figure .chart canvas').count(), 1, 'uPlot drew the chart')
    const today = new Date().toISOString().slice(0, 10)
    await page.getByText('The chart\'s numbers as a table').click()
    const todayRow = page.getByRole('row', { name: new RegExp(`^${today}`) })
    assert.deepEqual(await todayRow.getByRole('cell').allInnerTexts(), ['2', '1', '0'], 'today: 2 succeeded, 1 declined, 0 refunded')
    assert.equal(await page.locator('figure details tbody tr').count(), 30, 'the default range is the last 30 days, zeros included')
    await assertAccessible(page, 'overview')

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payments' }).click()
    await page.getByRole('heading', { level: 1, name: 'Payments' }).waitFor()
    const row = page.getByRole('row').filter({ hasText: paymentOfA.id })
    await row.waitFor()
    assert.match(await row.innerText(), /€25\.00[\s\S]*succeeded/)
    await assertAccessible(page, 'payments')
    mkdirSync(dirname(DOCS_SCREENSHOT), { recursive: true })
    await page.screenshot({ path: DOCS_SCREENSHOT })

    // Search by a metadata value: only the matching payment is listed.
    await page.getByLabel('Search').fill('order_id=order-1001')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/q=order_id/)
    await page.getByRole('row').filter({ hasText: paymentOfA.id }).waitFor()
    // The unfiltered list (which holds the same row) may still be on screen: wait for the search's answer to replace it.
    await page.waitForFunction(() => document.querySelectorAll('table.list tbody tr').length === 1, undefined, { timeout: 5000 }).catch(() => {})
    assert.equal(await page.locator('table.list tbody tr').count(), 1, 'the metadata search found exactly one payment')

    await page.getByRole('link', { name: paymentOfA.id }).click()
    await page.getByRole('heading', { level: 1, name: /Payment/ }).waitFor()
    await page.getByTestId('timeline').getByText('payment.succeeded').waitFor()
    assert.equal(await page.getByTestId('payment-status').innerText(), 'succeeded')
    await assertAccessible(page, 'payment')

    await page.getByLabel(/Refund amount/).fill('5')
    await page.getByLabel('Reason').fill('damaged cup')
    await page.getByRole('button', { name: 'Refund' }).click()
    const dialog = page.getByRole('dialog', { name: 'Refund?' })
    await dialog.waitFor()
    assert.match(await dialog.innerText(), /Give back €5\.00 to the customer \(reason: damaged cup\)/)
    await assertAccessible(page, 'refund confirmation')
    await dialog.getByRole('button', { name: 'Refund' }).click()
    await page.getByRole('status').filter({ hasText: /^Refund [0-9a-f-]{36}: succeeded, €5\.00\.$/ }).waitFor()
    await page.getByTestId('refunds').getByText('damaged cup').waitFor()
    assert.match(await page.getByTestId('refunds').innerText(), /€5\.00[\s\S]*succeeded/)
    await page.getByTestId('amount-refunded').getByText('€5.00').waitFor()
    await page.getByTestId('timeline').getByText('refund.succeeded').waitFor()
    await page.getByTestId('payment-status').getByText('partially refunded').waitFor()

    const stored = await call('GET', `/api/payments/${paymentOfA.id}`, merchantA.auth)
    assert.equal(stored.body.amountRefunded, 5, 'the API agrees: 5.00 refunded, once')
    const refunds = await call('GET', `/api/payments/${paymentOfA.id}/refunds`, merchantA.auth)
    assert.equal(refunds.body.data.length, 1)
  })
})

test('merchant: a failing webhook delivery shows the receiver\'s 500, and Retry delivers it', async () => {
  await onPage([], async (page) => {
    await signIn(page, merchantA.secret)
    await openPage(page, '/webhooks', 'Webhooks')
    await page.getByLabel('URL').fill(receiver.url)
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    const secret = await page.getByTestId('secret').innerText()
    assert.match(secret, /^whsec_/, 'the signing secret is shown once')

    await createPayment(merchantA, { amount: 7.25, currency: 'EUR' })
    const deliveries = page.getByTestId('deliveries')
    // The worker delivers within a poll interval; the log is read again on demand.
    for (let i = 0; i < 50 && !/HTTP 500/.test(await deliveries.innerText().catch(() => '')); i++) {
      await page.getByRole('button', { name: 'Reload log' }).click()
      await page.waitForTimeout(200)
    }
    const failing = deliveries.getByRole('row').filter({ hasText: 'HTTP 500' })
    await failing.waitFor()
    const failingText = await failing.innerText()
    assert.match(failingText, /payment\.succeeded[\s\S]*pending[\s\S]*#1 .*HTTP 500 · \d+ ms/)
    assert.match(failingText, /#1 .*HTTP 500 · \d+ ms · answered\s+\W?receiver down/, 'the receiver\'s answer')
    // The payload: the event as sent, loaded when opened.
    await failing.getByText('Payload').click()
    const payload = JSON.parse(await failing.locator('pre').innerText())
    assert.equal(payload.type, 'payment.succeeded')
    assert.equal(payload.data.amount, 7.25)
    await assertAccessible(page, 'webhooks')

    await failing.getByRole('button', { name: 'Retry' }).click()
    await page.getByRole('dialog', { name: 'Retry?' }).getByRole('button', { name: 'Retry' }).click()
    await page.getByText('Retry scheduled').waitFor()
    for (let i = 0; i < 50 && !/HTTP 200/.test(await deliveries.innerText()); i++) {
      await page.getByRole('button', { name: 'Reload log' }).click()
      await page.waitForTimeout(200)
    }
    const delivered = deliveries.getByRole('row').filter({ hasText: 'HTTP 200' })
    await delivered.waitFor()
    assert.match(await delivered.innerText(), /succeeded[\s\S]*#1 .*HTTP 500[\s\S]*#2 .*HTTP 200/)
    assert.equal(receiver.received.length, 2, 'the receiver got the event twice: the failed attempt and the retry')

    // An endpoint for chosen event types only.
    await page.getByLabel('URL').fill(`${receiver.url}/refunds-only`)
    await page.getByLabel('Description').fill('refunds only')
    await page.getByLabel('Only these:').check()
    await page.getByLabel('refund.succeeded').check()
    await page.getByLabel('refund.failed').check()
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await page.getByTestId('secret').waitFor()
    const card = page.getByRole('region', { name: 'refunds only' })
    await card.getByText('refund.succeeded, refund.failed').waitFor()
  })
})

test('merchant: create a key (secret shown once, copied), then revoke it', async () => {
  await onPage([], async (page, context) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
    await signIn(page, merchantA.secret)
    await openPage(page, '/developers', 'Developers')
    await page.getByLabel('New key name').fill('reporting job')
    await page.getByRole('button', { name: 'Create key' }).click()
    const secret = await page.getByTestId('secret').innerText()
    assert.match(secret, /^sk_/)
    await page.getByRole('button', { name: 'Copy' }).click()
    await page.getByText('Copied to the clipboard.').waitFor()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret)
    assert.equal((await call('GET', '/api/payments', { authorization: `Bearer ${secret}` })).status, 200, 'the new key works')
    await assertAccessible(page, 'developers')

    await page.getByRole('button', { name: 'Revoke reporting job' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke reporting job' }).click()
    await page.getByText(/Revoked the key reporting job \(sk_/).waitFor()
    await page.getByTestId('api-keys').getByRole('cell', { name: 'reporting job', exact: true }).waitFor({ state: 'detached' })
    await page.getByTestId('api-keys').getByRole('cell', { name: 'checkout', exact: true }).waitFor()
    assert.equal((await call('GET', '/api/payments', { authorization: `Bearer ${secret}` })).status, 401, 'the revoked key is refused')
  })
})

test('merchant: signing out ends the session on the server (the old cookie and CSRF token get 401)', async () => {
  await onPage([], async (page, context) => {
    const session = await signIn(page, merchantA.secret)
    const cookie = (await context.cookies()).find((c) => c.name === 'dashboard_session')
    assert.ok(cookie !== undefined, 'the session cookie is set')
    const sessionHeaders = { cookie: `dashboard_session=${cookie.value}`, 'x-csrf-token': session.csrfToken }
    assert.equal((await call('GET', '/api/payments', sessionHeaders)).status, 200, 'the session works before signing out')
    assert.equal((await call('GET', '/api/payments', { cookie: `dashboard_session=${cookie.value}` })).status, 401, 'the cookie alone (no CSRF header) is refused')

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByText('You are signed out.').waitFor()
    assert.equal((await call('GET', '/api/payments', sessionHeaders)).status, 401, 'the old session no longer works')
  })
})

test('a merchant\'s session cannot read another merchant\'s payment', async () => {
  await onPage([{ path: new RegExp(`^/api/payments/${paymentOfB.id}(/refunds)?$`), status: 404 }], async (page) => {
    const session = await signIn(page, merchantA.secret)
    await openPage(page, `/payments/${paymentOfB.id}`, /Payment/)
    await page.getByRole('alert').filter({ hasText: 'Not found' }).first().waitFor()
    assert.equal(await page.getByTestId('payment-status').count(), 0, 'nothing of the payment is shown')
    const cookies = await page.context().cookies()
    const cookie = cookies.find((c) => c.name === 'dashboard_session')
    const read = await call('GET', `/api/payments/${paymentOfB.id}`, { cookie: `dashboard_session=${cookie.value}`, 'x-csrf-token': session.csrfToken })
    assert.equal(read.status, 404, 'the API answers another merchant\'s payment 404, as for an unknown id')
    await page.goto(`${base}/dashboard/#/payments`)
    await page.getByRole('heading', { level: 1, name: 'Payments' }).waitFor()
    await page.getByRole('link', { name: paymentOfA.id }).waitFor()
    assert.equal(await page.getByRole('link', { name: paymentOfB.id }).count(), 0, 'the list holds only the merchant\'s own payments')
  })
})

test('operator: merchants, suspend and reactivate, a merchant\'s pages; no Payments entry for the admin key', async () => {
  await onPage([], async (page) => {
    const session = await signIn(page, ADMIN_API_KEY)
    assert.deepEqual(session.principal, { kind: 'admin' })
    await page.getByRole('heading', { level: 1, name: 'Merchants' }).waitFor()
    const row = page.getByRole('row').filter({ hasText: merchantB.name })
    await row.waitFor()
    await assertAccessible(page, 'operator')

    await row.getByRole('button', { name: `Suspend ${merchantB.name}` }).click()
    await page.getByRole('dialog').getByRole('button', { name: `Suspend ${merchantB.name}` }).click()
    await row.getByRole('button', { name: `Reactivate ${merchantB.name}` }).waitFor()
    assert.equal((await call('GET', `/merchants/${merchantB.id}`, ADMIN)).body.status, 'suspended')
    await row.getByRole('button', { name: `Reactivate ${merchantB.name}` }).click()
    await page.getByRole('dialog').getByRole('button', { name: `Reactivate ${merchantB.name}` }).click()
    await row.getByRole('button', { name: `Suspend ${merchantB.name}` }).waitFor()
    assert.equal((await call('GET', `/merchants/${merchantB.id}`, ADMIN)).body.status, 'active')

    await row.getByRole('link', { name: `Keys and connectors of ${merchantB.name}` }).click()
    await page.getByRole('heading', { level: 1, name: 'Developers' }).waitFor()
    await page.getByTestId('api-keys').getByRole('cell', { name: 'checkout', exact: true }).waitFor()
    await assertAccessible(page, 'developers (operator)')
    await page.goto(`${base}/dashboard/#/merchants/${merchantB.id}/webhooks`)
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor()
    await page.getByText('No endpoints yet.').waitFor()

    // The operator's navigation offers only what the admin key may do; an old link to Payments says why, asking the API nothing.
    assert.deepEqual(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts(), ['Merchants'])
    await page.goto(`${base}/dashboard/#/payments`)
    await page.getByRole('heading', { level: 1, name: 'Payments' }).waitFor()
    assert.match(await page.getByRole('main').innerText(), /the admin key\s+cannot/)
    await assertAccessible(page, 'payments (operator)')
    mkdirSync(SCREENSHOTS, { recursive: true })
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-operator-payments.png'), fullPage: true })
  })
})

// Issue 44 "Broken": each test fails on the dashboard before it.

test('a key that never expires says "Never", not 1 Jan 1970', async () => {
  await onPage([], async (page) => {
    await signIn(page, merchantC.secret)
    await openPage(page, '/developers', 'Developers')
    const row = page.getByTestId('api-keys').getByRole('row').filter({ hasText: 'checkout' })
    await row.waitFor()
    assert.equal((await call('GET', `/merchants/${merchantC.id}/api-keys`, merchantC.auth)).body.data[0].expiresAt, null, 'the API says null: it never expires')
    assert.equal(await row.getByTestId('expires').innerText(), 'Never')
    assert.doesNotMatch(await page.getByTestId('api-keys').innerText(), /1970/)
  })
})

test('the payment page renders from its URL alone: another payment (a pasted link, Back) keeps nothing of the last one', async () => {
  await onPage([], async (page) => {
    await signIn(page, merchantC.secret)
    await openPage(page, `/payments/${ofC.auth50.id}`, /Payment/)
    const capture = page.getByLabel(/Capture amount/)
    assert.equal(await capture.inputValue(), '50')
    await capture.fill('35')

    // The URL changes to the 10.00 authorization (as a pasted link does): its own amount, its own confirmation.
    await page.evaluate((id) => { window.location.hash = `#/payments/${id}` }, ofC.auth10.id)
    await page.getByRole('heading', { level: 1, name: ofC.auth10.id }).waitFor()
    await page.getByRole('definition').filter({ hasText: /^\$10\.00$/ }).first().waitFor()
    assert.equal(await page.getByLabel(/Capture amount/).inputValue(), '10', 'not the 35 typed on the other payment')
    await page.getByRole('button', { name: 'Capture' }).click()
    const dialog = page.getByRole('dialog', { name: 'Capture?' })
    await dialog.waitFor()
    assert.match(await dialog.innerText(), /Capture \$10\.00;/)
    await dialog.getByRole('button', { name: 'Capture' }).click()
    await page.getByRole('status').filter({ hasText: /^Captured: the payment is now succeeded \(\$10\.00 captured\)\.$/ }).waitFor()

    // A declined payment's page shows no "Captured" notice; Back shows the captured one from its URL, as it is now.
    await page.evaluate((id) => { window.location.hash = `#/payments/${id}` }, ofC.declined)
    await page.getByTestId('payment-status').getByText('declined').waitFor()
    assert.doesNotMatch(await page.getByRole('main').innerText(), /Captured:/)
    assert.match(await page.getByRole('main').innerText(), /No action is possible in the state declined/)
    await page.goBack()
    await page.getByRole('heading', { level: 1, name: ofC.auth10.id }).waitFor()
    await page.getByTestId('payment-status').getByText('succeeded').waitFor()
    assert.doesNotMatch(await page.getByRole('main').innerText(), /Captured:/)
    await page.goBack()
    await page.getByRole('heading', { level: 1, name: ofC.auth50.id }).waitFor()
    await page.getByTestId('payment-status').getByText('requires capture').waitFor()
    assert.equal(await page.getByLabel(/Capture amount/).inputValue(), '50')
    await assertAccessible(page, 'payment after Back')
  })
})

test('the overview opens on the currency with the most payments and shows every currency\'s totals', async () => {
  await onPage([], async (page) => {
    await signIn(page, merchantC.secret)
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    await page.getByTestId('shown-currency').waitFor()
    assert.equal(await page.getByTestId('shown-currency').innerText(), 'In USD', '8 of 9 payments are USD')
    const table = page.getByTestId('currency-totals')
    const rows = await table.locator('tbody tr').allInnerTexts()
    assert.equal(rows.length, 2)
    assert.match(rows[0], /^USD\s+(\d+) · \$[\d,.]+\s+1 · \$2,100\.00/, 'USD first: most payments')
    assert.match(rows[1], /^EUR\s+1 · €100\.00\s+0 · €0\.00/)
    await assertAccessible(page, 'overview, two currencies')
    // The chosen currency is in the URL: a reload (or a shared link) shows the same.
    await page.getByLabel('Currency shown below').selectOption('EUR')
    await page.waitForURL(/currency=EUR/)
    await page.getByTestId('shown-currency').getByText('In EUR').waitFor()
    await page.waitForFunction(() => document.querySelector('main [role=status]') === null)
    await page.reload()
    await page.getByTestId('shown-currency').getByText('In EUR').waitFor()
  })
})

test('operator on a fresh service: no 401 on the first visit, an empty list says so, create a merchant, http webhooks name the setting', async () => {
  const fresh = await startService({})
  try {
    await onPage([{ path: /^\/merchants\/[^/]+\/webhook-endpoints$/, status: 400 }], async (page) => {
      await signIn(page, ADMIN_API_KEY, fresh.url)
      await page.getByRole('heading', { level: 1, name: 'Merchants' }).waitFor()
      await page.getByTestId('no-merchants').waitFor()
      assert.match(await page.getByTestId('no-merchants').innerText(), /No merchants yet/)
      await assertAccessible(page, 'operator, no merchants')

      await page.getByLabel('Merchant name').fill('First Shop')
      await page.getByLabel('Contact email').fill('owner@first-shop.example')
      await page.getByRole('button', { name: 'Create merchant' }).click()
      await page.getByRole('status').filter({ hasText: /^Created the merchant First Shop/ }).waitFor()
      const row = page.getByRole('row').filter({ hasText: 'First Shop' })
      await row.waitFor()
      assert.equal(await page.getByTestId('no-merchants').count(), 0)

      await row.getByRole('link', { name: 'Webhooks of First Shop' }).click()
      await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor()
      await page.getByLabel('URL').fill('http://127.0.0.1:9/hooks')
      await page.getByRole('button', { name: 'Add endpoint' }).click()
      const refusal = page.getByRole('alert').filter({ hasText: 'must use https' })
      await refusal.waitFor()
      assert.match(await refusal.innerText(), /WEBHOOK_ALLOW_PRIVATE_URLS=true/, 'the refusal names the setting for local testing')
      await assertAccessible(page, 'webhooks, refused url')
    })
  } finally {
    await fresh.stop()
  }
})

test('the one search box takes what people type: an email, an amount, a card\'s last 4, metadata, an id', async () => {
  await onPage([], async (page) => {
    await signIn(page, merchantC.secret)
    await openPage(page, '/payments', 'Payments')
    const rows = page.locator('table.list tbody tr')
    /** Searches, then waits for the list to be exactly the `expected` payments (the previous list may still be on screen a moment). */
    const searchFor = async (text, meaning, expected) => {
      await page.getByLabel('Search').fill(text)
      await page.getByRole('button', { name: 'Apply' }).click()
      await page.getByTestId('search-meaning').getByText(meaning).waitFor()
      await page.waitForFunction((ids) => {
        const shown = [...document.querySelectorAll('table.list tbody tr')].map((row) => row.textContent)
        return shown.length === ids.length && ids.every((id, i) => shown[i].includes(id))
      }, expected.map((payment) => payment.id), { timeout: 5000 }).catch(() => {})
      return await rows.allInnerTexts()
    }
    let found = await searchFor('jane.doe@EXAMPLE.com', /customer email/, [ofC.jane])
    assert.equal(found.length, 1, 'the email, in any letter case')
    assert.match(found[0], new RegExp(`${ofC.jane.id}[\\s\\S]*\\$12\\.34[\\s\\S]*Jane\\.Doe@example\\.com[\\s\\S]*mastercard •••• 4444`))
    await assertAccessible(page, 'payments, searched by email')

    // Export CSV: the same selection, as the file GET /api/payments/export streams.
    const downloading = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Export CSV' }).click()
    const file = await downloading
    assert.match(file.suggestedFilename(), /^payments-\d{4}-\d{2}-\d{2}\.csv$/)
    const csv = readFileSync(await file.path(), 'utf8')
    const records = csv.split('\r\n')
    assert.match(records[0], /^id,created_at,status,amount,currency,/)
    assert.deepEqual(records.slice(1, -1).map((record) => record.split(',')[0]), [ofC.jane.id], 'the filtered selection')
    assert.match(records[1], /,12\.34,USD,.*,Jane\.Doe@example\.com,Jane Doe,,card,mastercard,4444,/)
    await page.getByRole('status').filter({ hasText: /^Exported payments-.*\.csv/ }).waitFor()

    found = await searchFor('$35.00', /amount 35/, [ofC.usd35])
    assert.equal(found.length, 1)
    assert.match(found[0], new RegExp(ofC.usd35.id))
    found = await searchFor('4444', /card ending in 4444/, [ofC.jane])
    assert.deepEqual(found.map((row) => row.includes(ofC.jane.id)), [true])
    found = await searchFor('order_id=C-35', /metadata order_id = C-35/, [ofC.usd35])
    assert.deepEqual(found.map((row) => row.includes(ofC.usd35.id)), [true])
    // The search is in the URL: a reload shows the same list.
    await page.reload()
    await page.getByRole('link', { name: ofC.usd35.id }).waitFor()
    assert.equal(await page.getByLabel('Search').inputValue(), 'order_id=C-35')

    // Not for one frame do the previous search's rows show beside the new search's message.
    await page.evaluate(() => {
      window.staleRowsShown = false
      new window.MutationObserver(() => {
        const explained = document.body.textContent.includes('is not something the search understands')
        if (explained && document.querySelectorAll('table.list tbody tr').length > 0) window.staleRowsShown = true
      }).observe(document.body, { childList: true, subtree: true, characterData: true })
    })
    await page.getByLabel('Search').fill('what is this')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.getByText('is not something the search understands').waitFor()
    assert.equal(await rows.count(), 0, 'nothing asked of the API, no 400')
    assert.equal(await page.evaluate(() => window.staleRowsShown), false, 'the rows of order_id=C-35 never showed under the message')

    await page.getByLabel('Search').fill(ofC.jane.id.toUpperCase())
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.getByRole('heading', { level: 1, name: ofC.jane.id }).waitFor()
    assert.match(await page.getByTestId('customer').innerText(), /^Jane\.Doe@example\.com · Jane Doe$/)
    assert.equal(await page.getByTestId('payment-method').innerText(), 'mastercard •••• 4444 · expires 12/2034 · US')
    await assertAccessible(page, 'payment with customer and card')
  })
})

test('refunds: every refund of the merchant\'s payments, filtered from the URL, linked to its payment, exported as CSV', async () => {
  const refund = await call('POST', `/api/payments/${ofC.usd35.id}/refunds`, { ...merchantC.auth, 'idempotency-key': crypto.randomUUID() }, { amount: 5, reason: 'wrong size' })
  assert.equal(refund.status, 201, JSON.stringify(refund.body))
  await onPage([], async (page) => {
    await signIn(page, merchantC.secret)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Refunds' }).click()
    await page.getByRole('heading', { level: 1, name: 'Refunds' }).waitFor()
    const row = page.getByTestId('refund-list').getByRole('row').filter({ hasText: refund.body.id })
    await row.waitFor()
    assert.match(await row.innerText(), new RegExp(`${ofC.usd35.id}[\\s\\S]*\\$5\\.00[\\s\\S]*succeeded[\\s\\S]*wrong size`))
    await assertAccessible(page, 'refunds')

    const downloading = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Export CSV' }).click()
    const csv = readFileSync(await (await downloading).path(), 'utf8').split('\r\n')
    assert.equal(csv[0], 'id,payment_id,created_at,updated_at,status,amount,currency,reason,failure_code,metadata')
    assert.match(csv[1], new RegExp(`^${refund.body.id},${ofC.usd35.id},[^,]+,[^,]+,succeeded,5,USD,wrong size,,$`))

    await page.getByLabel('Status').selectOption('pending')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/status=pending/)
    await page.getByText('No refunds match.').waitFor()
    assert.equal(await page.getByLabel('Status').inputValue(), 'pending', 'the filter shows what the URL selects')
    await page.goBack()
    await row.getByRole('link', { name: ofC.usd35.id }).click()
    await page.getByRole('heading', { level: 1, name: ofC.usd35.id }).waitFor()
    await page.getByTestId('refunds').getByText('wrong size').waitFor()
  })
})

test('events: filtered by type and by payment from the URL, each with its JSON', async () => {
  await onPage([], async (page) => {
    await signIn(page, merchantC.secret)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Events' }).click()
    await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor()
    await page.getByTestId('events').waitFor()
    await assertAccessible(page, 'events')

    await page.getByLabel('Payment id').fill(ofC.usd35.id)
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(new RegExp(`payment=${ofC.usd35.id}`))
    const items = page.getByTestId('events').locator('li')
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=events] li').length === 2, undefined, { timeout: 5000 }).catch(() => {})
    assert.deepEqual((await items.locator('summary strong').allInnerTexts()), ['refund.succeeded', 'payment.succeeded'], 'the payment\'s and its refund\'s')

    await page.getByLabel('Type').selectOption('payment.succeeded')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/type=payment\.succeeded/)
    assert.equal(await page.getByLabel('Type').inputValue(), 'payment.succeeded', 'the filter shows what the URL selects')
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=events] li').length === 1, undefined, { timeout: 5000 }).catch(() => {})
    assert.equal(await items.count(), 1)
    await items.first().locator('summary').click()
    const json = JSON.parse(await items.first().locator('pre').innerText())
    assert.equal(json.type, 'payment.succeeded')
    assert.equal(json.data.id, ofC.usd35.id)
    assert.equal(json.data.metadata.order_id, 'C-35')
    await assertAccessible(page, 'events, one open')

    await page.getByLabel('Payment id').fill('not-an-id')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.getByRole('alert').filter({ hasText: 'is not a payment id' }).waitFor()
  })
})

// Issue 37: customer-present payments wait for their shopper (requires_action) until the bank's authentication.

test('a payment waiting for the shopper (requires_action): its status filter, its page says so, no capture or refund, canceled from there', async () => {
  await onPage([], async (page) => {
    await signIn(page, merchantD.secret)
    await openPage(page, '/payments', 'Payments')
    const waitingRow = page.getByRole('row').filter({ hasText: ofD.waiting.id })
    await waitingRow.waitFor()
    assert.match(await waitingRow.innerText(), /€6,001\.00\s+waiting for the shopper/)
    assert.equal(await waitingRow.locator('.badge').getAttribute('class'), 'badge status-requires_action')

    // The status filter offers it and asks the API for status=requires_action: the succeeded payment is gone.
    await page.getByLabel('Status').selectOption({ label: 'waiting for the shopper' })
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/status=requires_action/)
    // The filtered page has loaded when the paid payment is gone and the waiting ones are listed (an empty table in
    // between is the page loading, not its answer).
    await page.waitForFunction(([paid, ...waiting]) => {
      const rows = [...document.querySelectorAll('table.list tbody tr')].map((row) => row.textContent ?? '')
      return !rows.some((row) => row.includes(paid)) && waiting.every((id) => rows.some((row) => row.includes(id)))
    }, [ofD.paid.id, ofD.abandoned.id, ofD.waiting.id])
    const rows = await page.locator('table.list tbody tr').allInnerTexts()
    assert.deepEqual(rows.map((row) => [ofD.abandoned.id, ofD.waiting.id].find((id) => row.includes(id))), [ofD.abandoned.id, ofD.waiting.id], 'both, newest first, nothing else')
    assert.ok(rows.every((row) => row.includes('waiting for the shopper')))
    assert.equal(await page.getByLabel('Status').inputValue(), 'requires_action', 'the filter stays chosen (from the URL)')
    await assertAccessible(page, 'payments, waiting for the shopper')

    // Its page: the state in words and by its API name, what the shopper has to do and where, only Cancel.
    await waitingRow.getByRole('link', { name: ofD.waiting.id }).click()
    await page.getByRole('heading', { level: 1, name: ofD.waiting.id }).waitFor()
    assert.equal(await page.getByTestId('payment-status').innerText(), 'waiting for the shopper')
    await page.getByRole('definition').filter({ hasText: 'requires_action' }).waitFor()
    await page.getByRole('heading', { level: 2, name: 'Waiting for the shopper' }).waitFor()
    assert.match(await page.getByTestId('awaiting-shopper').innerText(), /has to authenticate this payment with their bank/)
    assert.equal(await page.getByTestId('next-action').innerText(), `GET ${ofD.waiting.nextAction.url}`, 'the API\'s nextAction')
    assert.match(ofD.waiting.nextAction.url, new RegExp(`^${base}/checkout/simulated-bank\\?`), 'the simulated bank on PUBLIC_BASE_URL')
    assert.equal(await page.getByTestId('return-url').innerText(), `${SHOP_RETURN}?order=D-1`)
    await page.getByRole('button', { name: 'Cancel payment' }).waitFor()
    assert.equal(await page.getByRole('button', { name: /^(Capture|Refund)$/ }).count(), 0, 'no capture, no refund')
    assert.equal(await page.getByLabel(/Capture amount|Refund amount/).count(), 0)
    await page.getByTestId('timeline').getByText('payment.requires_action').waitFor()
    await assertAccessible(page, 'payment waiting for the shopper')
    mkdirSync(SCREENSHOTS, { recursive: true })
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-requires-action.png'), fullPage: true })

    // The other one is canceled from its page: the API's cancel, canceled at the (simulated) PSP, reason "requested".
    await page.evaluate((id) => { window.location.hash = `#/payments/${id}` }, ofD.abandoned.id)
    await page.getByRole('heading', { level: 1, name: ofD.abandoned.id }).waitFor()
    await page.getByTestId('payment-status').getByText('waiting for the shopper').waitFor()
    await page.getByRole('button', { name: 'Cancel payment' }).click()
    const dialog = page.getByRole('dialog', { name: 'Cancel payment?' })
    await dialog.waitFor()
    assert.match(await dialog.innerText(), /while it waits for the shopper/)
    await dialog.getByRole('button', { name: 'Cancel payment' }).click()
    await page.getByRole('status').filter({ hasText: /^The payment is now canceled\.$/ }).waitFor()
    await page.getByTestId('payment-status').getByText('canceled').waitFor()
    assert.equal(await page.getByTestId('awaiting-shopper').count(), 0, 'nothing left for the shopper')
    await page.getByRole('definition').filter({ hasText: /^requested$/ }).waitFor()
    const canceled = await call('GET', `/api/payments/${ofD.abandoned.id}`, merchantD.auth)
    assert.equal(canceled.body.status, 'canceled')
    assert.equal(canceled.body.cancellationReason, 'requested')
    assert.equal(canceled.body.nextAction, undefined)
    assert.equal((await call('GET', `/api/payments/${ofD.waiting.id}`, merchantD.auth)).body.status, 'requires_action', 'the other still waits')

    // The events page filters on the new type.
    await openPage(page, '/events', 'Events')
    await page.getByLabel('Type').selectOption('payment.requires_action')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/type=payment\.requires_action/)
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=events] li').length === 2, undefined, { timeout: 5000 }).catch(() => {})
    assert.deepEqual(await page.getByTestId('events').locator('summary code').allInnerTexts(), [ofD.abandoned.id, ofD.waiting.id])
  })
})

test('every page of the dashboard passes axe with no violation of any impact: the merchant\'s and the operator\'s, a refused key, an unknown payment, a page not found, signed out', async () => {
  const unknown = '00000000-0000-4000-8000-000000000000'
  const expected = [{ path: /^\/dashboard\/session$/, status: 401 }, { path: new RegExp(`^/api/payments/${unknown}(/[a-z]+)?$`), status: 404 }]
  /** The page once what it loads is shown (no "Loading…" status left; a closed webhook payload's own "Loading…" is not one). */
  const loaded = async (page) => {
    await page.waitForFunction(() => ![...document.querySelectorAll('main [role="status"]')].some((status) => status.textContent === 'Loading…'), undefined, { timeout: 5000 })
  }
  await onPage(expected, async (page) => {
    await page.goto(`${base}/dashboard/`)
    await page.getByLabel('API key').fill('sk_not_a_key_of_this_service')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByRole('alert').waitFor()
    await assertAccessible(page, 'sign in, key refused')

    await signIn(page, merchantA.secret)
    const merchantPages = [
      ['/overview', 'Overview'], ['/payments', 'Payments'], [`/payments/${paymentOfA.id}`, paymentOfA.id], [`/payments/${unknown}`, unknown],
      ['/refunds', 'Refunds'], ['/disputes', 'Disputes'], ['/events', 'Events'], ['/webhooks', 'Webhooks'], ['/developers', 'Developers'], ['/audit', 'Audit log'], ['/team', 'Team'],
      ['/no-such-page', 'Page not found']
    ]
    for (const [hash, heading] of merchantPages) {
      await openPage(page, hash, heading)
      await loaded(page)
      await assertAccessible(page, `merchant, ${hash}`)
    }
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { level: 1, name: 'Sign in to the payments dashboard' }).waitFor()
    await page.getByRole('status').filter({ hasText: 'You are signed out.' }).waitFor()
    await assertAccessible(page, 'signed out')

    await signIn(page, ADMIN_API_KEY)
    const operatorPages = [
      ['/operator', 'Merchants'], [`/merchants/${merchantA.id}/webhooks`, 'Webhooks'], [`/merchants/${merchantA.id}/developers`, 'Developers'],
      [`/merchants/${merchantA.id}/team`, 'Team'], [`/merchants/${merchantA.id}/audit`, 'Audit log'], ['/payments', 'Payments'], ['/no-such-page', 'Page not found']
    ]
    for (const [hash, heading] of operatorPages) {
      await openPage(page, hash, heading)
      await loaded(page)
      await assertAccessible(page, `operator, ${hash}`)
    }
  })
})
