import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import { buildTestApp, merchantWithKey, ADMIN_AUTH } from '../../helpers/app'
import { CredentialsRefusedError, type ConnectorFactory, type ConnectorType } from '../../../src/gateway/connectors'
import { GatewayError, type PaymentGateway } from '../../../src/gateway/types'
import { DecryptionError } from '../../../src/secrets/encryption'
import { itemAt } from '../../helpers/items'

const SECRET_KEY = 'sk_test_51Hx00secretPART00004242'
const OTHER_KEY = 'rk_live_51Hx00secretPART00009999'

type Verdict = 'ok' | 'refused' | 'unreachable'

/** A connector factory whose verify() answers `verdict.next`, recording what it was asked (type, credentials, id). */
function fakeFactory () {
  const state = { next: 'ok' as Verdict, calls: [] as Array<{ type: ConnectorType, credentials: Record<string, string>, id: string | null }> }
  const factory: ConnectorFactory = (type, credentials, connectorId) => ({
    gateway: {} as PaymentGateway,
    verify: async () => {
      state.calls.push({ type, credentials: { ...credentials }, id: connectorId })
      if (state.next === 'refused') throw new CredentialsRefusedError(`Invalid API Key provided: ${credentials.secretKey ?? ''}`)
      if (state.next === 'unreachable') throw new GatewayError('not_processed', 'connect ECONNREFUSED', 'connection_refused')
    }
  })
  return { factory, state }
}

async function setup (t: Test) {
  const { factory, state } = fakeFactory()
  const lines: string[] = []
  const logger = { level: 'trace', stream: new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } }) }
  const app = await buildTestApp(t, {}, { connectorFactory: factory, logger })
  const merchant = await merchantWithKey(app)
  const url = `/merchants/${merchant.merchantId}/connectors`
  return { app, merchant, url, state, lines }
}

const stripeBody = (overrides: Record<string, unknown> = {}) => ({ type: 'stripe', credentials: { secretKey: SECRET_KEY }, ...overrides })

t.test('POST checks the credentials, answers 201 with Location and a hint, never the credentials; stored sealed under the account id', async (t) => {
  const { app, merchant, url, state, lines } = await setup(t)
  const res = await app.inject({ method: 'POST', url, headers: merchant.auth, payload: stripeBody({ description: 'EU account', priority: 5 }) })
  t.equal(res.statusCode, 201)
  const body = res.json()
  t.same(Object.keys(body).sort(), ['createdAt', 'credentialsHint', 'description', 'id', 'priority', 'status', 'type', 'updatedAt'])
  t.match(body, { type: 'stripe', priority: 5, status: 'enabled', description: 'EU account', credentialsHint: '…4242' })
  t.equal(res.headers.location, `${url}/${String(body.id)}`)
  t.notOk(res.body.includes('secretPART'), 'the answer never carries the key')
  t.same(state.calls, [{ type: 'stripe', credentials: { secretKey: SECRET_KEY }, id: body.id }], 'verified once, with the new account id')

  const stored = await app.db.connectors.get(body.id)
  t.ok(stored !== undefined)
  const sealed = stored?.credentials as string
  t.notOk(sealed.includes('secretPART'), 'not stored in clear')
  t.same(JSON.parse(app.secretBox.open(sealed, body.id)), { secretKey: SECRET_KEY }, 'opens with the account id as associated data')
  t.throws(() => app.secretBox.open(sealed, merchant.merchantId), DecryptionError, 'and with no other record id')
  t.notOk(lines.join('').includes('secretPART'), 'no log line carries the key')

  const routed = await app.connectors.candidatesFor(merchant.merchantId)
  t.same(routed.map((c) => ({ id: c.id, type: c.type })), [{ id: body.id, type: 'stripe' }], 'payments are routed to it')
})

