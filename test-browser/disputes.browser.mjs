// Disputes in the dashboard (issues 40 and 44), in a real Chromium against the built server (npm run test:browser):
// the Disputes page (urgent evidence due dates marked in words, the status filter in the URL, the empty state) and a
// payment's disputes with its amount disputed and the Accept action. Every page passes axe; any CSP violation, page
// error, console error or unexpected HTTP error fails the test.
//
// How the disputes get there: the browser harness has no PSP to open a dispute at, so the service runs on a SQLite
// file and this test writes the dispute rows (and the payments' amount disputed, as the service's dispute store does)
// straight into it with better-sqlite3, after the payments were made through the simulated gateway. The disputes
// belong to a Stripe connector account of the merchant whose STRIPE_API_URL is a small stand-in below (it answers the
// credentials check and `POST /v1/disputes/{id}/close`), so Accept really goes through the service to "Stripe".
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import * as harness from './harness.mjs'
import { ADMIN, apiClient, assertAccessible, closeHttp, launchChromium, startService } from './harness.mjs'

const DAY = 86_400_000

let server
let base
let browser
let stripe
let dataDir
/** Merchant with disputes on four of its payments; `quiet` has none. */
let shop
let quiet
let connectorId
const payments = {}
const disputes = {}

/** Stripe's API as far as this test needs it: the credentials check and closing a dispute (which Stripe records as lost). */
async function startStripeStandIn () {
  const closed = []
  const http = createServer((req, res) => {
    // The body (form-encoded) says nothing this stand-in needs: read to its end, then answered.
    req.resume().on('end', () => {
      const answer = (status, json) => { res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${closed.length}` }).end(JSON.stringify(json)) }
      const close = /^\/v1\/disputes\/([^/]+)\/close$/.exec(req.url ?? '')
      if (req.method === 'GET' && req.url === '/v1/balance') return answer(200, { object: 'balance', available: [], pending: [], livemode: false })
      if (req.method === 'POST' && close !== null) {
        closed.push({ id: close[1], idempotencyKey: req.headers['idempotency-key'] })
        return answer(200, { id: close[1], object: 'dispute', status: 'lost', livemode: false })
      }
      answer(404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${req.url}).` } })
    })
  })
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve))
  return { http, closed, url: `http://127.0.0.1:${http.address().port}` }
}

const call = apiClient(() => base)

async function merchant (name) {
  const created = await call('POST', '/merchants', ADMIN, { name, email: `${name.toLowerCase().replace(/\W/g, '-')}@example.com` })
  assert.equal(created.status, 201)
  const key = await call('POST', `/merchants/${created.body.id}/api-keys`, ADMIN, { name: 'dashboard' })
  assert.equal(key.status, 201)
  return { id: created.body.id, name, secret: key.body.secret, auth: { authorization: `Bearer ${key.body.secret}` } }
}

async function createPayment (owner, body) {
  const created = await call('POST', '/api/payments', { ...owner.auth, 'idempotency-key': crypto.randomUUID() }, body)
  assert.equal(created.status, 201, JSON.stringify(created.body))
  assert.equal(created.body.status, 'succeeded')
  return created.body
}

/**
 * Records disputes the way the service's dispute store does (src/store/sqlite/disputes.ts): the dispute rows, and on
 * each payment `amount_disputed_minor` (withdrawn, not reinstated) and `dispute_open` (a dispute that is not won).
 * Amounts here are whole currency units of 2-decimal currencies.
 */
function recordDisputes (rows) {
  const db = new Database(join(dataDir, 'service.db'))
  db.pragma('busy_timeout = 5000')
  const insert = db.prepare(`INSERT INTO disputes (id, merchant_id, payment_id, amount_minor, currency, reason, status, funds_withdrawn, evidence_due_by,
      connector_id, connector_type, connector_reference, stage, funds_stage, created_at, updated_at)
    VALUES (@id, @merchantId, @paymentId, @amountMinor, @currency, @reason, @status, @fundsWithdrawn, @evidenceDueBy,
      @connectorId, 'stripe', @connectorReference, @stage, @fundsStage, @createdAt, @createdAt)`)
  const savePayment = db.prepare('UPDATE payments SET amount_disputed_minor = @disputed, dispute_open = @open WHERE id = @id')
  const stages = { needs_response: 1, under_review: 2, won: 3, lost: 3 }
  db.transaction(() => {
    rows.forEach((row, index) => {
      const fundsWithdrawn = row.status !== 'won'
      insert.run({
        id: row.id,
        merchantId: shop.id,
        paymentId: row.payment.id,
        amountMinor: Math.round(row.payment.amount * 100),
        currency: row.payment.currency,
        reason: row.reason,
        status: row.status,
        fundsWithdrawn: fundsWithdrawn ? 1 : 0,
        evidenceDueBy: row.evidenceDueBy ?? null,
        connectorId,
        connectorReference: `dp_browser_${index}`,
        stage: stages[row.status],
        // Stripe's order of money movements: 1 withdrawn, 2 reinstated (a won dispute).
        fundsStage: fundsWithdrawn ? 1 : 2,
        // Older first in `rows`: the list shows the last one first.
        createdAt: new Date(Date.now() - (rows.length - index) * 60_000).toISOString()
      })
      savePayment.run({ id: row.payment.id, disputed: fundsWithdrawn ? Math.round(row.payment.amount * 100) : 0, open: row.status === 'won' ? 0 : 1 })
    })
  })()
  db.close()
}

