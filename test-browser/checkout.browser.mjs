// A shopper at a merchant's checkout, in a real Chromium against the built server (npm run test:browser), issue 37:
// a tiny merchant site (its own origin on loopback) creates a customer-present payment server side with its API key,
// sends the browser to nextAction.url, the simulated bank's page; the shopper chooses, the bank sends the browser back
// through the service's return address (/checkout/return/{token}) to the merchant's returnUrl with paymentId and
// status. The API then says the same, with one settling event. Any CSP violation (form-action included: the bank's
// form ends on another origin), page error, console error, failed request or HTTP error on the way fails the test.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import * as harness from './harness.mjs'
import { ADMIN, SCREENSHOTS, apiClient, assertAccessible, closeHttp, launchChromium, startServiceWithPublicUrl } from './harness.mjs'
import { SIMULATED_ACTION_AMOUNT } from '../dist/src/gateway/simulated/gateway.js'

let server
let base
let browser
let merchant
let shop

const call = apiClient(() => base)

function escapeHtml (value) {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

function html (res, status, title, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers })
  res.end(`<!doctype html><html lang="en"><meta charset="utf-8"><title>${escapeHtml(title)}</title><body><main>${body}</main></body></html>`)
}

async function formOf (req) {
  let body = ''
  for await (const chunk of req.setEncoding('utf8')) body += chunk
  return new URLSearchParams(body)
}

/**
 * The merchant's site, as a shop would write it: its checkout page posts to its own server, which creates the payment
 * with the merchant's secret key (never in the browser) and answers with a redirect to `nextAction.url`; its return
 * page reads the payment back from the API (the query's `status` is only a hint) before saying anything.
 */
