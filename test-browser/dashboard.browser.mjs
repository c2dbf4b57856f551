// The dashboard at /dashboard/ in a real Chromium against the built server (npm run test:browser): a merchant and
// the operator use it through the session the way a person would, every page passes axe (no serious or critical
// violations), and any CSP violation, page error, console error or unexpected HTTP error fails the test.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ADMIN, ADMIN_API_KEY, ROOT, SCREENSHOTS, launchChromium, startService } from './harness.mjs'
import { AxeBuilder } from '@axe-core/playwright'

/** Committed, shown in README "Dashboard". */
const README_SCREENSHOT = join(ROOT, 'docs', 'dashboard-payments.png')

let server
let base
let browser
let receiver
/** Merchant A signs in; merchant B's payment must stay invisible to A. */
let merchantA
let merchantB
let paymentOfA
let paymentOfB

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

async function call (method, path, headers, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) }
}

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
  server = await startService({
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
  paymentOfA = await createPayment(merchantA, { amount: 25, currency: 'EUR', metadata: { order_id: 'order-1001' } })
  await createPayment(merchantA, { amount: 12.5, currency: 'EUR', metadata: { order_id: 'order-1002' } })
  // 2000-2999.99 is declined by the simulated gateway: the Overview then has all its outcomes to show.
  const declined = await call('POST', '/api/payments', { ...merchantA.auth, 'idempotency-key': crypto.randomUUID() }, { amount: 2500, currency: 'EUR' })
  assert.equal(declined.status, 402, JSON.stringify(declined.body))
  paymentOfB = await createPayment(merchantB, { amount: 40, currency: 'EUR' })
})

after(async () => {
  await browser?.close()
  receiver?.http.closeAllConnections()
  receiver?.http.close()
  await server?.stop()
})

/**
 * Records everything on the page that means "something was blocked or broke". `expected` lists the error
 * answers a test provokes on purpose ({ path: RegExp, status }); GET /dashboard/session → 401 before signing in
 * is always expected (it is how the page learns there is no session).
 */
async function watchForProblems (page, expected = []) {
  const allowed = [{ path: /^\/dashboard\/session$/, status: 401 }, ...expected]
  const problems = []
  const expectedStatuses = new Set()
  await page.exposeBinding('__reportCspViolation', (_source, violation) => {
    problems.push(`CSP violation: ${violation.directive} blocked ${violation.blockedURI || '(inline)'} at ${violation.sourceFile}:${violation.line}`)
  })
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      window.__reportCspViolation({ directive: event.effectiveDirective, blockedURI: event.blockedURI, sourceFile: event.sourceFile, line: event.lineNumber })
    })
  })
  page.on('console', (message) => {
    const text = message.text()
    // Chromium logs every error answer as "Failed to load resource"; the expected ones are accounted for below.
    const expectedLoadFailure = /Failed to load resource: the server responded with a status of (\d+)/.exec(text)
    if (expectedLoadFailure !== null && expectedStatuses.has(Number(expectedLoadFailure[1]))) return
    if (message.type() === 'error' || /Content Security Policy|Refused to/i.test(text)) problems.push(`console ${message.type()}: ${text}`)
  })
  page.on('pageerror', (error) => { problems.push(`page error: ${error.message}`) })
  page.on('requestfailed', (request) => { problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`) })
  page.on('response', (response) => {
    if (response.status() < 400) return
    const path = new URL(response.url()).pathname
    if (allowed.some((rule) => rule.path.test(path) && rule.status === response.status())) {
      expectedStatuses.add(response.status())
      return
    }
    problems.push(`HTTP ${response.status()} for ${response.url()}`)
  })
  return problems
}

/** axe-core on the page as it is now: no serious or critical violation. */
async function assertAccessible (page, name) {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze()
  const bad = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
  assert.deepEqual(bad.map((violation) => `${violation.id} (${violation.impact}): ${violation.help} — ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`), [],
    `${name}: axe found serious or critical violations`)
  assert.ok(results.passes.length > 0, `${name}: axe ran its checks`)
}

/** Runs `body` on a fresh page, then fails on any problem the page reported (as docs.browser.mjs does). */
async function onPage (expected, body) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const page = await context.newPage()
  const problems = await watchForProblems(page, expected)
  let failure
  try {
    await body(page, context)
    await page.waitForTimeout(250)
  } catch (err) {
    failure = err
  } finally {
    await context.close()
  }
  assert.deepEqual(problems, [], `the dashboard must work under its CSP without errors:\n${problems.join('\n')}` +
    (failure === undefined ? '' : `\n(then: ${failure.message})`))
  if (failure !== undefined) throw failure
}

/** Signs in through the form; resolves with the session the server answered (its CSRF token included). */
async function signIn (page, apiKey) {
  const response = await page.goto(`${base}/dashboard/`, { waitUntil: 'load' })
  assert.equal(response.status(), 200)
  assert.match(response.headers()['content-security-policy'] ?? '', /style-src 'self';/, 'served under the dashboard CSP')
  await page.getByRole('heading', { name: 'Sign in to the payments dashboard' }).waitFor()
  await page.getByLabel('API key').fill(apiKey)
  const answered = page.waitForResponse((r) => r.url().endsWith('/dashboard/session') && r.request().method() === 'POST')
  await page.getByRole('button', { name: 'Sign in' }).click()
  const answer = await answered
  assert.equal(answer.status(), 201)
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
  return answer.json()
}

async function openPage (page, hash, heading) {
  await page.goto(`${base}/dashboard/#${hash}`)
  await page.getByRole('heading', { level: 1, name: heading }).waitFor()
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
    mkdirSync(dirname(README_SCREENSHOT), { recursive: true })
    await page.screenshot({ path: README_SCREENSHOT })

    // Search by a metadata value: only the matching payment is listed.
    await page.getByLabel('Search').fill('order_id=order-1001')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/key=order_id/)
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
    await page.getByRole('button', { name: 'Add endpoint (all events)' }).click()
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
    assert.match(await failing.innerText(), /payment\.succeeded[\s\S]*pending[\s\S]*#1 .*HTTP 500 · \d+ ms/)
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

test('operator: merchants, suspend and reactivate, a merchant\'s pages; payments answer the admin key 403, shown plainly', async () => {
  await onPage([{ path: /^\/api\/payments$/, status: 403 }], async (page) => {
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

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payments' }).click()
    await page.getByRole('heading', { level: 1, name: 'Payments' }).waitFor()
    await page.getByRole('alert').filter({ hasText: 'Not allowed for this key' }).waitFor()
    assert.match(await page.getByRole('main').innerText(), /signed in with the admin key/)
    await assertAccessible(page, 'payments (operator)')
    mkdirSync(SCREENSHOTS, { recursive: true })
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-operator-payments.png'), fullPage: true })
  })
})
