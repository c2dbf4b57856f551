import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { request } from 'node:http'
import configPlugin from '../../plugins/config'
import databasePlugin from '../../plugins/database'
import metricsPlugin, { instrumentGateway, UNMATCHED_ROUTE } from '../../plugins/metrics'
import { openDatabase } from '../../src/store'
import type { Database } from '../../src/store/types'
import { GatewayError } from '../../src/gateway/types'
import { spyGateway } from '../helpers/gateway'
import { buildTestApp, testConfig } from '../helpers/app'
import { ensurePostgres, freshSchema } from '../helpers/postgres'

/** The value of one sample in Prometheus text, or undefined when the series is absent. */
export function sample (text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null || match[1] !== name) continue
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]))
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3])
  }
  return undefined
}

async function bareApp (t: Test, env: Record<string, string>, database?: Database) {
  const app = Fastify()
  const db = database ?? await openDatabase(testConfig())
  await app.register(configPlugin, { config: testConfig(env) })
  await app.register(databasePlugin, { database: db })
  await app.register(metricsPlugin)
  app.get('/items/:id', async (request) => ({ id: (request.params as { id: string }).id }))
  app.get('/fail', async () => { throw new Error('boom') })
  await app.ready()
  t.teardown(async () => { await app.close() })
  return app
}

async function scrape (app: Awaited<ReturnType<typeof bareApp>>): Promise<string> {
  const server = app.metrics.server
  if (server === undefined) throw new Error('metrics are disabled')
  const res = await server.inject('/metrics')
  if (res.statusCode !== 200) throw new Error(`GET /metrics answered ${res.statusCode}`)
  return res.body
}

t.test('requests are counted and timed per route pattern and status, never per raw URL', async (t) => {
  const app = await bareApp(t, { METRICS_PORT: '0' })
  for (const id of ['1', '2', 'a-very-long-id-that-must-not-become-a-label']) await app.inject(`/items/${id}`)
  await app.inject('/fail')
  await app.inject('/nothing/here/123')
  await app.inject({ method: 'DELETE', url: '/nothing/else' })

  const res = await app.metrics.server?.inject('/metrics')
  t.equal(res?.statusCode, 200)
  t.match(res?.headers['content-type'], /^text\/plain; version=0\.0\.4/, 'Prometheus text format')
  const text = res?.body ?? ''
  t.equal(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/items/:id', status_code: '200' }), 3)
  t.equal(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/fail', status_code: '500' }), 1)
  t.equal(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: UNMATCHED_ROUTE, status_code: '404' }), 1)
  t.equal(sample(text, 'http_request_duration_seconds_count', { method: 'DELETE', route: UNMATCHED_ROUTE, status_code: '404' }), 1)
  t.equal(sample(text, 'http_request_duration_seconds_bucket', { method: 'GET', route: '/items/:id', status_code: '200', le: '+Inf' }), 3)
  t.ok((sample(text, 'http_request_duration_seconds_sum', { method: 'GET', route: '/items/:id', status_code: '200' }) ?? -1) > 0, 'latency is recorded')
  t.notMatch(text, /very-long-id|\/items\/1|\/nothing/, 'no raw URL or id becomes a label')
  t.ok(sample(text, 'process_cpu_user_seconds_total') !== undefined, 'process metrics')
  t.ok(sample(text, 'nodejs_eventloop_lag_seconds') !== undefined, 'event loop metrics')
  t.equal(sample(text, 'payments_pending'), 0, 'pending payments, read from the store on scrape')
  t.equal(sample(text, 'sqlite_group_commit_writes_count'), 0, 'SQLite group commits are observed (none yet)')
  t.equal(sample(text, 'database_pool_connections'), undefined, 'no pool on SQLite')

  t.equal((await app.metrics.server?.inject('/other'))?.statusCode, 404, 'the metrics listener serves only /metrics')
})

t.test('each app has its own registry: apps built in one process do not share or collide', async (t) => {
  const first = await bareApp(t, { METRICS_PORT: '0' })
  const second = await bareApp(t, { METRICS_PORT: '0' })
  await first.inject('/items/1')
  await first.inject('/items/2')
  await second.inject('/items/3')
  t.equal(sample(await scrape(first), 'http_request_duration_seconds_count', { route: '/items/:id' }), 2)
  t.equal(sample(await scrape(second), 'http_request_duration_seconds_count', { route: '/items/:id' }), 1)
})

