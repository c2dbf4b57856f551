import t from 'tap'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parse } from 'yaml'
import { buildTestApp, merchantWithKey } from '../../helpers/app'
import { createSqliteDatabase } from '../../../src/store/sqlite'
import { StoreUnavailableError } from '../../../src/domain/errors'
import { isSealed } from '../../../src/secrets/encryption'
import type { Database, IdempotencyKeyRef } from '../../../src/store/types'

/*
 * Issue 42, item 1: every POST of the API honours Idempotency-Key (one rule, as Stripe's): the same key and body replay
 * the first answer without acting again, another body is 409. Answers that carry a secret are stored sealed.
 */

const json = { 'content-type': 'application/json' }

function keyed (key: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...json, 'idempotency-key': key, ...extra }
}

/** The stored record of a key the admin sent on a route pattern. */
async function stored (db: Database, path: string, key: string, scope = 'admin') {
  const ref: IdempotencyKeyRef = { scope, method: 'POST', path, key }
  return await db.idempotency.get(ref)
}

t.test('POST /merchants/{id}/api-keys: a repeat replays the same key and secret, creates no second key, and the stored copy is sealed', async (t) => {
  const app = await buildTestApp(t)
  const { merchantId } = await merchantWithKey(app)
  const url = `/merchants/${merchantId}/api-keys`
  const first = await app.inject({ method: 'POST', url, headers: keyed('key-1'), payload: { name: 'ci' } })
  t.equal(first.statusCode, 201)
  t.equal(first.headers['cache-control'], 'no-store')
  t.notOk(first.headers['idempotent-replayed'])
  const again = await app.inject({ method: 'POST', url, headers: keyed('key-1'), payload: { name: 'ci' } })
  t.equal(again.statusCode, 201)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.headers['cache-control'], 'no-store', 'the replay may not be cached either')
  t.equal(again.json().secret, first.json().secret, 'the same secret, opened from its sealed copy')
  t.equal(again.json().id, first.json().id)
  const keys = (await app.inject({ method: 'GET', url })).json().data as Array<{ id: string }>
  t.equal(keys.filter((k) => k.id === first.json().id).length, 1)
  t.equal(keys.length, 2, 'the merchant\'s first key and this one: no second creation')

  const record = await stored(app.db, '/merchants/:id/api-keys', 'key-1')
  t.equal(record?.recoveryPoint, 'finished', 'stored with the key, in one transaction')
  t.ok(isSealed(record?.response?.body ?? ''), 'the stored answer is sealed')
  t.notMatch(record?.response?.body ?? '', first.json().secret, 'the secret is never stored in clear')

  const other = await app.inject({ method: 'POST', url, headers: keyed('key-1'), payload: { name: 'other' } })
  t.equal(other.statusCode, 409)
  t.equal(other.json().type, 'urn:problem-type:idempotency-key-reused')
})

t.test('a database time-out after the API key committed (503): the retry replays that key, never makes a second one', async (t) => {
  const real = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  let failAfterCommit = false
  const db: Database = {
    ...real,
    apiKeys: {
      ...real.apiKeys,
      create: async (key, completion) => {
        await real.apiKeys.create(key, completion)
        if (failAfterCommit) {
          failAfterCommit = false
          throw new StoreUnavailableError('the database did not answer in time', 'timeout', 1)
        }
      }
    }
  }
  const app = await buildTestApp(t, {}, { database: db })
  const { merchantId } = await merchantWithKey(app)
  const url = `/merchants/${merchantId}/api-keys`
  failAfterCommit = true
  const lost = await app.inject({ method: 'POST', url, headers: keyed('timeout-1'), payload: {} })
  t.equal(lost.statusCode, 503, 'the client never saw the answer')
  const retry = await app.inject({ method: 'POST', url, headers: keyed('timeout-1'), payload: {} })
  t.equal(retry.statusCode, 201)
  t.equal(retry.headers['idempotent-replayed'], 'true', 'the answer committed with the key is replayed')
  const keys = (await app.inject({ method: 'GET', url })).json().data as Array<{ id: string }>
  t.equal(keys.length, 2, 'the merchant\'s first key and the one created once')
  t.ok(keys.some((k) => k.id === retry.json().id))
})

t.test('webhook endpoints: creation and secret rotation replay their secret, sealed at rest; a replay rotates nothing', async (t) => {
  const app = await buildTestApp(t, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' })
  const { merchantId } = await merchantWithKey(app)
  const url = `/merchants/${merchantId}/webhook-endpoints`
  const body = { url: 'https://hooks.example.com/in' }
  const created = await app.inject({ method: 'POST', url, headers: keyed('wh-1'), payload: body })
  t.equal(created.statusCode, 201)
  const replayed = await app.inject({ method: 'POST', url, headers: keyed('wh-1'), payload: body })
  t.equal(replayed.statusCode, 201)
  t.equal(replayed.headers['idempotent-replayed'], 'true')
  t.equal(replayed.headers.location, created.headers.location)
  t.equal(replayed.json().secret, created.json().secret)
  t.equal((await app.inject({ method: 'GET', url })).json().data.length, 1, 'one endpoint')
  const record = await stored(app.db, '/merchants/:id/webhook-endpoints', 'wh-1')
  t.ok(isSealed(record?.response?.body ?? ''))
  t.notMatch(record?.response?.body ?? '', created.json().secret)

  const rotate = `${url}/${created.json().id as string}/rotate-secret`
  const rotated = await app.inject({ method: 'POST', url: rotate, headers: keyed('rot-1'), payload: { overlapSeconds: 0 } })
  t.equal(rotated.statusCode, 200)
  t.not(rotated.json().secret, created.json().secret)
  const again = await app.inject({ method: 'POST', url: rotate, headers: keyed('rot-1'), payload: { overlapSeconds: 0 } })
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.json().secret, rotated.json().secret, 'the replay shows the secret the rotation made')
  t.equal(again.json().updatedAt, rotated.json().updatedAt, 'and rotated nothing again')
  const rotationRecord = await stored(app.db, '/merchants/:id/webhook-endpoints/:endpointId/rotate-secret', 'rot-1')
  t.equal(rotationRecord?.recoveryPoint, 'finished', 'stored with the new secret, in one transaction')
  t.ok(isSealed(rotationRecord?.response?.body ?? ''))
})

