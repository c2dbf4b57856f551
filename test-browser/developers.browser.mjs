// Issue 44's connector and webhook items, in a real Chromium against the built server (npm run test:browser): on the
// Developers page a merchant disables and enables a connector account, edits its priority (the API's refusal shown in
// the row), and deletes one behind a confirmation that says what happens, with the failover rule beside the list; on
// the Webhooks page "Send test event" sends a signed webhook_endpoint.test to a real local receiver and shows its answer,
// a success and a failure. Every page passes axe; any answer of 400 or more other than the one a test provokes, CSP
// violation, page error or console error fails the test.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { Webhook } from 'standardwebhooks'
import * as harness from './harness.mjs'
import { ADMIN, apiClient, assertAccessible, closeHttp, launchChromium, startService } from './harness.mjs'

let server
let base
let browser
let receiver
/** A merchant with two simulated connector accounts (Primary, priority 0; Backup, priority 5) and two webhook endpoints. */
let shop
const connectors = {}
const endpoints = {}

/** A webhook receiver on loopback: /ok answers 200 "ok", /down 500 "receiver down"; it keeps what it received. */
async function startReceiver () {
  const received = []
  const http = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (chunk) => { body += chunk }).on('end', () => {
      received.push({ path: req.url, headers: req.headers, body })
      if (req.url === '/ok') res.writeHead(200).end('ok')
      else res.writeHead(500).end('receiver down')
    })
  })
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve))
  return { http, received, url: (path) => `http://127.0.0.1:${http.address().port}${path}` }
}

const call = apiClient(() => base)

before(async () => {
  server = await startService({
    // The receiver is plain http on loopback; a failed delivery would wait an hour (tests are never retried anyway).
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_DELAYS: '1h',
    WEBHOOK_POLL_INTERVAL_MS: '200'
  })
  base = server.url
  receiver = await startReceiver()
  browser = await launchChromium()
  const created = await call('POST', '/merchants', { ...ADMIN, 'idempotency-key': crypto.randomUUID() }, { name: 'Routing Shop', email: 'owner@routing-shop.example' })
  assert.equal(created.status, 201)
  const key = await call('POST', `/merchants/${created.body.id}/api-keys`, ADMIN, { name: 'checkout' })
  assert.equal(key.status, 201)
  shop = { id: created.body.id, secret: key.body.secret, auth: { authorization: `Bearer ${key.body.secret}` } }
  for (const [name, priority] of [['Primary', 0], ['Backup', 5]]) {
    const connector = await call('POST', `/merchants/${shop.id}/connectors`, { ...shop.auth, 'idempotency-key': crypto.randomUUID() },
      { type: 'simulated', priority, description: name })
    assert.equal(connector.status, 201, JSON.stringify(connector.body))
    connectors[name] = connector.body
  }
  for (const [name, path] of [['orders', '/ok'], ['broken receiver', '/down']]) {
    const endpoint = await call('POST', `/merchants/${shop.id}/webhook-endpoints`, shop.auth, { url: receiver.url(path), description: name, enabledEvents: ['refund.succeeded'] })
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body))
    endpoints[name] = endpoint.body
  }
})

after(async () => {
  await browser?.close()
  closeHttp(receiver?.http)
  await server?.stop()
})

/**
 * Runs `body` on a fresh page, then fails on anything refused, blocked or broken. `expected` lists the error answers a
 * test provokes on purpose ({ path: RegExp, status }); Chromium's console line for each of those is expected too.
 */
async function onPage (expected, body) {
  await harness.onPage(browser, body, { expected })
}

async function signIn (page) {
  await harness.signIn(page, base, shop.secret)
}

async function openPage (page, hash, heading) {
  await harness.openPage(page, base, hash, heading)
}

/** The connector table's row of the account described `name`. */
function connectorRow (page, name) {
  return page.getByTestId('connectors').getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) })
}

async function connectorOf (name) {
  return await call('GET', `/merchants/${shop.id}/connectors/${connectors[name].id}`, shop.auth)
}

