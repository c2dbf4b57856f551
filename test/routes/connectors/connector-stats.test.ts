import t, { type Test } from 'tap'
import { buildTestApp, merchantWithKey, ADMIN_AUTH, type MerchantCredentials } from '../../helpers/app'
import type { ConnectorFactory } from '../../../src/gateway/connectors'
import { GatewayError, type ChargeResult, type PaymentGateway } from '../../../src/gateway/types'
import type { App } from '../../../app/app'

/*
 * Issue 44 (Dashboard II): GET /merchants/{id}/connectors/stats. Every charge call is timed by the app's clock; the
 * fake PSP moves that clock forward by a scripted duration before it answers, so latencies are exact.
 */

type Step = { ms: number, result: ChargeResult } | { ms: number, error: GatewayError }

const NOW = Date.parse('2026-11-20T10:00:00.000Z')

async function setup (t: Test) {
  const clock = { now: NOW }
  const scripts = new Map<string, Step[]>()
  const factory: ConnectorFactory = (_type, _credentials, connectorId) => ({
    verify: async () => {},
    gateway: {
      charge: async () => {
        const step = scripts.get(connectorId ?? '')?.shift()
        if (step === undefined) throw new Error(`no scripted answer for ${String(connectorId)}`)
        clock.now += step.ms
        if ('error' in step) throw step.error
        return step.result
      }
    } as unknown as PaymentGateway
  })
  const app = await buildTestApp(t, {}, { connectorFactory: factory, clock: () => clock.now })
  const addAccount = async (merchant: MerchantCredentials, priority: number, description?: string): Promise<string> => {
    const res = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: merchant.auth, payload: { type: 'simulated', priority, ...(description === undefined ? {} : { description }) } })
    t.equal(res.statusCode, 201)
    const id = res.json().id as string
    scripts.set(id, [])
    return id
  }
  const script = (connectorId: string, ...steps: Step[]): void => { scripts.get(connectorId)?.push(...steps) }
  const pay = async (merchant: MerchantCredentials): Promise<number> => {
    const res = await app.inject({ method: 'POST', url: '/api/payments', headers: merchant.auth, payload: { amount: 10, currency: 'EUR' } })
    return res.statusCode
  }
  return { app, clock, addAccount, script, pay }
}

const charged = (ms: number): Step => ({ ms, result: { outcome: 'succeeded', chargeId: `ch_${ms}` } })
const declined = (ms: number): Step => ({ ms, result: { outcome: 'declined', chargeId: `ch_d${ms}`, declineCode: 'card_declined' } })
const refused = (ms: number): Step => ({ ms, error: new GatewayError('not_processed', 'connect ECONNREFUSED', 'connection_refused') })
const timedOut = (ms: number): Step => ({ ms, error: new GatewayError('timeout', 'no answer in time', 'timeout') })

async function stats (app: App, merchant: MerchantCredentials, query = '') {
  return await app.inject({ method: 'GET', url: `/merchants/${merchant.merchantId}/connectors/stats${query}`, headers: merchant.auth })
}

t.test('per account: calls by outcome, success rate over finished calls, nearest-rank p50/p95 of answered calls; failover counted on both', async (t) => {
  const s = await setup(t)
  const merchant = await merchantWithKey(s.app)
  const primary = await s.addAccount(merchant, 0, 'Primary')
  const backup = await s.addAccount(merchant, 1)
  const idle = await s.addAccount(merchant, 2, 'Never used')
  s.script(primary, charged(100), charged(300), declined(200), refused(5), timedOut(30_000))
  s.script(backup, charged(50))
  t.same([await s.pay(merchant), await s.pay(merchant), await s.pay(merchant)], [201, 201, 402], 'two charged, one declined')
  t.equal(await s.pay(merchant), 201, 'refused by the primary, charged by the backup')
  t.equal(await s.pay(merchant), 503, 'the primary timed out: pending, pinned')

  const res = await stats(s.app, merchant)
  t.equal(res.statusCode, 200, res.body)
  const body = res.json()
  t.equal(body.createdLt, new Date(s.clock.now).toISOString(), 'default end: now, by the clock')
  t.equal(body.createdGte, new Date(s.clock.now - 30 * 86_400_000).toISOString(), 'default start: 30 days before')
  t.same(body.data, [
    {
      id: primary,
      type: 'simulated',
      description: 'Primary',
      deleted: false,
      attempts: 5,
      succeeded: 2,
      authorized: 0,
      requiresAction: 0,
      declined: 1,
      notProcessed: 1,
      unknown: 1,
      successRate: 0.4,
      latency: { p50Ms: 200, p95Ms: 300 }
    },
    {
      id: backup,
      type: 'simulated',
      deleted: false,
      attempts: 1,
      succeeded: 1,
      authorized: 0,
      requiresAction: 0,
      declined: 0,
      notProcessed: 0,
      unknown: 0,
      successRate: 1,
      latency: { p50Ms: 50, p95Ms: 50 }
    },
    {
      id: idle,
      type: 'simulated',
      description: 'Never used',
      deleted: false,
      attempts: 0,
      succeeded: 0,
      authorized: 0,
      requiresAction: 0,
      declined: 0,
      notProcessed: 0,
      unknown: 0,
      successRate: null,
      latency: { p50Ms: null, p95Ms: null }
    }
  ], 'routing order, zeros for an account without calls')

  const admin = await s.app.inject({ method: 'GET', url: `/merchants/${merchant.merchantId}/connectors/stats`, headers: ADMIN_AUTH })
  t.same(admin.json(), body, 'the admin key reads the same figures')
})