t.test('without METRICS_PORT nothing is timed and there is no listener', async (t) => {
  const app = await bareApp(t, {})
  t.equal(app.metrics.enabled, false)
  t.equal(app.metrics.server, undefined)
  await app.inject('/items/1')
  const text = await app.metrics.registry.metrics()
  t.equal(sample(text, 'http_request_duration_seconds_count', { route: '/items/:id' }), undefined, 'no per-request work')
  t.equal(sample(text, 'process_cpu_user_seconds_total'), undefined, 'no process collectors')
  await t.rejects(app.metrics.listen(), /METRICS_PORT is not set/)
})

t.test('the gateway wrapper times every charge and counts outcomes and failures by kind', async (t) => {
  const app = await bareApp(t, { METRICS_PORT: '0' })
  const outcomes = ['succeeded', 'declined', 'timeout', 'unavailable', 'bug'] as const
  const gateway = instrumentGateway(spyGateway((request, n) => {
    const outcome = outcomes[n - 1]
    if (outcome === undefined) throw new Error(`charge ${n}: more charges than outcomes`)
    if (outcome === 'succeeded') return { outcome, chargeId: 'ch_1' }
    if (outcome === 'declined') return { outcome, chargeId: 'ch_2', declineCode: 'card_declined' }
    if (outcome === 'bug') throw new TypeError('not a gateway error')
    throw new GatewayError(outcome, request.idempotencyKey)
  }), app.metrics)
  const charge = { idempotencyKey: 'k', paymentId: 'p', amountMinor: 100, amount: '1.00', currency: 'USD' }
  t.match(await gateway.charge(charge), { outcome: 'succeeded' }, 'results pass through')
  t.match(await gateway.charge(charge), { outcome: 'declined' })
  await t.rejects(gateway.charge(charge), GatewayError, 'errors pass through')
  await t.rejects(gateway.charge(charge), GatewayError)
  await t.rejects(gateway.charge(charge), TypeError)

  const text = await scrape(app)
  for (const result of ['succeeded', 'declined', 'timeout', 'unavailable', 'error']) {
    t.equal(sample(text, 'gateway_request_duration_seconds_count', { operation: 'charge', result }), 1, `duration of a ${result} call`)
  }
  t.equal(sample(text, 'gateway_failures_total', { operation: 'charge', kind: 'timeout' }), 1)
  t.equal(sample(text, 'gateway_failures_total', { operation: 'charge', kind: 'unavailable' }), 1)
  t.equal(sample(text, 'gateway_failures_total', { operation: 'charge', kind: 'error' }), 1)
  t.equal(sample(text, 'payment_settlements_total', { outcome: 'succeeded' }), 1)
  t.equal(sample(text, 'payment_settlements_total', { outcome: 'declined' }), 1)
  t.equal(sample(text, 'payment_settlements_total', { outcome: 'pending' }), 3)
})

t.test('pool connections come from the store; a database that does not answer gives NaN pending, not a failed scrape', async (t) => {
  const real = await openDatabase(testConfig())
  t.teardown(() => real.close())
  const database: Database = {
    ...real,
    payments: { ...real.payments, countPending: async () => { throw new Error('connection refused') } },
    instrumentation: { pool: () => ({ max: 10, total: 4, idle: 3, waiting: 2 }) }
  }
  const app = await bareApp(t, { METRICS_PORT: '0' }, database)
  const text = await scrape(app)
  t.ok(Number.isNaN(sample(text, 'payments_pending')), 'NaN when unknown')
  t.equal(sample(text, 'database_pool_connections', { state: 'max' }), 10)
  t.equal(sample(text, 'database_pool_connections', { state: 'open' }), 4)
  t.equal(sample(text, 'database_pool_connections', { state: 'idle' }), 3)
  t.equal(sample(text, 'database_pool_connections', { state: 'waiting' }), 2)
})

