// Issue 43's team access, in a real Chromium against the built server (npm run test:browser): the operator invites a
// support user on a merchant's Team page, the invitee sets a password from the link, enrolls an authenticator
// (TOTP) and signs in with email, password and code, refunds a payment, and the audit log and the payment's Activity
// name them; a viewer sees no refund; the operator changes a role and removes a user. Every page passes axe; any
// answer of 400 or more other than those a test provokes, CSP violation, page error or console error fails the test.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { generateSync } from 'otplib'
import * as harness from './harness.mjs'
import { ADMIN, ADMIN_API_KEY, apiClient, assertAccessible, launchChromium, startService } from './harness.mjs'

const PASSWORD = 'correct horse battery staple 43'

let server
let base
let browser
/** A merchant with its API key and two succeeded payments: one the support user refunds, one the viewer looks at. */
let shop
let refunded
let viewed

const call = apiClient(() => base)

before(async () => {
  server = await startService()
  base = server.url
  browser = await launchChromium()
  const created = await call('POST', '/merchants', { ...ADMIN, 'idempotency-key': crypto.randomUUID() }, { name: 'Team Shop', email: 'owner@team-shop.example' })
  assert.equal(created.status, 201)
  const key = await call('POST', `/merchants/${created.body.id}/api-keys`, ADMIN, { name: 'checkout' })
  assert.equal(key.status, 201)
  shop = { id: created.body.id, secret: key.body.secret, auth: { authorization: `Bearer ${key.body.secret}` } }
  for (const amount of [25, 30]) {
    const payment = await call('POST', '/api/payments', { ...shop.auth, 'idempotency-key': crypto.randomUUID() }, { amount, currency: 'EUR' })
    assert.equal(payment.status, 201, JSON.stringify(payment.body))
    assert.equal(payment.body.status, 'succeeded')
    if (amount === 25) refunded = payment.body
    else viewed = payment.body
  }
})

after(async () => {
  await browser?.close()
  await server?.stop()
})

/** Sign-ins refused on purpose (a wrong password, a code still to give) are 401s of POST /dashboard/session. */
const REFUSED_SIGN_IN = { path: /^\/dashboard\/session$/, status: 401 }

async function onPage (expected, body) {
  await harness.onPage(browser, body, { expected })
}

async function signOut (page) {
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByRole('heading', { level: 1, name: 'Sign in to the payments dashboard' }).waitFor()
}

/** The main navigation's entries. */
async function navEntries (page) {
  return await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts()
}

