// Issue 44's "Broken" items, in a real Chromium against the built server (npm run test:browser), beyond what
// dashboard.browser.mjs already covers: the payments search never sends the API a request it refuses (whatever is
// typed), a notice belongs to the URL it was shown for, the Overview's chart choice is in its URL, and a key that
// never expires says Never. Every page passes axe; any 4xx/5xx answer, CSP violation, page error or console error
// fails the test.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import * as harness from './harness.mjs'
import { ADMIN, apiClient, assertAccessible, launchChromium, startService } from './harness.mjs'

let server
let base
let browser
/** A merchant with a few USD payments whose amounts look alike (0.50, 5, 35), one refunded, one with metadata. */
let shop
const payments = {}

const call = apiClient(() => base)

async function createPayment (body) {
  const created = await call('POST', '/api/payments', { ...shop.auth, 'idempotency-key': crypto.randomUUID() }, body)
  assert.equal(created.status, 201, JSON.stringify(created.body))
  return created.body
}

before(async () => {
  server = await startService({})
  base = server.url
  browser = await launchChromium()
  const created = await call('POST', '/merchants', { ...ADMIN, 'idempotency-key': crypto.randomUUID() }, { name: 'Search Shop', email: 'owner@search-shop.example' })
  assert.equal(created.status, 201)
  const key = await call('POST', `/merchants/${created.body.id}/api-keys`, ADMIN, { name: 'checkout' })
  assert.equal(key.status, 201)
  shop = { id: created.body.id, secret: key.body.secret, auth: { authorization: `Bearer ${key.body.secret}` } }
  payments.halfDollar = await createPayment({ amount: 0.5, currency: 'USD' })
  payments.five = await createPayment({ amount: 5, currency: 'USD' })
  payments.thirtyFive = await createPayment({ amount: 35, currency: 'USD', metadata: { order_id: 'S-35' } })
  payments.refunded = await createPayment({ amount: 20, currency: 'USD' })
  const refund = await call('POST', `/api/payments/${payments.refunded.id}/refunds`, { ...shop.auth, 'idempotency-key': crypto.randomUUID() }, { amount: 5 })
  assert.equal(refund.status, 201, JSON.stringify(refund.body))
})

after(async () => {
  await browser?.close()
  await server?.stop()
})

/** Runs `body` on a fresh page, then fails on anything refused, blocked or broken: no answer of 400 or more is expected here. */
async function onPage (body) {
  await harness.onPage(browser, body)
}

async function signIn (page) {
  await harness.signIn(page, base, shop.secret)
}

async function openPage (page, hash, heading) {
  await harness.openPage(page, base, hash, heading)
}

/** Types `text` in the search box and applies it. */
async function search (page, text) {
  await page.getByLabel('Search').fill(text)
  await page.getByRole('button', { name: 'Apply' }).click()
  await page.waitForURL((url) => new URLSearchParams(url.hash.split('?')[1] ?? '').get('q') === text)
}

/** The payment ids the list shows once it shows exactly `expected` (an earlier answer may still be on screen a moment). */
async function listedIds (page, expected) {
  await page.waitForFunction((ids) => {
    const shown = [...document.querySelectorAll('table.list tbody tr')].map((row) => row.textContent)
    return shown.length === ids.length && ids.every((id, i) => shown[i].includes(id))
  }, expected.map((payment) => payment.id), { timeout: 5000 }).catch(() => {})
  return await page.locator('table.list tbody tr td:first-child').allInnerTexts()
}

test('the payments search reads amounts as people write them: ".50" is 0.50 and "035" is 35, never a 400', async () => {
  await onPage(async (page) => {
    await signIn(page)
    await openPage(page, '/payments', 'Payments')

    await search(page, '.50')
    await page.getByTestId('search-meaning').getByText(/amount 0\.50/).waitFor()
    assert.deepEqual(await listedIds(page, [payments.halfDollar]), [payments.halfDollar.id], '.50 is half a dollar, not 50 or 5')

    await search(page, '035')
    await page.getByTestId('search-meaning').getByText(/amount 35\b/).waitFor()
    assert.deepEqual(await listedIds(page, [payments.thirtyFive]), [payments.thirtyFive.id])

    // Four digits read as a card's last 4; the page offers the amount instead, and that search is one the API takes.
    await search(page, '0035')
    await page.getByTestId('search-meaning').getByText(/card ending in 0035/).waitFor()
    await page.getByRole('link', { name: 'Search the amount 35' }).click()
    await page.getByTestId('search-meaning').getByText(/amount 35\b/).waitFor()
    assert.deepEqual(await listedIds(page, [payments.thirtyFive]), [payments.thirtyFive.id])
    await assertAccessible(page, 'payments, searched by amount')
  })
})