before(async () => {
  stripe = await startStripeStandIn()
  dataDir = mkdtempSync(join(tmpdir(), 'disputes-browser-'))
  server = await startService({ DATABASE_URL: `file:${join(dataDir, 'service.db')}`, STRIPE_API_URL: stripe.url })
  base = server.url
  browser = await launchChromium()

  shop = await merchant('Dispute Shop')
  quiet = await merchant('Quiet Shop')
  // Made through the simulated gateway (the instance default): the merchant has no connector account yet.
  payments.soon = await createPayment(shop, { amount: 120, currency: 'USD', metadata: { order_id: 'soon' } })
  payments.later = await createPayment(shop, { amount: 45, currency: 'USD', metadata: { order_id: 'later' } })
  payments.review = await createPayment(shop, { amount: 30, currency: 'USD', metadata: { order_id: 'review' } })
  payments.won = await createPayment(shop, { amount: 80, currency: 'USD', metadata: { order_id: 'won' } })
  payments.overdue = await createPayment(shop, { amount: 60, currency: 'EUR', metadata: { order_id: 'overdue' } })
  payments.clean = await createPayment(shop, { amount: 15, currency: 'USD', metadata: { order_id: 'clean' } })

  // The Stripe account the disputes are reported on; its credentials check goes to the stand-in.
  const connector = await call('POST', `/merchants/${shop.id}/connectors`, { ...ADMIN, 'idempotency-key': crypto.randomUUID() },
    { type: 'stripe', credentials: { secretKey: 'sk_test_browserDisputesStandIn0000' }, description: 'Stripe (stand-in)' })
  assert.equal(connector.status, 201, JSON.stringify(connector.body))
  connectorId = connector.body.id

  const now = Date.now()
  for (const name of ['soon', 'later', 'review', 'won', 'overdue']) disputes[name] = crypto.randomUUID()
  recordDisputes([
    { id: disputes.won, payment: payments.won, reason: 'duplicate', status: 'won' },
    // Under review within 2 days: already answered, nothing to mark.
    { id: disputes.review, payment: payments.review, reason: 'product_not_received', status: 'under_review', evidenceDueBy: new Date(now + 2 * DAY).toISOString() },
    { id: disputes.later, payment: payments.later, reason: 'subscription_canceled', status: 'needs_response', evidenceDueBy: new Date(now + 20 * DAY).toISOString() },
    { id: disputes.overdue, payment: payments.overdue, reason: 'general', status: 'needs_response', evidenceDueBy: new Date(now - DAY).toISOString() },
    // Three days and an hour away: "due in 3 days" for as long as this test runs.
    { id: disputes.soon, payment: payments.soon, reason: 'fraudulent', status: 'needs_response', evidenceDueBy: new Date(now + 3 * DAY + 3_600_000).toISOString() }
  ])
  const listed = await call('GET', '/api/disputes', shop.auth)
  assert.deepEqual(listed.body.data.map((dispute) => dispute.id), [disputes.soon, disputes.overdue, disputes.later, disputes.review, disputes.won],
    'the API lists the recorded disputes, newest first')
})

after(async () => {
  await browser?.close()
  await server?.stop()
  closeHttp(stripe?.http)
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
})

/** Runs `body` on a fresh page, then fails on anything refused, blocked or broken: no answer of 400 or more is expected here. */
async function onPage (body) {
  await harness.onPage(browser, body)
}

async function signIn (page, apiKey) {
  await harness.signIn(page, base, apiKey)
}

async function openPage (page, hash, heading) {
  await harness.openPage(page, base, hash, heading)
}

/** The list's rows once `count` rows are shown (an earlier answer may still be on screen right after navigating). */
async function rowsOf (page, testId, count) {
  await page.waitForFunction(([id, n]) => document.querySelectorAll(`[data-testid="${id}"] tbody tr`).length === n, [testId, count], { timeout: 5000 }).catch(() => {})
  return page.getByTestId(testId).locator('tbody tr')
}