test('Developers: the failover rule stands beside the list; a connector account is disabled and enabled again, each after a confirmation', async () => {
  await onPage([], async (page) => {
    await signIn(page)
    await openPage(page, '/developers', 'Developers')
    const rule = page.getByTestId('failover-rule')
    await rule.waitFor()
    const text = await rule.innerText()
    assert.match(text, /lowest priority/)
    assert.match(text, /only after an attempt that certainly charged\s+nothing/)
    assert.match(text, /outcome is unknown.*pinned to that account/s)
    const row = connectorRow(page, 'Primary')
    assert.equal(await row.getByTestId('connector-status').innerText(), 'enabled')
    await assertAccessible(page, 'developers, connectors')

    await row.getByRole('button', { name: 'Disable Primary' }).click()
    const dialog = page.getByRole('dialog', { name: 'Disable Primary?' })
    await dialog.waitFor()
    assert.match(await dialog.innerText(), /no longer routed to this account.*keep settling, refunding and capturing/s)
    await assertAccessible(page, 'developers, disable dialog')
    await dialog.getByRole('button', { name: 'Disable Primary' }).click()
    await row.getByRole('status').filter({ hasText: 'Primary is now disabled.' }).waitFor()
    await row.getByTestId('connector-status').getByText('disabled').waitFor()
    assert.equal((await connectorOf('Primary')).body.status, 'disabled')

    await row.getByRole('button', { name: 'Enable Primary' }).click()
    await page.getByRole('dialog', { name: 'Enable Primary?' }).getByRole('button', { name: 'Enable Primary' }).click()
    await row.getByTestId('connector-status').getByText('enabled').waitFor()
    assert.equal((await connectorOf('Primary')).body.status, 'enabled')
  })
})

test('Developers: a priority is saved with PATCH; the API\'s refusal of 1001 is shown in the row and nothing changes', async () => {
  await onPage([{ path: new RegExp(`^/merchants/${shop.id}/connectors/${connectors.Backup.id}$`), status: 400 }], async (page) => {
    await signIn(page)
    await openPage(page, '/developers', 'Developers')
    const row = connectorRow(page, 'Backup')
    const priority = row.getByLabel('Priority of Backup')
    assert.equal(await priority.inputValue(), '5')
    const save = row.getByRole('button', { name: 'Save the priority of Backup' })
    assert.equal(await save.isDisabled(), true, 'nothing to save yet')

    await priority.fill('1001')
    await save.click()
    const refused = row.getByRole('alert')
    await refused.waitFor()
    assert.match(await refused.innerText(), /refused the request as sent.*priority.*\(HTTP 400\)/s)
    assert.equal((await connectorOf('Backup')).body.priority, 5, 'nothing changed')
    await assertAccessible(page, 'developers, priority refused')

    await priority.fill('')
    await save.click()
    await row.getByRole('alert').filter({ hasText: 'Enter a priority' }).waitFor()

    await priority.fill('3')
    await save.click()
    await row.getByRole('status').filter({ hasText: 'Priority of Backup is now 3.' }).waitFor()
    assert.equal((await connectorOf('Backup')).body.priority, 3)
    assert.equal(await priority.inputValue(), '3')
    await page.reload()
    assert.equal(await connectorRow(page, 'Backup').getByLabel('Priority of Backup').inputValue(), '3', 'the list shows the stored priority')
  })
})

test('Developers: Delete asks first, saying what happens; Cancel keeps the account, Delete removes it (404 from then on)', async () => {
  await onPage([], async (page) => {
    await signIn(page)
    await openPage(page, '/developers', 'Developers')
    const row = connectorRow(page, 'Backup')
    await row.getByRole('button', { name: 'Delete Backup' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete Backup?' })
    await dialog.waitFor()
    const says = await dialog.innerText()
    assert.match(says, /no new payment is routed to it/)
    assert.match(says, /payments already made through it keep settling, refunding and capturing there/)
    assert.match(says, /cannot be undone/)
    await assertAccessible(page, 'developers, delete dialog')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })
    assert.equal((await connectorOf('Backup')).status, 200, 'Cancel deletes nothing')

    await row.getByRole('button', { name: 'Delete Backup' }).click()
    await dialog.getByRole('button', { name: 'Delete Backup' }).click()
    await page.getByRole('status').filter({ hasText: 'Deleted the simulated account Backup.' }).waitFor()
    await row.waitFor({ state: 'detached' })
    await connectorRow(page, 'Primary').waitFor()
    assert.equal((await connectorOf('Backup')).status, 404)
    await assertAccessible(page, 'developers, after a delete')
  })
})

