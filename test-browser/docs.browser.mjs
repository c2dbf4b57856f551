// Swagger UI at /docs in a real Chromium against the built server (npm run test:browser).
// Fails on any Content-Security-Policy violation, page error, console error or failed request,
// so a CSP that breaks Swagger UI fails here even when every HTTP status is fine.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ADMIN, SCREENSHOTS, launchChromium, startService, watchForProblems } from './harness.mjs'

const PRODUCT = { id: 'sku-browser', name: 'Browser cup', price: 12.5 }

let server
let base
let browser

before(async () => {
  server = await startService()
  base = server.url
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await server?.stop()
})

test('Swagger UI renders the products operations and runs GET /products/{id} under the CSP', async () => {
  const put = await fetch(`${base}/products/${PRODUCT.id}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...ADMIN },
    body: JSON.stringify({ name: PRODUCT.name, price: PRODUCT.price })
  })
  assert.equal(put.status, 200, 'the product was seeded')

  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } })
  const page = await context.newPage()
  const problems = await watchForProblems(page)
  let failure
  try {
    const docs = await page.goto(`${base}/docs`, { waitUntil: 'load' })
    assert.equal(docs.status(), 200)
    assert.match(docs.headers()['content-security-policy'] ?? '', /script-src 'self'/, 'the page is served under the CSP')

    const getProduct = page.locator('#operations-products-getProduct')
    const putProduct = page.locator('#operations-products-putProduct')
    await getProduct.waitFor({ state: 'visible', timeout: 15_000 })
    await putProduct.waitFor({ state: 'visible' })
    assert.match(await getProduct.locator('.opblock-summary').innerText(), /GET[\s\S]*\/products\/\{id\}[\s\S]*Read a product/)
    assert.match(await putProduct.locator('.opblock-summary').innerText(), /PUT[\s\S]*\/products\/\{id\}/)

    await getProduct.locator('.opblock-summary').click()
    await getProduct.getByRole('button', { name: 'Try it out' }).click()
    await getProduct.locator('input[placeholder="id"]').fill(PRODUCT.id)
    await getProduct.getByRole('button', { name: 'Execute' }).click()

    const live = getProduct.locator('.live-responses-table')
    await live.waitFor({ state: 'visible', timeout: 15_000 })
    const status = live.locator('.response .response-col_status').first()
    assert.equal((await status.innerText()).trim(), '200')
    const body = live.locator('.response-col_description pre').first()
    await body.waitFor({ state: 'visible' })
    assert.deepEqual(JSON.parse(await body.innerText()), PRODUCT, 'the UI shows the product the server returned')
    assert.match(await getProduct.locator('.request-url pre').innerText(), new RegExp(`/products/${PRODUCT.id}$`))

    mkdirSync(SCREENSHOTS, { recursive: true })
    await page.screenshot({ path: join(SCREENSHOTS, 'docs-get-product.png'), fullPage: true })
    // Give late violations (deferred scripts, images, fonts) a moment to be reported.
    await page.waitForTimeout(250)
  } catch (err) {
    failure = err
  } finally {
    await context.close()
  }
  // Blocked scripts, styles or requests explain a broken UI better than a missing element does.
  assert.deepEqual(problems, [], `the page must work under the CSP without errors:\n${problems.join('\n')}` +
    (failure === undefined ? '' : `\n(then: ${failure.message})`))
  if (failure !== undefined) throw failure
})

/** A merchant and its API key, created the way an operator would (admin key over HTTP). */
async function merchantKey () {
  const merchant = await fetch(`${base}/merchants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ADMIN },
    body: JSON.stringify({ name: 'Browser merchant', email: 'browser@example.com' })
  })
  assert.equal(merchant.status, 201)
  const { id } = await merchant.json()
  const key = await fetch(`${base}/merchants/${id}/api-keys`, { method: 'POST', headers: ADMIN })
  assert.equal(key.status, 201)
  return (await key.json()).secret
}