test('disputes page: every dispute with its payment, the urgent evidence due dates marked in words, axe clean', async () => {
  await onPage(async (page) => {
    await signIn(page, shop.secret)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Disputes' }).click()
    await page.getByRole('heading', { level: 1, name: 'Disputes' }).waitFor()
    const rows = await rowsOf(page, 'dispute-list', 5)
    assert.equal(await rows.count(), 5)
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.dispute)),
      [disputes.soon, disputes.overdue, disputes.later, disputes.review, disputes.won], 'newest first')
    const headers = await page.getByTestId('dispute-list').locator('thead th').allInnerTexts()
    assert.deepEqual(headers, ['Created', 'Payment', 'Amount', 'Reason', 'Status', 'Funds withdrawn', 'Evidence due by'])

    const row = (name) => page.locator(`tr[data-dispute="${disputes[name]}"]`)
    const soon = await row('soon').locator('td').allInnerTexts()
    assert.equal(soon[1], payments.soon.id)
    assert.equal(soon[2], '$120.00')
    assert.equal(soon[3], 'fraudulent')
    assert.equal(soon[4], 'needs response')
    assert.equal(soon[5], 'Yes: $120.00 held back')
    assert.match(soon[6], /^⚠ Respond soon: due in 3 days\n.+ UTC$/, 'due within 7 days: a warning in words, with the date')
    assert.match((await row('overdue').locator('td').allInnerTexts())[6], /^⚠ Overdue: the time to respond has passed\n/)
    // Only the disputes that still need a response and are due within 7 days (or overdue) are marked.
    assert.equal(await page.getByTestId('due-urgent').count(), 2)
    for (const name of ['later', 'review', 'won']) assert.equal(await row(name).getByTestId('due-urgent').count(), 0, `${name}: not marked`)
    assert.doesNotMatch(await row('later').innerText(), /Respond soon|Overdue/)
    assert.doesNotMatch(await row('review').innerText(), /Respond soon|Overdue/, 'under review: already answered')
    const won = await row('won').locator('td').allInnerTexts()
    assert.deepEqual(won.slice(2), ['$80.00', 'duplicate', 'won', 'No', '—'])
    // The warning is not colour alone, and its colours are readable (axe checks contrast).
    const style = await row('soon').getByTestId('due-urgent').evaluate((element) => element.ownerDocument.defaultView.getComputedStyle(element).borderLeftWidth)
    assert.equal(style, '4px')
    await assertAccessible(page, 'disputes')

    await row('soon').getByRole('link', { name: payments.soon.id }).click()
    await page.getByRole('heading', { level: 1, name: /Payment/ }).waitFor()
    assert.ok(page.url().endsWith(`#/payments/${payments.soon.id}`))
  })
})

test('disputes page: the status filter lives in the URL, its <select> shows it, and an empty result says so', async () => {
  await onPage(async (page) => {
    await signIn(page, shop.secret)
    await openPage(page, '/disputes?status=needs_response', 'Disputes')
    const status = page.getByLabel('Status')
    assert.equal(await status.inputValue(), 'needs_response', 'the select shows the URL\'s filter')
    let rows = await rowsOf(page, 'dispute-list', 3)
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.dispute)), [disputes.soon, disputes.overdue, disputes.later])

    await status.selectOption('won')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/#\/disputes\?status=won$/)
    rows = await rowsOf(page, 'dispute-list', 1)
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.dispute)), [disputes.won])
    assert.equal(await page.getByLabel('Status').inputValue(), 'won')

    await openPage(page, '/disputes?status=lost', 'Disputes')
    await page.getByTestId('no-disputes').getByText('No disputes match.').waitFor()
    assert.equal(await page.getByTestId('dispute-list').count(), 0)
    assert.equal(await page.getByLabel('Status').inputValue(), 'lost')

    // Back: the page renders the previous URL's filter again.
    await page.goBack()
    await page.waitForURL(/status=won$/)
    await rowsOf(page, 'dispute-list', 1)
    assert.equal(await page.getByLabel('Status').inputValue(), 'won')
  })
})

test('disputes page: a merchant without disputes sees the empty state', async () => {
  await onPage(async (page) => {
    await signIn(page, quiet.secret)
    await openPage(page, '/disputes', 'Disputes')
    await page.getByTestId('no-disputes').getByText(/^No disputes\. When a cardholder disputes/).waitFor()
    await assertAccessible(page, 'disputes, empty')
  })
})

