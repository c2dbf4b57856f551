import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Webhook } from 'standardwebhooks'
import { onWebhook, quickStart } from '../examples/quick-start.js'
import { wholeApi } from '../examples/whole-api.js'
import { createClient } from '../src/index.js'
import { readmeWalk, wholeApiAsInReadme } from './readme.js'
import { ADMIN_API_KEY, startService, type Service } from './service.js'

let service: Service
before(async () => { service = await startService() })
after(async () => { await service?.stop() })

test('the quick start runs against the live service', async () => {
  const { merchant, payment, declineCode, amounts } = await quickStart(service.baseUrl, ADMIN_API_KEY)
  assert.equal(merchant.name, 'Acme')
  assert.equal(payment.status, 'succeeded')
  assert.equal(declineCode, 'card_declined')
  assert.deepEqual(amounts, [2000, 10.1], 'the declined payment is stored too, newest first')
})

test('the receiver example verifies and narrows', () => {
  const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`
  const body = JSON.stringify({
    id: '019aa9f1-2b3c-7d4e-8f50-6172839a4b5c',
    type: 'refund.succeeded',
    createdAt: '2026-01-15T09:30:01.000Z',
    sequence: 1,
    resource: { type: 'refund', id: 'r1' },
    data: { id: 'r1', amount: 4 }
  })
  const sign = (type: string) => {
    const signed = body.replace('refund.succeeded', type)
    const at = new Date()
    const headers = new Headers({
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('msg_1', at, signed)
    })
    return onWebhook(signed, headers, secret)
  }
  assert.equal(sign('refund.succeeded'), 'refunded 4')
  assert.equal(sign('merchant.updated'), 'ignored merchant.updated')
})

test('the README\'s whole-API walk is examples/whole-api.ts but for the import path (they cannot drift)', async () => {
  assert.equal(await readmeWalk(), await wholeApiAsInReadme())
})

/** Every helper of a client, by its path (`payments.refunds.list`); `api` (the openapi-fetch client) aside. */
function helperPaths (members: object, prefix = ''): string[] {
  return Object.entries(members).flatMap(([name, value]: [string, unknown]) => {
    if (prefix === '' && name === 'api') return []
    if (typeof value === 'function') return [`${prefix}${name}`]
    return value !== null && typeof value === 'object' ? helperPaths(value, `${prefix}${name}.`) : []
  })
}

test('the whole-API walk calls every helper of the client (test/operations.test.ts: every operation has one)', async () => {
  const walk = await readFile(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples', 'whole-api.ts'), 'utf8')
  const helpers = helperPaths(createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'unused' }))
  assert.ok(helpers.length > 40, helpers.join(', '))
  assert.deepEqual(helpers.filter((path) => !new RegExp(`\\b(admin|shop)\\.${path.replaceAll('.', '\\.')}\\(`).test(walk)), [], 'helpers the walk never calls')
})

test('the whole-API walk runs against the live service (issue 42, item 3: every helper once)', async () => {
  assert.deepEqual(await wholeApi(service.baseUrl, ADMIN_API_KEY), {
    index: 'product-payment-service',
    product: true,
    merchant: 'Walk Shop Ltd',
    merchantRead: 'Walk Shop Ltd',
    merchantListed: true,
    connectors: 1,
    paid: 'succeeded',
    replayed: true,
    refund: 5,
    refundsOfPaid: true,
    captured: 30,
    canceled: 'canceled',
    // Customer-present: 201 requires_action, the shopper confirms at the simulated bank page (over HTTP, as a browser
    // would), comes back through the service to the returnUrl (its own query kept) and the payment has settled.
    checkout: 'requires_action',
    returnedTo: 'https://shop.example.com/done?order=A-2&status=succeeded',
    settled: 'succeeded',
    // Disputes come only from a PSP's events (Stripe's, Adyen's), which the simulated gateway the live service runs
    // does not send: making a real dispute here would mean signing PSP events for a Stripe or Adyen connector. The walk
    // lists the payment's disputes (an empty page) and reads an unknown id (the typed 404 ApiError) instead; the
    // service's own tests (test/routes/disputes/) cover disputes made by PSP events.
    disputes: 0,
    disputeNotFound: 404,
    acceptNotFound: 404,
    declineCode: 'card_declined',
    summary: true,
    connectorStats: true,
    succeeded: true,
    exports: true,
    allRefunds: true,
    eventTypes: true,
    endpoints: 1,
    replayed202: true,
    tested: 'failed',
    retried: true,
    verified: true,
    keys: 1,
    team: 1,
    demoted: 'viewer',
    audited: ['payment.refund by api_key', 'user.delete by operator', 'user.update by operator', 'user.invite by operator']
  })
})