test('Swagger UI: Authorize with a merchant key, then create a payment through Try it out (201)', async () => {
  const secret = await merchantKey()
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } })
  const page = await context.newPage()
  const problems = await watchForProblems(page)
  let failure
  try {
    await page.goto(`${base}/docs`, { waitUntil: 'load' })
    const createPayment = page.locator('#operations-payments-createPayment')
    await createPayment.waitFor({ state: 'visible', timeout: 15_000 })

    await page.locator('.scheme-container button.authorize').click()
    const modal = page.locator('.modal-ux')
    await modal.waitFor({ state: 'visible' })
    await modal.locator('input[aria-label="auth-bearer-value"]').fill(secret)
    // One Authorize button per security scheme (bearer, dashboardSession, csrfToken): the bearer one.
    await modal.locator('.auth-container').filter({ has: page.locator('input[aria-label="auth-bearer-value"]') }).locator('button.authorize').click()
    await modal.getByRole('button', { name: 'Close' }).first().click()

    await createPayment.locator('.opblock-summary').click()
    await createPayment.getByRole('button', { name: 'Try it out' }).click()
    await createPayment.locator('textarea.body-param__text').fill(JSON.stringify({ amount: 12.5, currency: 'EUR' }))
    await createPayment.getByRole('button', { name: 'Execute' }).click()

    const live = createPayment.locator('.live-responses-table')
    await live.waitFor({ state: 'visible', timeout: 15_000 })
    assert.equal((await live.locator('.response .response-col_status').first().innerText()).trim(), '201')
    const body = live.locator('.response-col_description pre').first()
    await body.waitFor({ state: 'visible' })
    const payment = JSON.parse(await body.innerText())
    assert.equal(payment.status, 'succeeded')
    assert.equal(payment.amount, 12.5)
    assert.match(await createPayment.locator('.curl-command').innerText(), /Authorization: Bearer sk_/, 'the request carried the key')

    const stored = await fetch(`${base}/api/payments/${payment.id}`, { headers: { authorization: `Bearer ${secret}` } })
    assert.equal(stored.status, 200, 'the payment belongs to the merchant whose key Swagger UI sent')
    mkdirSync(SCREENSHOTS, { recursive: true })
    await page.screenshot({ path: join(SCREENSHOTS, 'docs-create-payment.png'), fullPage: true })
    await page.waitForTimeout(250)
  } catch (err) {
    failure = err
  } finally {
    await context.close()
  }
  assert.deepEqual(problems, [], `the page must work without errors:\n${problems.join('\n')}` +
    (failure === undefined ? '' : `\n(then: ${failure.message})`))
  if (failure !== undefined) throw failure
})

test('Swagger UI: a merge-patch PATCH of a merchant through Try it out (200, no pre-filled If-Match)', async () => {
  const created = await fetch(`${base}/merchants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ADMIN },
    body: JSON.stringify({ name: 'Patch me', email: 'patch-me@example.com', country: 'US' })
  })
  assert.equal(created.status, 201)
  const { id } = await created.json()
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } })
  const page = await context.newPage()
  const problems = await watchForProblems(page)
  let failure
  try {
    await page.goto(`${base}/docs`, { waitUntil: 'load' })
    const patchMerchant = page.locator('#operations-merchants-patchMerchant')
    await patchMerchant.waitFor({ state: 'visible', timeout: 15_000 })
    await page.locator('.scheme-container button.authorize').click()
    const modal = page.locator('.modal-ux')
    await modal.waitFor({ state: 'visible' })
    await modal.locator('input[aria-label="auth-bearer-value"]').fill(ADMIN.authorization.replace(/^Bearer /, ''))
    // One Authorize button per security scheme (bearer, dashboardSession, csrfToken): the bearer one.
    await modal.locator('.auth-container').filter({ has: page.locator('input[aria-label="auth-bearer-value"]') }).locator('button.authorize').click()
    await modal.getByRole('button', { name: 'Close' }).first().click()

    await patchMerchant.locator('.opblock-summary').click()
    await patchMerchant.getByRole('button', { name: 'Try it out' }).click()
    await patchMerchant.locator('tr[data-param-name="id"] input').fill(id)
    const ifMatch = patchMerchant.locator('tr[data-param-name="if-match"] input')
    assert.equal(await ifMatch.inputValue(), '', 'If-Match is not pre-filled (a stale tag would make the patch fail with 412)')
    await patchMerchant.locator('textarea.body-param__text').fill(JSON.stringify({ name: 'Patched', country: null }))
    await patchMerchant.getByRole('button', { name: 'Execute' }).click()

    const live = patchMerchant.locator('.live-responses-table')
    await live.waitFor({ state: 'visible', timeout: 15_000 })
    assert.equal((await live.locator('.response .response-col_status').first().innerText()).trim(), '200')
    assert.match(await patchMerchant.locator('.curl-command').innerText(), /Content-Type: application\/merge-patch\+json/i, 'sent as a merge patch')
    const stored = await (await fetch(`${base}/merchants/${id}`, { headers: ADMIN })).json()
    assert.equal(stored.name, 'Patched')
    assert.equal(stored.country, undefined, 'null removed the country')
  } catch (err) {
    failure = err
  } finally {
    await context.close()
  }
  assert.deepEqual(problems, [], `the page must work without errors:\n${problems.join('\n')}` +
    (failure === undefined ? '' : `\n(then: ${failure.message})`))
  if (failure !== undefined) throw failure
})