test('the payments search explains what the API would refuse instead of sending it: an empty metadata value, too long a key, amount or email', async () => {
  await onPage(async (page) => {
    await signIn(page)
    await openPage(page, '/payments', 'Payments')
    const explained = async (text, why) => {
      await search(page, text)
      const notice = page.getByRole('status').filter({ hasText: why })
      await notice.waitFor()
      assert.equal(await page.getByTestId('search-meaning').count(), 0, `${text}: nothing is searched`)
      assert.equal(await page.locator('table.list').count(), 0, `${text}: no list`)
      return notice
    }
    // The API's "metadataValue is required with metadataKey" (issue 44) came from exactly this: `order_id=` sent only the key.
    await explained('order_id=', /value after “=”/)
    await assertAccessible(page, 'payments, unreadable search')
    await explained(`${'k'.repeat(41)}=1`, /metadata key.*at most 40 characters/)
    await explained(`order_id=${'v'.repeat(501)}`, /metadata value.*at most 500 characters/)
    await explained('1'.repeat(21), /amount.*at most 20 characters/)
    await explained(`${'a'.repeat(250)}@example.com`, /email.*at most 254 characters/)

    // The search box still finds metadata typed as key=value.
    await search(page, 'order_id=S-35')
    await page.getByTestId('search-meaning').getByText('metadata order_id = S-35').waitFor()
    assert.deepEqual(await listedIds(page, [payments.thirtyFive]), [payments.thirtyFive.id])
  })
})

test('an export\'s notice belongs to the filters it exported: another search, another filter or Back shows none', async () => {
  await onPage(async (page) => {
    await signIn(page)
    await openPage(page, '/payments', 'Payments')
    await search(page, '35')
    assert.deepEqual(await listedIds(page, [payments.thirtyFive]), [payments.thirtyFive.id])
    const downloading = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Export CSV' }).click()
    const csv = readFileSync(await (await downloading).path(), 'utf8').split('\r\n')
    assert.deepEqual(csv.slice(1, -1).map((record) => record.split(',')[0]), [payments.thirtyFive.id])
    const exported = page.getByRole('status').filter({ hasText: /^Exported payments-/ })
    await exported.waitFor()

    await search(page, '5')
    assert.deepEqual(await listedIds(page, [payments.five]), [payments.five.id])
    assert.equal(await exported.count(), 0, 'the 35.00 export is not this search\'s')
    await page.goBack()
    await page.getByTestId('search-meaning').getByText(/amount 35\b/).waitFor()
    assert.deepEqual(await listedIds(page, [payments.thirtyFive]), [payments.thirtyFive.id])
    assert.equal(await exported.count(), 0, 'Back renders the page from its URL: no notice of an earlier click')

    await openPage(page, '/refunds?status=succeeded', 'Refunds')
    await page.getByTestId('refund-list').waitFor()
    const refundsDownload = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Export CSV' }).click()
    await refundsDownload
    const refundsExported = page.getByRole('status').filter({ hasText: /^Exported refunds-/ })
    await refundsExported.waitFor()
    await page.getByLabel('Status').selectOption('failed')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.getByText('No refunds match.').waitFor()
    assert.equal(await refundsExported.count(), 0, 'the succeeded refunds\' export is not the failed ones\'')
    await assertAccessible(page, 'refunds, filtered after an export')
  })
})

test('the overview\'s chart choice is in its URL: a reload or a shared link shows the volume chart it showed', async () => {
  await onPage(async (page) => {
    await signIn(page)
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    await page.getByTestId('shown-currency').getByText('In USD').waitFor()
    await page.getByLabel('Chart shows').selectOption({ label: 'Volume (USD)' })
    await page.waitForURL(/chart=volume/)
    await page.getByText('Per UTC day, volume in USD').waitFor({ state: 'attached' })
    await page.reload()
    await page.getByTestId('shown-currency').getByText('In USD').waitFor()
    assert.equal(await page.getByLabel('Chart shows').inputValue(), 'amount')
    await page.getByText('Per UTC day, volume in USD').waitFor({ state: 'attached' })
    // The range's presets keep the chart shown.
    await page.getByRole('button', { name: 'Last 7 days' }).click()
    await page.waitForURL(/from=.*chart=volume|chart=volume.*from=/)
    await assertAccessible(page, 'overview, volume chart')
  })
})

test('a key that never expires says Never; one that expires shows its date', async () => {
  const expiresAt = '2031-01-02T03:04:05.000Z'
  const expiring = await call('POST', `/merchants/${shop.id}/api-keys`, ADMIN, { name: 'expiring', expiresAt })
  assert.equal(expiring.status, 201)
  await onPage(async (page) => {
    await signIn(page)
    await openPage(page, '/developers', 'Developers')
    const keys = page.getByTestId('api-keys')
    const never = keys.getByRole('row').filter({ hasText: 'checkout' })
    const dated = keys.getByRole('row').filter({ hasText: 'expiring' })
    await dated.waitFor()
    assert.equal(await never.getByTestId('expires').innerText(), 'Never')
    assert.equal(await dated.getByTestId('expires').innerText(), '2 Jan 2031, 03:04:05 UTC')
    assert.doesNotMatch(await keys.innerText(), /1970/)
    await assertAccessible(page, 'developers, keys')
  })
})