test('payment page: its disputes and amount disputed; Accept only for open ones, confirmed, conceded at the PSP', async () => {
  await onPage(async (page) => {
    await signIn(page, shop.secret)

    // Won: nothing disputed any more (funds reinstated), no Accept.
    await openPage(page, `/payments/${payments.won.id}`, /Payment/)
    await (await rowsOf(page, 'payment-disputes', 1)).first().waitFor()
    assert.equal(await page.getByTestId('amount-disputed').innerText(), '$0.00')
    assert.match(await page.getByTestId('payment-disputes').innerText(), /\$80\.00[\s\S]*duplicate[\s\S]*won[\s\S]*closed/)
    assert.equal(await page.getByRole('button', { name: 'Accept dispute' }).count(), 0, 'a won dispute cannot be accepted')
    assert.equal(await page.getByRole('button', { name: 'Refund' }).count(), 1, 'a won dispute leaves the payment refundable')
    assert.equal(await page.getByTestId('refund-disputed').count(), 0)

    // A payment without disputes: no amount disputed, an empty section.
    await openPage(page, `/payments/${payments.clean.id}`, /Payment/)
    await page.getByRole('region', { name: 'Disputes' }).getByText('No disputes.').waitFor()
    assert.equal(await page.getByTestId('amount-disputed').count(), 0)

    // Under review: Accept is offered, the due date is not marked.
    await openPage(page, `/payments/${payments.review.id}`, /Payment/)
    await (await rowsOf(page, 'payment-disputes', 1)).first().waitFor()
    assert.equal(await page.getByRole('button', { name: 'Accept dispute' }).count(), 1)
    assert.equal(await page.getByTestId('due-urgent').count(), 0)
    // The API refuses a refund while a dispute is not won (409 payment-disputed): the page does not offer one, and says why.
    await page.getByTestId('refund-disputed').getByText(/^No refund while a dispute of this payment is not won/).waitFor()
    assert.equal(await page.getByRole('button', { name: 'Refund' }).count(), 0)

    // Needs a response within 3 days: marked, Accept offered.
    await openPage(page, `/payments/${payments.soon.id}`, /Payment/)
    const row = (await rowsOf(page, 'payment-disputes', 1)).first()
    assert.equal(await page.getByTestId('amount-disputed').innerText(), '$120.00')
    assert.match(await row.innerText(), /\$120\.00[\s\S]*fraudulent[\s\S]*needs response[\s\S]*Respond soon: due in 3 days/)
    await page.getByTestId('refund-disputed').waitFor()
    await assertAccessible(page, 'payment with a dispute')

    await row.getByRole('button', { name: 'Accept dispute' }).click()
    const dialog = page.getByRole('dialog', { name: 'Accept dispute?' })
    await dialog.waitFor()
    const said = await dialog.innerText()
    assert.match(said, /Concede this dispute at the PSP \(stripe\): the cardholder keeps the disputed \$120\.00, and the money is not returned to you \(the PSP has already taken it back\)\./)
    assert.match(said, /You can no longer send evidence for it/)
    await assertAccessible(page, 'accept confirmation')
    // Cancel does nothing.
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    // Gone before the row's button is looked up again (the dialog is rendered inside the row and has a button of that name).
    await dialog.waitFor({ state: 'hidden' })
    assert.equal(stripe.closed.length, 0)

    await row.getByRole('button', { name: 'Accept dispute' }).click()
    const answered = page.waitForResponse((r) => r.url().endsWith(`/api/disputes/${disputes.soon}/accept`))
    await dialog.getByRole('button', { name: 'Accept dispute' }).click()
    const answer = await answered
    assert.equal(answer.status(), 200)
    assert.match(answer.request().headers()['idempotency-key'] ?? '', /^[0-9a-f-]{36}$/, 'sent under an Idempotency-Key')
    await page.getByRole('status').filter({ hasText: `Dispute ${disputes.soon} accepted: it is conceded at the PSP and $120.00 is not returned.` }).waitFor()
    await page.getByTestId('payment-disputes').getByText('accepted', { exact: true }).waitFor()
    assert.equal(await page.getByRole('button', { name: 'Accept dispute' }).count(), 0, 'an accepted dispute offers no Accept')
    assert.equal(await page.getByTestId('due-urgent').count(), 0, 'nothing left to respond to')
    assert.deepEqual(stripe.closed, [{ id: 'dp_browser_4', idempotencyKey: `dispute-${disputes.soon}:accept` }], 'closed at Stripe once')
    await assertAccessible(page, 'payment after accepting')

    const stored = await call('GET', `/api/disputes/${disputes.soon}`, shop.auth)
    assert.equal(stored.body.status, 'accepted')
    assert.equal((await call('GET', `/api/payments/${payments.soon.id}`, shop.auth)).body.amountDisputed, 120, 'the money stays taken back')
  })
})