t.test('simulated takes no credentials and shows no hint; a stripe account without a valid key is 400 with field errors', async (t) => {
  const { app, url, state } = await setup(t)
  const simulated = await app.inject({ method: 'POST', url, payload: { type: 'simulated' } })
  t.equal(simulated.statusCode, 201)
  t.notOk('credentialsHint' in simulated.json())
  t.equal((await app.inject({ method: 'POST', url, payload: { type: 'simulated', credentials: {} } })).statusCode, 201)

  const extra = await app.inject({ method: 'POST', url, payload: { type: 'simulated', credentials: { secretKey: SECRET_KEY } } })
  t.equal(extra.statusCode, 400)
  t.ok(extra.json().errors.credentials)
  const missing = await app.inject({ method: 'POST', url, payload: { type: 'stripe' } })
  t.equal(missing.statusCode, 400)
  t.ok(missing.json().errors.credentials)
  const malformed = await app.inject({ method: 'POST', url, payload: { type: 'stripe', credentials: { secretKey: 'pk_test_12345678', webhookSecret: 'nope' } } })
  t.equal(malformed.statusCode, 400)
  t.same(Object.keys(malformed.json().errors).sort(), ['credentials.secretKey', 'credentials.webhookSecret'])
  t.notOk(malformed.body.includes('pk_test_12345678'), 'the problem never quotes the credentials')
  const unknownType = await app.inject({ method: 'POST', url, payload: { type: 'worldpay', priority: 1001 } })
  t.equal(unknownType.statusCode, 400)
  t.ok(unknownType.json().errors.type)
  t.ok(unknownType.json().errors.priority)
  t.equal(state.calls.length, 2, 'only the two valid simulated creations were verified')
})

t.test('refused credentials: 400 connector-credentials-refused, nothing stored, nothing quoted', async (t) => {
  const { app, url, state } = await setup(t)
  state.next = 'refused'
  const res = await app.inject({ method: 'POST', url, payload: stripeBody() })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { type: 'urn:problem-type:connector-credentials-refused', status: 400 })
  t.notOk(res.body.includes('secretPART'))
  t.same((await app.inject({ method: 'GET', url })).json(), { data: [] }, 'nothing stored')
})

t.test('PSP unreachable: 503 with Retry-After, nothing stored', async (t) => {
  const { app, url, state } = await setup(t)
  state.next = 'unreachable'
  const res = await app.inject({ method: 'POST', url, payload: stripeBody() })
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '5')
  t.match(res.json(), { type: 'urn:problem-type:gateway-unavailable' })
  t.notOk(res.body.includes('secretPART'))
  t.same((await app.inject({ method: 'GET', url })).json(), { data: [] })
})

t.test('another merchant\'s key is 404 on every route; the admin key may act for any merchant', async (t) => {
  const { app, merchant, url } = await setup(t)
  const other = await merchantWithKey(app)
  const created = (await app.inject({ method: 'POST', url, headers: merchant.auth, payload: stripeBody() })).json()
  for (const [method, path] of [['POST', url], ['GET', url], ['GET', `${url}/${String(created.id)}`], ['PATCH', `${url}/${String(created.id)}`], ['DELETE', `${url}/${String(created.id)}`]] as const) {
    const res = await app.inject({ method, url: path, headers: other.auth, ...(method === 'POST' || method === 'PATCH' ? { payload: method === 'POST' ? stripeBody() : { status: 'disabled' } } : {}) })
    t.equal(res.statusCode, 404, `${method} ${path}`)
  }
  const otherUrl = `/merchants/${other.merchantId}/connectors/${String(created.id)}`
  t.equal((await app.inject({ method: 'GET', url: otherUrl, headers: other.auth })).statusCode, 404, 'an account id under another merchant is 404')
  t.equal((await app.inject({ method: 'GET', url: `${url}/${String(created.id)}`, headers: ADMIN_AUTH })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: `${url}/not-a-guid` })).statusCode, 404)
})

t.test('the list is in routing order: priority, then the oldest first', async (t) => {
  const { app, url } = await setup(t)
  const ids: string[] = []
  for (const priority of [10, 0, 10, 5]) {
    ids.push((await app.inject({ method: 'POST', url, payload: { type: 'simulated', priority } })).json().id)
  }
  const listed = (await app.inject({ method: 'GET', url })).json().data.map((c: { id: string }) => c.id)
  t.same(listed, [ids[1], ids[3], ids[0], ids[2]])
})