async function startShop (apiKey) {
  const auth = { authorization: `Bearer ${apiKey}` }
  const created = new Map()
  const returns = []
  const site = createServer((req, res) => {
    const url = new URL(req.url, shop.url)
    const handle = async () => {
      if (req.method === 'GET' && url.pathname === '/checkout') {
        const order = url.searchParams.get('order') ?? ''
        return html(res, 200, `Order ${order}`, `<h1>Order ${escapeHtml(order)}</h1>` +
          `<form method="post" action="/pay"><input type="hidden" name="order" value="${escapeHtml(order)}"><button id="pay">Pay €6,001.00</button></form>`)
      }
      if (req.method === 'POST' && url.pathname === '/pay') {
        const order = (await formOf(req)).get('order') ?? ''
        const answer = await call('POST', '/api/payments', { ...auth, 'idempotency-key': `order-${order}` }, {
          amount: SIMULATED_ACTION_AMOUNT,
          currency: 'EUR',
          returnUrl: `${shop.url}/return?order=${encodeURIComponent(order)}`,
          metadata: { order_id: order }
        })
        if (answer.status !== 201) return html(res, 502, 'Payment refused', `<h1>Payment refused</h1><pre>${escapeHtml(JSON.stringify(answer.body))}</pre>`)
        const payment = answer.body
        created.set(order, payment)
        if (payment.status !== 'requires_action') return html(res, 200, 'Paid', `<h1>Payment ${escapeHtml(payment.status)}</h1>`)
        const action = payment.nextAction
        if (action.method === 'GET') return html(res, 303, 'Redirecting', '', { location: action.url })
        const fields = Object.entries(action.data ?? {}).map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`).join('')
        return html(res, 200, 'Continue to your bank', `<form method="post" action="${escapeHtml(action.url)}">${fields}<button>Continue to your bank</button></form>`)
      }
      if (req.method === 'GET' && url.pathname === '/return') {
        const paymentId = url.searchParams.get('paymentId') ?? ''
        const read = await call('GET', `/api/payments/${encodeURIComponent(paymentId)}`, auth)
        returns.push({ query: Object.fromEntries(url.searchParams), verified: read.body?.status })
        return html(res, 200, 'Thank you', `<h1>Order ${escapeHtml(url.searchParams.get('order') ?? '')}</h1>` +
          `<p id="outcome">Payment ${escapeHtml(paymentId)}: ${escapeHtml(read.status === 200 ? read.body.status : `unknown (HTTP ${read.status})`)}</p>`)
      }
      if (url.pathname === '/favicon.ico') { res.writeHead(204).end(); return }
      html(res, 404, 'Not found', '<h1>Not found</h1>')
    }
    handle().catch((err) => { if (!res.headersSent) html(res, 500, 'Error', `<pre>${escapeHtml(err.stack)}</pre>`) })
  })
  await new Promise((resolve) => site.listen(0, '127.0.0.1', resolve))
  return { site, created, returns, url: `http://127.0.0.1:${site.address().port}` }
}

before(async () => {
  // PUBLIC_BASE_URL is the service's own loopback URL: the simulated bank sends the shopper back there.
  server = await startServiceWithPublicUrl()
  base = server.url
  browser = await launchChromium()
  const created = await call('POST', '/merchants', ADMIN, { name: 'Corner Shop', email: 'owner@corner-shop.example' })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const key = await call('POST', `/merchants/${created.body.id}/api-keys`, ADMIN, { name: 'checkout' })
  assert.equal(key.status, 201, JSON.stringify(key.body))
  merchant = { id: created.body.id, auth: { authorization: `Bearer ${key.body.secret}` } }
  shop = await startShop(key.body.secret)
})

after(async () => {
  await browser?.close()
  closeHttp(shop?.site)
  await server?.stop()
})

/** Runs `body` on a fresh page, then fails on any problem the pages of the walk reported (the shop's, the bank's, the service's). */
async function onPage (body) {
  await harness.onPage(browser, body, { viewport: { width: 1024, height: 768 } })
}

/** The requests of one navigation, first to last, following its redirects back from the last one. */
function redirectChain (request) {
  const chain = []
  for (let at = request; at !== null; at = at.redirectedFrom()) chain.unshift(at)
  return chain
}

/** The merchant's checkout → Pay → the simulated bank's page, checked. Resolves with the payment the shop created. */
async function toTheBank (page, order) {
  await page.goto(`${shop.url}/checkout?order=${order}`)
  const toBank = page.waitForResponse((response) => response.url().startsWith(`${base}/checkout/simulated-bank`))
  await page.getByRole('button', { name: 'Pay €6,001.00' }).click()
  const bank = await toBank
  assert.equal(bank.status(), 200)
  const [shopPost, bankGet] = redirectChain(bank.request())
  assert.deepEqual([shopPost.method(), new URL(shopPost.url()).pathname, (await shopPost.response()).status()], ['POST', '/pay', 303])
  assert.equal(bankGet.method(), 'GET')

  const payment = shop.created.get(order)
  assert.ok(payment !== undefined, 'the shop created the payment')
  assert.equal(payment.status, 'requires_action')
  assert.equal(payment.amount, SIMULATED_ACTION_AMOUNT)
  assert.equal(payment.returnUrl, `${shop.url}/return?order=${order}`)
  assert.deepEqual({ type: payment.nextAction.type, method: payment.nextAction.method }, { type: 'redirect', method: 'GET' })
  assert.equal(bank.url(), payment.nextAction.url, 'the browser is where nextAction sent it')
  const bankUrl = new URL(bank.url())
  assert.equal(`${bankUrl.origin}${bankUrl.pathname}`, `${base}/checkout/simulated-bank`, 'the simulated bank is on the service (PUBLIC_BASE_URL)')

  await page.getByRole('heading', { level: 1, name: 'Simulated bank' }).waitFor()
  assert.equal(await page.locator('#succeed').innerText(), 'Succeed')
  assert.equal(await page.locator('#fail').innerText(), 'Fail')
  // While the shopper is at the bank, the API says the payment waits for them.
  const waiting = await call('GET', `/api/payments/${payment.id}`, merchant.auth)
  assert.equal(waiting.body.status, 'requires_action')
  assert.equal(waiting.body.nextAction.url, payment.nextAction.url)
  return payment
}

/**
 * The shopper clicks `button` on the bank's page: the bank posts its form, 303 to the service's return address, which
 * asks the gateway and answers 303 to the merchant's returnUrl. Resolves with where the browser landed and the return address.
 */
async function bankChooses (page, button, payment) {
  const toShop = page.waitForResponse((response) => response.url().startsWith(`${shop.url}/return`))
  await page.locator(button).click()
  const landed = await toShop
  assert.equal(landed.status(), 200)
  const chain = redirectChain(landed.request())
  const steps = await Promise.all(chain.map(async (request) => {
    const url = new URL(request.url())
    return { method: request.method(), origin: url.origin, path: url.pathname.replace(/\/checkout\/return\/[^/]+$/, '/checkout/return/{token}'), status: (await request.response())?.status() }
  }))
  assert.deepEqual(steps, [
    { method: 'POST', origin: base, path: '/checkout/simulated-bank', status: 303 },
    { method: 'GET', origin: base, path: '/checkout/return/{token}', status: 303 },
    { method: 'GET', origin: shop.url, path: '/return', status: 200 }
  ], 'bank → the service\'s return address → the merchant\'s returnUrl, each a 303')
  const returnAddress = chain[1].url()
  assert.ok(!returnAddress.includes(payment.id), 'the return address carries a token, never the payment id')
  await page.waitForURL((url) => url.href.startsWith(`${shop.url}/return`))
  return { landedAt: new URL(page.url()), returnAddress }
}

async function eventsOf (paymentId) {
  const listed = await call('GET', `/api/events?paymentId=${paymentId}&limit=100`, merchant.auth)
  assert.equal(listed.status, 200, JSON.stringify(listed.body))
  assert.equal(listed.body.hasMore, false)
  return listed.body.data.filter((event) => event.resource.id === paymentId).map((event) => event.type).reverse()
}

test('the shopper authenticates at the simulated bank ("Succeed") and lands on the merchant\'s returnUrl with status=succeeded', async () => {
  await onPage(async (page) => {
    const payment = await toTheBank(page, 'A-1042')
    await assertAccessible(page, 'the bank page')

    const { landedAt, returnAddress } = await bankChooses(page, '#succeed', payment)
    assert.equal(landedAt.origin, shop.url)
    assert.equal(landedAt.pathname, '/return')
    assert.equal(landedAt.searchParams.get('order'), 'A-1042', 'the merchant\'s own query is kept')
    assert.equal(landedAt.searchParams.get('paymentId'), payment.id)
    assert.equal(landedAt.searchParams.get('status'), 'succeeded')
    assert.equal(await page.locator('#outcome').innerText(), `Payment ${payment.id}: succeeded`, 'the shop read the payment back from the API')
    mkdirSync(SCREENSHOTS, { recursive: true })
    await page.screenshot({ path: join(SCREENSHOTS, 'checkout-returned.png') })

    const settled = await call('GET', `/api/payments/${payment.id}`, merchant.auth)
    assert.equal(settled.status, 200)
    assert.equal(settled.body.status, 'succeeded')
    assert.equal(settled.body.amountCaptured, SIMULATED_ACTION_AMOUNT)
    assert.equal(settled.body.nextAction, undefined, 'nothing left for the shopper to do')
    assert.deepEqual(await eventsOf(payment.id), ['payment.requires_action', 'payment.succeeded'], 'exactly one payment.succeeded')

    // The shopper reloads the return address (or the PSP sends them twice): only a redirect, nothing settled again.
    await page.goto(returnAddress)
    await page.waitForURL((url) => url.href.startsWith(`${shop.url}/return`))
    assert.equal(new URL(page.url()).searchParams.get('status'), 'succeeded')
    assert.deepEqual(await eventsOf(payment.id), ['payment.requires_action', 'payment.succeeded'], 'still exactly one payment.succeeded')
    assert.deepEqual(shop.returns.map((r) => [r.query.paymentId, r.query.status, r.verified]), [[payment.id, 'succeeded', 'succeeded'], [payment.id, 'succeeded', 'succeeded']])
  })
})

test('the shopper fails authentication ("Fail") and lands on the merchant\'s returnUrl with status=declined', async () => {
  await onPage(async (page) => {
    const payment = await toTheBank(page, 'A-1043')
    const { landedAt } = await bankChooses(page, '#fail', payment)
    assert.equal(landedAt.searchParams.get('order'), 'A-1043')
    assert.equal(landedAt.searchParams.get('paymentId'), payment.id)
    assert.equal(landedAt.searchParams.get('status'), 'declined')
    assert.equal(await page.locator('#outcome').innerText(), `Payment ${payment.id}: declined`)

    const settled = await call('GET', `/api/payments/${payment.id}`, merchant.auth)
    assert.equal(settled.body.status, 'declined')
    assert.equal(settled.body.declineCode, 'authentication_failed')
    assert.equal(settled.body.amountCaptured, 0)
    assert.deepEqual(await eventsOf(payment.id), ['payment.requires_action', 'payment.declined'], 'one payment.declined, no payment.succeeded')
  })
})