t.test('replay of events, delivery retry, connector creation and cancel replay their first answer', async (t) => {
  const app = await buildTestApp(t, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' })
  const { merchantId, auth } = await merchantWithKey(app)
  const endpoint = (await app.inject({ method: 'POST', url: `/merchants/${merchantId}/webhook-endpoints`, headers: json, payload: { url: 'https://hooks.example.com/in' } })).json()
  const replayUrl = `/merchants/${merchantId}/webhook-endpoints/${endpoint.id as string}/replay`
  const range = { from: '2020-01-01T00:00:00.000Z', to: '2099-01-01T00:00:00.000Z' }
  const firstReplay = await app.inject({ method: 'POST', url: replayUrl, headers: keyed('replay-1'), payload: range })
  t.equal(firstReplay.statusCode, 202)
  const secondReplay = await app.inject({ method: 'POST', url: replayUrl, headers: keyed('replay-1'), payload: range })
  t.equal(secondReplay.statusCode, 202)
  t.equal(secondReplay.headers['idempotent-replayed'], 'true')
  t.equal(secondReplay.body, firstReplay.body)

  const connectors = `/merchants/${merchantId}/connectors`
  const account = { type: 'simulated', description: 'test' }
  const connector = await app.inject({ method: 'POST', url: connectors, headers: keyed('conn-1'), payload: account })
  t.equal(connector.statusCode, 201)
  const connectorAgain = await app.inject({ method: 'POST', url: connectors, headers: keyed('conn-1'), payload: account })
  t.equal(connectorAgain.headers['idempotent-replayed'], 'true')
  t.equal(connectorAgain.headers.location, connector.headers.location)
  t.equal((await app.inject({ method: 'GET', url: connectors })).json().data.length, 1, 'one account')

  const payment = (await app.inject({ method: 'POST', url: '/api/payments', headers: { ...auth, ...json }, payload: { amount: 5, currency: 'USD', captureMethod: 'manual' } })).json()
  const cancelUrl = `/api/payments/${payment.id as string}/cancel`
  const canceled = await app.inject({ method: 'POST', url: cancelUrl, headers: { ...auth, 'idempotency-key': 'cancel-1' } })
  t.equal(canceled.statusCode, 200)
  t.equal(canceled.json().status, 'canceled')
  const cancelAgain = await app.inject({ method: 'POST', url: cancelUrl, headers: { ...auth, 'idempotency-key': 'cancel-1' } })
  t.equal(cancelAgain.headers['idempotent-replayed'], 'true')
  t.equal(cancelAgain.body, canceled.body)
})

t.test('the document: every POST of the API takes Idempotency-Key, but those that are not client calls', async (t) => {
  const document = parse(readFileSync(resolve(__dirname, '..', '..', '..', 'openapi.yaml'), 'utf8')) as {
    paths: Record<string, Record<string, { operationId: string, parameters?: Array<{ in: string, name: string }>, responses: Record<string, { headers?: Record<string, unknown> }> }>>
  }
  // Not calls an API client makes: the PSPs' notifications (deduplicated by the PSP's event id), the dashboard's sign-in,
  // and the forms a shopper's browser posts at checkout (idempotent by their return token).
  // sendWebhookTest: a diagnostic whose answer is the receiver's answer now; repeating it sends one more test event and moves no money.
  // The dashboard's account calls (invite acceptance, two-factor enrollment, password change) are a person's, in a browser, like its sign-in.
  const exempt = new Set(['receiveStripeEvent', 'receiveAdyenNotification', 'signInToDashboard', 'returnFromAuthenticationForm', 'simulatedBankDecide', 'sendWebhookTest',
    'acceptInvite', 'startTotpEnrollment', 'confirmTotpEnrollment', 'changePassword'])
  const posts = Object.values(document.paths).flatMap((item) => item.post === undefined ? [] : [item.post])
  const without = posts.filter((op) => !exempt.has(op.operationId) && !(op.parameters ?? []).some((p) => p.in === 'header' && p.name === 'idempotency-key'))
  t.same(without.map((op) => op.operationId), [], 'every client POST documents the header')
  const keyed = posts.filter((op) => !exempt.has(op.operationId))
  t.same(keyed.filter((op) => op.responses['409']?.headers?.['Retry-After'] === undefined).map((op) => op.operationId), [],
    'and its 409 (key reused, key in use with Retry-After)')
  t.ok(posts.length >= 12, `${posts.length} POST operations looked at`)
})