t.test('nearest rank over many calls: p50 and p95 of 20 answered calls; unanswered calls have no latency', async (t) => {
  const s = await setup(t)
  const merchant = await merchantWithKey(s.app)
  const account = await s.addAccount(merchant, 0)
  // 1..20 × 10 ms, in a scrambled order: p50 is the 10th smallest (100), p95 the 19th (190).
  const durations = [130, 20, 200, 70, 110, 180, 10, 160, 40, 90, 150, 30, 190, 60, 120, 170, 50, 140, 80, 100]
  s.script(account, ...durations.map((ms) => charged(ms)), refused(1))
  for (let i = 0; i < durations.length; i++) t.equal(await s.pay(merchant), 201)
  t.equal(await s.pay(merchant), 503, 'refused by the only account: nothing charged, pending')
  const [entry] = (await stats(s.app, merchant)).json().data
  t.match(entry, { attempts: 21, succeeded: 20, notProcessed: 1, successRate: 20 / 21, latency: { p50Ms: 100, p95Ms: 190 } })
})

t.test('range: calls are counted by their start time, createdGte included and createdLt excluded; a deleted account keeps its calls', async (t) => {
  const s = await setup(t)
  const merchant = await merchantWithKey(s.app)
  const account = await s.addAccount(merchant, 0)
  s.script(account, declined(40), charged(60))
  s.clock.now = Date.parse('2026-10-01T12:00:00.000Z')
  t.equal(await s.pay(merchant), 402)
  s.clock.now = NOW
  t.equal(await s.pay(merchant), 201)

  const recent = (await stats(s.app, merchant)).json().data[0]
  t.match(recent, { attempts: 1, succeeded: 1, declined: 0, successRate: 1 }, 'the default 30 days leave out October\'s call')
  const both = (await stats(s.app, merchant, '?createdGte=2026-10-01T12:00:00.000Z&createdLt=2026-12-01T00:00:00Z')).json()
  t.equal(both.createdGte, '2026-10-01T12:00:00.000Z')
  t.equal(both.createdLt, '2026-12-01T00:00:00.000Z', 'the range as read, normalized')
  t.match(both.data[0], { attempts: 2, succeeded: 1, declined: 1, successRate: 0.5, latency: { p50Ms: 40, p95Ms: 60 } })
  const october = (await stats(s.app, merchant, '?createdGte=2026-09-01T00:00:00Z&createdLt=2026-10-01T12:00:00.000Z')).json()
  t.match(october.data[0], { attempts: 0, successRate: null }, 'createdLt is excluded')

  t.equal((await s.app.inject({ method: 'DELETE', url: `/merchants/${merchant.merchantId}/connectors/${account}`, headers: merchant.auth })).statusCode, 204)
  const after = (await stats(s.app, merchant)).json().data
  t.same(after.map((entry: { id: string, deleted: boolean, attempts: number }) => [entry.id, entry.deleted, entry.attempts]), [[account, true, 1]], 'deleted since: listed with its calls')
})

t.test('object-level authorization: another merchant\'s accounts never appear, and its id is 404 with the merchant\'s key', async (t) => {
  const s = await setup(t)
  const mine = await merchantWithKey(s.app)
  const theirs = await merchantWithKey(s.app)
  const myAccount = await s.addAccount(mine, 0)
  const theirAccount = await s.addAccount(theirs, 0)
  s.script(myAccount, charged(10))
  s.script(theirAccount, declined(20), declined(30))
  t.equal(await s.pay(mine), 201)
  t.equal(await s.pay(theirs), 402)
  t.equal(await s.pay(theirs), 402)

  const own = (await stats(s.app, mine)).json().data
  t.same(own.map((entry: { id: string }) => entry.id), [myAccount], 'only my account')
  t.match(own[0], { attempts: 1, succeeded: 1, declined: 0 })
  const other = await s.app.inject({ method: 'GET', url: `/merchants/${theirs.merchantId}/connectors/stats`, headers: mine.auth })
  t.equal(other.statusCode, 404)
  t.match(other.json(), { status: 404 })
  t.match((await stats(s.app, theirs)).json().data, [{ id: theirAccount, attempts: 2, declined: 2, successRate: 0 }])
})

t.test('a merchant without accounts: the default gateway\'s calls are listed with id null', async (t) => {
  const s = await setup(t)
  const merchant = await merchantWithKey(s.app)
  t.equal(await s.pay(merchant), 201, 'charged by the service\'s default (simulated) gateway')
  s.clock.now += 1 // the call started at the clock's instant, and the default range ends before now
  const { data } = (await stats(s.app, merchant)).json()
  t.match(data, [{ id: null, type: 'simulated', deleted: false, attempts: 1, succeeded: 1, successRate: 1 }])
  t.notOk('description' in data[0])
})

t.test('a bad range is 400 in the area\'s problem shape, naming the parameter', async (t) => {
  const s = await setup(t)
  const merchant = await merchantWithKey(s.app)
  const cases: Array<[string, string]> = [
    ['?createdGte=2026-11-02T00:00:00Z&createdLt=2026-11-01T00:00:00Z', 'createdGte'],
    ['?createdGte=2026-11-01T00:00:00Z&createdLt=2026-11-01T00:00:00Z', 'createdGte'],
    ['?createdGte=2024-01-01T00:00:00Z&createdLt=2026-11-01T00:00:00Z', 'createdGte'],
    ['?createdGte=yesterday', 'createdGte'],
    ['?createdLt=2026-13-01T00:00:00Z', 'createdLt']
  ]
  for (const [query, field] of cases) {
    const res = await stats(s.app, merchant, query)
    t.equal(res.statusCode, 400, query)
    t.match(res.headers['content-type'], /^application\/problem\+json/)
    t.match(res.json(), { status: 400, errors: { [field]: [String] } }, query)
  }
  const unknown = await stats(s.app, merchant, '?from=2026-11-01')
  t.equal(unknown.statusCode, 400, 'an unknown parameter')
})