t.test('the listener serves /metrics over HTTP and closes with the app', async (t) => {
  const app = await bareApp(t, { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' })
  const address = await app.metrics.listen()
  const get = async () => await new Promise<{ status: number, body: string }>((resolve, reject) => {
    request(`${address}/metrics`, { agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
    }).on('error', reject).end()
  })
  const reply = await get()
  t.equal(reply.status, 200)
  t.match(reply.body, /# TYPE http_request_duration_seconds histogram/)
  await app.close()
  await t.rejects(get(), { code: 'ECONNREFUSED' }, 'closed with the app')
})

t.test('the whole service: payments, idempotency outcomes and group commits are measured; the API port has no /metrics', async (t) => {
  const gateway = spyGateway((request, n) => {
    if (n === 2) return { outcome: 'declined', chargeId: 'ch_d', declineCode: 'card_declined' }
    if (n === 3) throw new GatewayError('unavailable', 'down')
    return { outcome: 'succeeded', chargeId: `ch_${request.idempotencyKey}` }
  })
  const app = await buildTestApp(t, { METRICS_PORT: '0' }, { gateway })
  const pay = async (key: string, amount: number) => await app.inject({
    method: 'POST', url: '/api/payments', headers: { 'idempotency-key': key }, payload: { amount, currency: 'USD' }
  })
  t.equal((await pay('k1', 10)).statusCode, 201, 'new key, succeeded')
  t.equal((await pay('k1', 10)).statusCode, 201, 'replay')
  t.equal((await pay('k1', 11)).statusCode, 409, 'mismatch')
  t.equal((await pay('k2', 12)).statusCode, 402, 'declined')
  t.equal((await pay('k3', 13)).statusCode, 503, 'gateway unavailable: pending')
  t.equal((await pay('k3', 13)).statusCode, 201, 'resumed and settled')
  t.equal((await app.inject('/metrics')).statusCode, 404, 'never served on the API port')

  const text = await (app.metrics.server as NonNullable<typeof app.metrics.server>).inject('/metrics').then((res) => res.body)
  t.equal(sample(text, 'idempotency_requests_total', { outcome: 'new' }), 3)
  t.equal(sample(text, 'idempotency_requests_total', { outcome: 'replay' }), 1)
  t.equal(sample(text, 'idempotency_requests_total', { outcome: 'mismatch' }), 1)
  t.equal(sample(text, 'idempotency_requests_total', { outcome: 'resumed' }), 1)
  t.equal(sample(text, 'payment_settlements_total', { outcome: 'succeeded' }), 2)
  t.equal(sample(text, 'payment_settlements_total', { outcome: 'declined' }), 1)
  t.equal(sample(text, 'payment_settlements_total', { outcome: 'pending' }), 1)
  t.equal(sample(text, 'gateway_failures_total', { operation: 'charge', kind: 'unavailable' }), 1)
  t.equal(sample(text, 'payments_pending'), 0, 'the resumed payment is no longer pending')
  t.equal(sample(text, 'http_request_duration_seconds_count', { method: 'POST', route: '/api/payments', status_code: '201' }), 3)
  t.equal(sample(text, 'http_request_duration_seconds_count', { method: 'POST', route: '/api/payments', status_code: '409' }), 1)
  t.equal(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: UNMATCHED_ROUTE, status_code: '404' }), 1)
  t.ok((sample(text, 'sqlite_group_commit_writes_count') ?? 0) > 0, 'group commits observed')
})

t.test('PostgreSQL: the pool is reported as it is', async (t) => {
  if (!await ensurePostgres(t)) return
  const schema = await freshSchema(t)
  const app = await buildTestApp(t, { METRICS_PORT: '0', DATABASE_URL: schema.url, DATABASE_POOL_SIZE: '3' })
  t.equal((await app.inject('/health/ready')).statusCode, 200)
  const text = await scrape(app)
  t.equal(sample(text, 'database_pool_connections', { state: 'max' }), 3)
  t.ok((sample(text, 'database_pool_connections', { state: 'open' }) ?? 0) >= 1, 'an open connection')
  // The scrape's own pending-payments query may be queued for a connection at that moment.
  t.ok(Number.isInteger(sample(text, 'database_pool_connections', { state: 'waiting' })), 'requests waiting for a connection')
  t.equal(sample(text, 'payments_pending'), 0)
  t.equal(sample(text, 'sqlite_group_commit_writes_count'), undefined, 'no group commit on PostgreSQL')
})