/** Signs in through the email form; with `secret`, answers the code the server then asks for. */
async function signInWithPassword (page, email, secret) {
  await page.goto(`${base}/dashboard/`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in with email' }).click()
  if (secret !== undefined) {
    await page.getByRole('status').filter({ hasText: 'Two-factor authentication is on for this account' }).waitFor()
    await page.getByLabel('Authentication code').fill(generateSync({ secret }))
    await page.getByRole('button', { name: 'Sign in with email' }).click()
  }
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
}

test('a support user: invited by the operator, password and TOTP set from the link, signs in with a code, refunds; the audit log and the Activity name them', async () => {
  const email = 'sam.support@team-shop.example'
  await onPage([REFUSED_SIGN_IN], async (page, context) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
    await harness.signIn(page, base, shop.secret)
    assert.deepEqual(await navEntries(page), ['Overview', 'Payments', 'Refunds', 'Disputes', 'Events', 'Webhooks', 'Developers', 'Audit log'],
      'an API key manages no users: no Team entry')
    await signOut(page)

    await harness.signIn(page, base, ADMIN_API_KEY)
    await page.getByRole('link', { name: 'Team of Team Shop' }).click()
    await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor()
    const inviting = page.getByRole('region', { name: 'Invite someone' })
    await inviting.getByLabel('Email').fill(email)
    await inviting.getByLabel('Role').selectOption('support')
    await inviting.getByRole('button', { name: 'Invite' }).click()
    const link = await page.getByTestId('secret').innerText()
    assert.match(link, new RegExp(`^${base}/dashboard/#/invite/[A-Za-z0-9_-]+$`), 'the whole link, to send as it is')
    await page.getByRole('button', { name: 'Copy' }).click()
    await page.getByText('Copied to the clipboard.').waitFor()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), link)
    const row = page.getByTestId('users').getByRole('row').filter({ hasText: email })
    await row.waitFor()
    assert.match(await row.innerText(), /invited\s+off\s+never/)
    assert.equal(await row.getByLabel(`Role of ${email}`).inputValue(), 'support')
    await assertAccessible(page, 'team')
    await signOut(page)

    await page.goto(link)
    await page.getByRole('heading', { level: 1, name: 'Join the payments dashboard' }).waitFor()
    await page.getByText('At least 12 characters').waitFor()
    await assertAccessible(page, 'invite')
    await page.getByLabel('New password').fill(PASSWORD)
    await page.getByLabel('Repeat the password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Set password and sign in' }).click()
    await page.getByRole('heading', { name: 'Enable two-factor authentication' }).waitFor()
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click()
    const secret = await page.getByTestId('totp-secret').innerText()
    assert.match(secret, /^[A-Z2-7]+=*$/, 'a base32 secret to type into an app')
    assert.match(await page.getByTestId('otpauth-url').innerText(), /^otpauth:\/\/totp\//)
    await assertAccessible(page, 'two-factor enrollment')
    await page.getByLabel('Code from the app').fill(generateSync({ secret }))
    await page.getByRole('button', { name: 'Turn on two-factor authentication' }).click()
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    assert.equal(await page.locator('.who').innerText(), `${email} (support) · Merchant ${shop.id}`)
    await signOut(page)

    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password', { exact: true }).fill('not the password at all')
    await page.getByRole('button', { name: 'Sign in with email' }).click()
    await page.getByRole('alert').filter({ hasText: 'The email or the password is not right' }).waitFor()
    await assertAccessible(page, 'sign in, password refused')
    await signInWithPassword(page, email, secret)
    assert.deepEqual(await navEntries(page), ['Overview', 'Payments', 'Refunds', 'Disputes', 'Events', 'Webhooks', 'Developers', 'Audit log', 'Account'])

    await harness.openPage(page, base, '/account', 'Account')
    assert.equal(await page.getByTestId('two-factor').innerText(), 'on')
    await assertAccessible(page, 'account')

    await harness.openPage(page, base, `/payments/${refunded.id}`, /Payment/)
    await page.getByRole('button', { name: 'Refund' }).click()
    await page.getByRole('dialog', { name: 'Refund?' }).getByRole('button', { name: 'Refund' }).click()
    await page.getByRole('status').filter({ hasText: /^Refund [0-9a-f-]{36}: succeeded, €25\.00\.$/ }).waitFor()
    const activity = page.getByTestId('activity').getByRole('row').filter({ hasText: 'payment.refund' })
    await activity.waitFor()
    assert.match(await activity.innerText(), new RegExp(`${email} \\(user\\)[\\s\\S]*payment\\.refund[\\s\\S]*succeeded`))
    await assertAccessible(page, 'payment with its activity')

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click()
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor()
    await page.getByLabel('Action', { exact: true }).fill('payment.refund')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/action=payment\.refund/)
    const entry = page.getByTestId('audit-log').getByRole('row').filter({ hasText: refunded.id })
    await entry.waitFor()
    assert.match(await entry.innerText(), new RegExp(`${email} \\(user\\)[\\s\\S]*payment\\.refund[\\s\\S]*payment ${refunded.id}[\\s\\S]*succeeded`))
    assert.equal(await page.getByTestId('audit-log').getByRole('row').count(), 2, 'the header and the one refund')
    await assertAccessible(page, 'audit log')
  })

  const log = await call('GET', `/merchants/${shop.id}/audit-log?action=payment.refund`, ADMIN)
  assert.equal(log.status, 200)
  assert.deepEqual(log.body.data.map((entry) => [entry.actor.type, entry.actor.label, entry.resource.id, entry.outcome]),
    [['user', email, refunded.id, 'succeeded']], 'the API agrees: one refund, by that user')
})