test('Webhooks: Send test event delivers a signed webhook_endpoint.test and shows the receiver\'s answer, a 200 and a 500', async () => {
  await onPage([], async (page) => {
    await signIn(page)
    await openPage(page, '/webhooks', 'Webhooks')

    const orders = page.getByRole('region', { name: 'orders' })
    await orders.getByRole('button', { name: 'Send test event' }).click()
    await orders.getByRole('status').filter({ hasText: /^Test event delivered: HTTP 200 in \d+ ms, answering “ok”\.$/ }).waitFor()
    const delivered = orders.getByTestId('deliveries').getByRole('row').filter({ hasText: 'webhook_endpoint.test' })
    await delivered.getByText('succeeded').waitFor()
    const sent = receiver.received.filter((request) => request.path === '/ok')
    assert.equal(sent.length, 1, 'one request, although the endpoint wants refund.succeeded only')
    const [request] = sent
    const body = new Webhook(endpoints.orders.secret).verify(request.body, {
      'webhook-id': request.headers['webhook-id'], 'webhook-timestamp': request.headers['webhook-timestamp'], 'webhook-signature': request.headers['webhook-signature']
    })
    assert.equal(body.type, 'webhook_endpoint.test')
    assert.equal(body.data.id, endpoints.orders.id)
    // The delivery view shows what was sent: the event, loaded on demand.
    await delivered.getByText('Payload').click()
    await delivered.locator('pre').getByText(/"type": "webhook_endpoint.test"/).waitFor()
    await assertAccessible(page, 'webhooks, test event delivered')

    const broken = page.getByRole('region', { name: 'broken receiver' })
    await broken.getByRole('button', { name: 'Send test event' }).click()
    await broken.getByRole('alert').filter({ hasText: /^Test event not delivered: HTTP 500 in \d+ ms, answering “receiver down”\. It is not retried/ }).waitFor()
    const failed = broken.getByTestId('deliveries').getByRole('row').filter({ hasText: 'webhook_endpoint.test' })
    await failed.getByText('failed', { exact: true }).waitFor()
    await failed.getByText(/HTTP 500/).waitFor()
    assert.equal(receiver.received.filter((request) => request.path === '/down').length, 1)
    await assertAccessible(page, 'webhooks, test event failed')
  })
})

// Issue 44 "Connectors: per-connector success rate and latency": payments made through the Primary account show up in the
// Developers page's statistics table with their rate, over the range the page's URL names (the Overview's from/to).
test('Developers: connector statistics show the payments made through an account, its success rate and latency, over the chosen range', async () => {
  const pay = async (amount) => await call('POST', '/api/payments', { ...shop.auth, 'idempotency-key': crypto.randomUUID() }, { amount, currency: 'USD' })
  const paid = await pay(10)
  assert.equal(paid.status, 201, JSON.stringify(paid.body))
  assert.equal(paid.body.status, 'succeeded')
  const declined = await pay(2000)
  assert.equal(declined.status, 402, 'the simulated bank declines 2000')
  const api = await call('GET', `/merchants/${shop.id}/connectors/stats`, shop.auth)
  assert.equal(api.status, 200)
  const primary = api.body.data.find((entry) => entry.id === connectors.Primary.id)
  assert.deepEqual({ attempts: primary.attempts, succeeded: primary.succeeded, declined: primary.declined, successRate: primary.successRate },
    { attempts: 2, succeeded: 1, declined: 1, successRate: 0.5 }, 'both calls went to Primary (priority 0)')
  assert.equal(typeof primary.latency.p50Ms, 'number')

  await onPage([], async (page) => {
    await signIn(page)
    await openPage(page, '/developers', 'Developers')
    const table = page.getByTestId('connector-stats')
    await table.waitFor()
    const today = new Date().toISOString().slice(0, 10)
    assert.match(await table.locator('caption').innerText(), new RegExp(`to ${today}`), 'the range is said: the last 30 days by default')
    const headers = await table.getByRole('columnheader').allInnerTexts()
    assert.deepEqual(headers.slice(0, 2), ['Connector', 'Calls'])
    assert.ok(headers.includes('Success rate') && headers.includes('Latency p50') && headers.includes('Latency p95'))
    const row = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Primary', exact: true }) })
    assert.equal(await row.getByRole('cell').first().innerText(), '2', 'two calls')
    assert.equal(await row.getByTestId('success-rate').innerText(), '50.0 %')
    assert.match(await row.getByTestId('latency-p50').innerText(), /^\d+ ms$/)
    assert.match(await row.getByTestId('latency-p95').innerText(), /^\d+ ms$/)
    await assertAccessible(page, 'developers, connector statistics')

    // The range control: a month without calls shows the account with no rate and no latency. Its answer is made to
    // arrive late: meanwhile the last 30 days' numbers must not show under the new range's caption.
    await page.route((url) => url.pathname.endsWith('/connectors/stats'), async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 700))
      await route.continue()
    })
    await page.getByLabel('From (UTC day)').fill('2020-01-01')
    await page.getByLabel('To (UTC day)').fill('2020-01-31')
    await page.getByRole('button', { name: 'Show' }).click()
    await table.locator('caption').getByText('from 2020-01-01 to 2020-01-31').waitFor()
    assert.equal(await row.getByRole('cell').first().innerText(), '0')
    assert.equal(await row.getByTestId('success-rate').innerText(), '—')
    assert.equal(await row.getByTestId('latency-p50').innerText(), '—')
    assert.match(page.url(), /from=2020-01-01&to=2020-01-31/, 'the range is in the URL, as on the Overview')
  })
})