t.test('PATCH: priority, status and description call no PSP; new credentials are verified before they are stored', async (t) => {
  const { app, merchant, url, state } = await setup(t)
  const created = (await app.inject({ method: 'POST', url, payload: stripeBody() })).json()
  const path = `${url}/${String(created.id)}`
  const calls = state.calls.length
  const changed = await app.inject({ method: 'PATCH', url: path, payload: { priority: 7, status: 'disabled', description: 'backup' } })
  t.equal(changed.statusCode, 200)
  t.match(changed.json(), { priority: 7, status: 'disabled', description: 'backup', credentialsHint: '…4242' })
  t.ok(changed.json().updatedAt > created.updatedAt)
  t.equal(state.calls.length, calls, 'no PSP call')
  t.same(await app.connectors.candidatesFor(merchant.merchantId).then((c) => c.map((x) => x.id)), [null], 'a disabled account is not routed to (the default is)')
  t.notOk('description' in (await app.inject({ method: 'PATCH', url: path, payload: { description: null } })).json(), 'null removes the description')
  t.same((await app.inject({ method: 'PATCH', url: path, payload: {} })).json().updatedAt, (await app.inject({ method: 'GET', url: path })).json().updatedAt)

  state.next = 'refused'
  const refused = await app.inject({ method: 'PATCH', url: path, payload: { credentials: { secretKey: OTHER_KEY } } })
  t.equal(refused.statusCode, 400)
  t.match(refused.json(), { type: 'urn:problem-type:connector-credentials-refused' })
  t.equal(itemAt(state.calls, state.calls.length - 1).credentials.secretKey, OTHER_KEY, 'the new key was the one checked')
  const kept = await app.db.connectors.get(created.id)
  t.same(JSON.parse(app.secretBox.open(kept?.credentials as string, created.id)), { secretKey: SECRET_KEY }, 'the old credentials are kept')

  state.next = 'unreachable'
  t.equal((await app.inject({ method: 'PATCH', url: path, payload: { credentials: { secretKey: OTHER_KEY } } })).statusCode, 503)

  state.next = 'ok'
  const wrongType = await app.inject({ method: 'PATCH', url: path, payload: { credentials: {} } })
  t.equal(wrongType.statusCode, 400)
  t.ok(wrongType.json().errors['credentials.secretKey'], 'credentials must fit the account\'s type')
  const rotated = await app.inject({ method: 'PATCH', url: path, payload: { credentials: { secretKey: OTHER_KEY, webhookSecret: 'whsec_abcdefgh1234' } } })
  t.equal(rotated.statusCode, 200)
  t.equal(rotated.json().credentialsHint, '…9999')
  t.notOk(rotated.body.includes('secretPART') || rotated.body.includes('whsec_'))
  const source = await app.connectors.gatewayOf({ id: created.id, type: 'stripe' })
  t.ok(source, 'routing builds the account with its new credentials')
  const stored = await app.db.connectors.get(created.id)
  t.same(JSON.parse(app.secretBox.open(stored?.credentials as string, created.id)), { secretKey: OTHER_KEY, webhookSecret: 'whsec_abcdefgh1234' })
})

t.test('DELETE: 204, then 404 and out of the list and routing, while its payments can still reach it by id', async (t) => {
  const { app, merchant, url, state } = await setup(t)
  const created = (await app.inject({ method: 'POST', url, payload: stripeBody() })).json()
  const path = `${url}/${String(created.id)}`
  const deleted = await app.inject({ method: 'DELETE', url: path })
  t.equal(deleted.statusCode, 204)
  t.equal(deleted.body, '')
  t.equal((await app.inject({ method: 'GET', url: path })).statusCode, 404)
  t.equal((await app.inject({ method: 'PATCH', url: path, payload: { status: 'enabled' } })).statusCode, 404)
  t.equal((await app.inject({ method: 'DELETE', url: path })).statusCode, 404)
  t.same((await app.inject({ method: 'GET', url })).json(), { data: [] })
  t.same((await app.connectors.candidatesFor(merchant.merchantId)).map((c) => c.id), [null], 'no longer routed to')
  const before = state.calls.length
  t.ok(await app.connectors.gatewayOf({ id: created.id, type: 'stripe' }), 'byId still finds it: its payments keep settling there')
  t.equal(state.calls.length, before, 'reaching it verifies nothing')
})

t.test('an unknown merchant is 404', async (t) => {
  const { app } = await setup(t)
  const res = await app.inject({ method: 'GET', url: '/merchants/019ab0c2-5d1e-7f20-8a31-b4c5d6e7f809/connectors', headers: ADMIN_AUTH })
  t.equal(res.statusCode, 404)
})