test('a viewer reads the payment and its activity, and is offered no refund, nor any change of keys, connectors or webhooks', async () => {
  const email = 'vic.viewer@team-shop.example'
  const invited = await call('POST', `/merchants/${shop.id}/users`, ADMIN, { email, role: 'viewer' })
  assert.equal(invited.status, 201, JSON.stringify(invited.body))
  const token = /#\/invite\/(.+)$/.exec(invited.body.invite.url)?.[1]
  const accepted = await call('POST', '/dashboard/invite', {}, { token, password: PASSWORD })
  assert.equal(accepted.status, 201, JSON.stringify(accepted.body))

  await onPage([], async (page) => {
    await signInWithPassword(page, email)
    assert.equal(await page.locator('.who').innerText(), `${email} (viewer) · Merchant ${shop.id}`)
    await harness.openPage(page, base, `/payments/${viewed.id}`, /Payment/)
    await page.getByTestId('actions-not-allowed').waitFor()
    await page.getByTestId('activity').getByRole('row').filter({ hasText: 'payment.create' }).waitFor()
    assert.equal(await page.getByRole('button', { name: 'Refund' }).count(), 0, 'no refund button for a viewer')
    assert.equal(await page.getByLabel(/Refund amount/).count(), 0)
    await assertAccessible(page, 'payment, viewer')

    await harness.openPage(page, base, '/developers', 'Developers')
    await page.getByText('API keys are listed and managed by the owner and developer roles only.').waitFor()
    await page.getByTestId('failover-rule').waitFor()
    assert.equal(await page.getByRole('button', { name: /Create key|Add connector/ }).count(), 0, 'nothing to change for a viewer')
    await harness.openPage(page, base, '/webhooks', 'Webhooks')
    await page.getByText('No endpoints yet.').waitFor()
    assert.equal(await page.getByRole('button', { name: 'Add endpoint' }).count(), 0)
    await assertAccessible(page, 'webhooks, viewer')
  })
})

test('the operator changes a user\'s role and removes them, each on the Team page', async () => {
  const email = 'dee.developer@team-shop.example'
  const invited = await call('POST', `/merchants/${shop.id}/users`, ADMIN, { email, role: 'developer' })
  assert.equal(invited.status, 201, JSON.stringify(invited.body))
  await onPage([], async (page) => {
    await harness.signIn(page, base, ADMIN_API_KEY)
    await harness.openPage(page, base, `/merchants/${shop.id}/team`, 'Team')
    const row = page.getByTestId('users').getByRole('row').filter({ hasText: email })
    await row.getByLabel(`Role of ${email}`).selectOption('owner')
    await row.getByRole('button', { name: `Save the role of ${email}` }).click()
    await row.getByText(`${email} is now owner.`).waitFor()
    const changed = await call('GET', `/merchants/${shop.id}/users`, ADMIN)
    assert.equal(changed.body.data.find((user) => user.email === email)?.role, 'owner')

    await row.getByRole('button', { name: `Remove ${email}` }).click()
    const dialog = page.getByRole('dialog', { name: `Remove ${email}?` })
    assert.match(await dialog.innerText(), /can no longer sign in/)
    await dialog.getByRole('button', { name: `Remove ${email}` }).click()
    await page.getByRole('status').filter({ hasText: `Removed ${email}.` }).waitFor()
    await row.waitFor({ state: 'detached' })
    const left = await call('GET', `/merchants/${shop.id}/users`, ADMIN)
    assert.ok(!left.body.data.some((user) => user.email === email), 'the API no longer lists them')
  })
})
