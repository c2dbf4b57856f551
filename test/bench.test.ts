import t from 'tap'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  DEFAULT_OPTIONS, fmt, markdownTable, median, pairedDifference, pairedRatio, parseBenchOptions, parseProcStat, percentile, ratio, redactUrl,
  requestsPerCore, summarizeLatencies
} from '../bench/stats'
import { cannedPathPrefix, cannedPathSuffix, matchOrder, replayableHeaders, startBaseline, type CannedResponse } from '../bench/baseline-server'
import { mergeParts, requestsFor, runJob, splitRequest, type LoadRequest, type PartResult } from '../bench/load'
import { CAPTURE_PATH, LIST_LIMIT, REFUND_PAYMENTS, SCENARIOS, refundPath, type Seed } from '../bench/scenarios'
import { measureMetricsHook } from '../bench/metrics-cost'
import { startExpressPeer } from '../bench/express-peer'
import { routePattern, startFastifyPeer } from '../bench/fastify-peer'
import { itemAt } from './helpers/items'

t.test('percentile is nearest-rank on sorted values', async (t) => {
  const values = Float64Array.from({ length: 100 }, (_, i) => i + 1)
  t.equal(percentile(values, 50), 50)
  t.equal(percentile(values, 99), 99)
  t.equal(percentile(values, 99.9), 100)
  t.equal(percentile(values, 0), 1)
  t.equal(percentile(values, 100), 100)
  t.equal(percentile([7], 50), 7)
  t.ok(Number.isNaN(percentile([], 50)))
})

t.test('median ignores NaN and averages the middle pair', async (t) => {
  t.equal(median([3, 1, 2]), 2)
  t.equal(median([4, 1, 3, 2]), 2.5)
  t.equal(median([Number.NaN, 5]), 5)
  t.ok(Number.isNaN(median([])))
})

t.test('summarizeLatencies', async (t) => {
  const summary = summarizeLatencies([5, 1, 3, 2, 4])
  t.same(summary, { count: 5, p50: 3, p99: 5, max: 5, mean: 3 })
  const typed = summarizeLatencies(Float64Array.from([2, 1]))
  t.equal(typed.p50, 1)
  const empty = summarizeLatencies([])
  t.equal(empty.count, 0)
  t.ok(Number.isNaN(empty.p99) && Number.isNaN(empty.max) && Number.isNaN(empty.mean))
})

t.test('ratios are paired by round and robust to a bad round', async (t) => {
  t.equal(ratio(5, 10), 0.5)
  t.ok(Number.isNaN(ratio(5, 0)))
  t.equal(pairedRatio([5, 6, 1], [10, 10, 10]), 0.5)
  t.equal(pairedRatio([5, 6], [10, 10, 10]), 0.55, 'only complete pairs count')
  t.ok(Number.isNaN(pairedRatio([], [])))
})

t.test('pairedDifference is the median of per-round differences over complete pairs', async (t) => {
  t.equal(pairedDifference([62, 60, 70], [60, 59, 61]), 2)
  t.equal(pairedDifference([5, Number.NaN, 9], [4, 1, 7]), 1.5, 'a round with a missing value is left out')
  t.ok(Number.isNaN(pairedDifference([], [1])))
})

t.test('fmt and markdownTable', async (t) => {
  t.equal(fmt(1.234, 2), '1.23')
  t.equal(fmt(12.7), '13')
  t.equal(fmt(undefined), '-')
  t.equal(fmt(Number.NaN), '-')
  t.equal(fmt(Number.POSITIVE_INFINITY), '-')
  const table = markdownTable(['name', 'req/s', 'ratio'], [['a', '100', '0.50×'], ['long name', '5', '-']])
  t.equal(table, [
    '| name      | req/s | ratio |',
    '|-----------|------:|------:|',
    '| a         |   100 | 0.50× |',
    '| long name |     5 |     - |'
  ].join('\n'))
  t.equal(markdownTable(['a', 'b'], [['x']]), '| a | b |\n|---|---|\n| x |   |', 'a short row is padded; text columns stay left-aligned')
  t.equal(markdownTable(['a'], []), '| a |\n|---|')
})

t.test('parseBenchOptions: defaults, environment, flags (flags win) and errors', async (t) => {
  t.same(parseBenchOptions([], {}), DEFAULT_OPTIONS)
  const fromEnv = parseBenchOptions([], {
    BENCH_DURATION: '2.5',
    BENCH_WARMUP: '0',
    BENCH_ROUNDS: '4',
    BENCH_CONNECTIONS: '10',
    BENCH_SCENARIOS: 'get-product, post-payment,',
    BENCH_STARTS: '0',
    BENCH_NORMAL: 'off',
    BENCH_METRICS: 'no',
    BENCH_CPU_PROF: '/tmp/prof',
    DATABASE_URL: 'postgres://u:secret@db:5432/bench'
  })
  t.same(fromEnv, {
    duration: 2.5,
    warmup: 0,
    rounds: 4,
    connections: 10,
    scenarios: ['get-product', 'post-payment'],
    normal: false,
    metrics: false,
    starts: 0,
    cpuProf: '/tmp/prof',
    postgresUrl: 'postgres://u:secret@db:5432/bench'
  })
  const flags = parseBenchOptions(['--duration=1', '--rounds=2', '--no-normal', '--scenarios=get-payment'], { BENCH_DURATION: '9', BENCH_NORMAL: '1' })
  t.equal(flags.duration, 1)
  t.equal(flags.rounds, 2)
  t.equal(flags.normal, false)
  t.equal(parseBenchOptions(['--no-metrics'], {}).metrics, false)
  t.equal(parseBenchOptions([], {}).metrics, true, 'metrics on vs off is measured by default')
  t.same(flags.scenarios, ['get-payment'])
  t.equal(parseBenchOptions([], { BENCH_NORMAL: 'yes', BENCH_ROUNDS: '' }).normal, true, 'an empty variable keeps the default')
  t.equal(parseBenchOptions([], { DATABASE_URL: 'file:./data/x.db' }).postgresUrl, undefined, 'only a PostgreSQL URL adds rows')
  t.throws(() => parseBenchOptions(['--rounds=1.5'], {}), /rounds must be a positive integer/)
  t.throws(() => parseBenchOptions(['--duration=0'], {}), /duration must be a positive number/)
  t.throws(() => parseBenchOptions(['--warmup=-1'], {}), /warmup must be a non-negative number/)
  t.throws(() => parseBenchOptions(['--starts=x'], {}), /starts must be a non-negative integer/)
  t.throws(() => parseBenchOptions(['--connections=0'], {}), /connections must be a positive integer/)
  t.throws(() => parseBenchOptions(['--frobnicate=1'], {}), /unknown option --frobnicate/)
  t.throws(() => parseBenchOptions(['--rounds'], {}), /needs =value/)
  t.throws(() => parseBenchOptions(['rounds=3'], {}), /unknown argument/)
})

t.test('redactUrl hides the password only', async (t) => {
  t.equal(redactUrl('postgres://user:secret@db:5432/x'), 'postgres://user:***@db:5432/x')
  t.equal(redactUrl('postgres://db:5432/x'), 'postgres://db:5432/x')
})

t.test('parseProcStat reads the name, utime + stime and the reaped children\'s cutime + cstime, whatever the name holds', async (t) => {
  const line = '2194 (postgres) S 2192 2194 2194 0 -1 4194560 1234 0 0 0 150 25 40 2 20 0 1 0 345 229638144 3214 18446744073709551615'
  t.same(parseProcStat(line), { comm: 'postgres', cpuTicks: 175, reapedChildrenCpuTicks: 42 })
  t.same(parseProcStat('7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 0 0'), { comm: 'a (b) c', cpuTicks: 7, reapedChildrenCpuTicks: 0 })
  t.same(parseProcStat('7 (x) R 1 7 7 0 -1 0 0 0 0 0 3 4'), { comm: 'x', cpuTicks: 7, reapedChildrenCpuTicks: 0 }, 'a short line')
  t.throws(() => parseProcStat('garbage'), /not a \/proc/)
  t.throws(() => parseProcStat('1 (x) S 1'), /not a \/proc/)
})

t.test('requestsPerCore: one core\'s requests at a CPU cost per request, another process\'s share optionally added', async (t) => {
  t.equal(requestsPerCore(50), 20_000)
  t.equal(requestsPerCore(300, 200), 2_000, 'with the database server\'s CPU per request')
  t.equal(requestsPerCore(50, Number.NaN), 20_000, 'an unmeasured share is left out')
  t.ok(Number.isNaN(requestsPerCore(Number.NaN)))
  t.ok(Number.isNaN(requestsPerCore(0)))
})

const seed: Seed = {
  productId: 'p',
  putProductId: 'q',
  replayKey: 'k',
  paymentId: 'pay',
  refundPaymentIds: ['a', 'b', 'c', 'd', 'e'],
  adminAuth: { authorization: 'Bearer admin' },
  merchantAuth: { authorization: 'Bearer merchant' },
  connectorMerchantAuth: { authorization: 'Bearer connector-merchant' }
}

t.test('the refund and list scenarios: a small refund with a fresh key spread over payments; a page of ten', async (t) => {
  const refund = (SCENARIOS.find((s) => s.name === 'refund') as typeof SCENARIOS[number]).request(seed, 'run')
  t.equal(refund.method, 'POST')
  t.same(refund.paths, ['a', 'b', 'c', 'd', 'e'].map(refundPath))
  t.equal(refund.path, '/api/payments/a/refunds')
  t.equal(refund.freshKeyPrefix, 'run')
  t.same(JSON.parse(refund.body as string), { amount: 0.01 })
  t.ok(REFUND_PAYMENTS >= LIST_LIMIT, 'seeding leaves more than a page of payments')
  const list = (SCENARIOS.find((s) => s.name === 'list-payments') as typeof SCENARIOS[number]).request(seed, 'run')
  t.same(list, { method: 'GET', path: `/api/payments?limit=${LIST_LIMIT}`, headers: seed.merchantAuth })
  t.ok(SCENARIOS.filter((s) => s.reportOnly === true).every((s) => s.ratioTarget === undefined && s.peerRatioTarget === undefined), 'reported only: no target')
  t.same(SCENARIOS.map((s) => s.name), ['get-product', 'put-product', 'post-payment', 'replay-payment', 'get-payment', 'refund', 'capture', 'connector-payment', 'list-payments'])
})

t.test('the capture and connector scenarios: an authorization then its capture; a payment of the connector merchant', async (t) => {
  const capture = (SCENARIOS.find((s) => s.name === 'capture') as typeof SCENARIOS[number]).request(seed, 'run')
  t.same(JSON.parse(capture.body as string), { amount: 10.1, currency: 'USD', captureMethod: 'manual' })
  t.same(capture.followUp, { method: 'POST', path: CAPTURE_PATH, body: '{}' })
  t.equal(capture.headers.authorization, seed.merchantAuth.authorization)
  t.equal(capture.freshKeyPrefix, 'run')
  const connector = (SCENARIOS.find((s) => s.name === 'connector-payment') as typeof SCENARIOS[number]).request(seed, 'run')
  t.equal(connector.headers.authorization, seed.connectorMerchantAuth.authorization)
  t.equal(connector.path, '/api/payments')
  t.equal(connector.freshKeyPrefix, 'run')
  const payment = SCENARIOS.find((s) => s.name === 'post-payment') as typeof SCENARIOS[number]
  t.equal(payment.postgresPerCoreTarget, 1500, 'issue 29: fresh-key payments per core on PostgreSQL, database server included')
})

t.test('requestsFor: a fixed request, or fresh keys and cycled paths per request', async (t) => {
  const base: LoadRequest = { method: 'GET', path: '/x', headers: { a: '1' } }
  const plain = requestsFor(base, 'm1')
  t.equal(plain.length, 1)
  t.equal(itemAt(plain, 0).setupRequest, undefined, 'nothing varies: autocannon builds the request once')
  const varying = itemAt(requestsFor({ ...base, method: 'POST', paths: ['/p1', '/p2'], freshKeyPrefix: 'run' }, 'm1'), 0)
  const setup = varying.setupRequest as NonNullable<typeof varying.setupRequest>
  const sent = [0, 1, 2].map(() => setup({ method: 'POST', path: '/x', headers: { a: '1' } }, {}))
  t.same(sent.map((r) => r?.path), ['/p1', '/p2', '/p1'])
  t.same(sent.map((r) => r?.headers?.['idempotency-key']), ['run-m1-0', 'run-m1-1', 'run-m1-2'])
  t.equal(sent[0]?.headers?.a, '1', 'the scenario\'s headers stay')
  const pathsOnly = itemAt(requestsFor({ ...base, paths: ['/p1', '/p2'] }, 'm1'), 0)
  const onlyPaths = (pathsOnly.setupRequest as NonNullable<typeof pathsOnly.setupRequest>)({ path: '/x', headers: { a: '1' } }, {})
  t.same(onlyPaths, { path: '/p1', headers: { a: '1' } }, 'no key without a prefix')

  const pair = requestsFor({ ...base, method: 'POST', freshKeyPrefix: 'run', followUp: { method: 'POST', path: '/pay/{id}/capture', body: '{}' } }, 'm1')
  t.equal(pair.length, 2, 'the request, then its follow-up')
  const [first, second] = [itemAt(pair, 0), itemAt(pair, 1)]
  const context: Record<string, unknown> = {}
  const firstSent = (first.setupRequest as NonNullable<typeof first.setupRequest>)({ method: 'POST', path: '/x', headers: { a: '1' } }, context)
  t.equal(firstSent?.headers?.['idempotency-key'], 'run-m1-0')
  const followUpSetup = second.setupRequest as NonNullable<typeof second.setupRequest>
  const onResponse = first.onResponse as NonNullable<typeof first.onResponse>
  onResponse(201, '{"id":"pay-1"}', context)
  const secondSent = followUpSetup({ method: 'POST', path: '/pay/{id}/capture', headers: { a: '1' } }, context)
  t.equal(secondSent?.path, '/pay/pay-1/capture', 'the id of the first answer')
  t.equal(secondSent?.headers?.['idempotency-key'], 'run-m1-0-f', 'a fresh key of its own')
  t.equal(secondSent?.headers?.a, '1')
  const failed: Record<string, unknown> = { n: 1 }
  onResponse(500, 'not json', failed)
  t.equal(followUpSetup({ path: '/pay/{id}/capture' }, failed), undefined, 'no id: the follow-up is skipped')
  const unkeyed = requestsFor({ ...base, followUp: { method: 'GET', path: '/y/{id}' } }, 'm1')
  const unkeyedContext: Record<string, unknown> = {}
  itemAt(unkeyed, 0).setupRequest?.({ path: '/x' }, unkeyedContext)
  itemAt(unkeyed, 0).onResponse?.(200, '{"id":"z"}', unkeyedContext)
  t.same(itemAt(unkeyed, 1).setupRequest?.({ path: '/y/{id}', headers: { a: '1' } }, unkeyedContext), { path: '/y/z', headers: { a: '1' } }, 'no key without a prefix')
})

t.test('splitRequest: connections divided, keys and paths disjoint between instances', async (t) => {
  const request: LoadRequest = { method: 'POST', path: '/p0', paths: ['/p0', '/p1', '/p2', '/p3', '/p4'], headers: {}, freshKeyPrefix: 'run' }
  t.same(splitRequest(request, 50, 0, 1), { request, connections: 50 }, 'one instance: the job as it is')
  const first = splitRequest(request, 51, 0, 2)
  const second = splitRequest(request, 51, 1, 2)
  t.equal(first.connections + second.connections, 51)
  t.same([first.connections, second.connections], [26, 25])
  t.same(first.request.paths, ['/p0', '/p2', '/p4'])
  t.same(second.request.paths, ['/p1', '/p3'])
  t.equal(second.request.path, '/p1')
  t.equal(first.request.freshKeyPrefix, 'run-i0')
  t.equal(second.request.freshKeyPrefix, 'run-i1')
  t.equal(splitRequest(request, 1, 1, 2).connections, 1, 'every instance gets a connection')
  const fixed = splitRequest({ method: 'GET', path: '/x', headers: {} }, 10, 1, 2).request
  t.same(fixed, { method: 'GET', path: '/x', headers: {} }, 'a fixed request stays as it is')
  t.same(splitRequest({ ...request, paths: ['/only'] }, 10, 1, 2).request.paths, ['/only'], 'fewer paths than instances: all of them')
})

t.test('mergeParts sums counts and req/s and pools latencies', async (t) => {
  const part = (ok: number, samples: number[], duration: number, codes: Record<string, number>, non2xx = 0): PartResult =>
    ({ ok, samples, duration, non2xx, errors: 1, timeouts: 0, statusCodes: codes })
  const merged = mergeParts(7, [part(100, [1, 2, 3], 2, { 201: 100 }), part(50, [4, 5], 2.5, { 201: 50, 409: 2 }, 2)])
  t.equal(merged.id, 7)
  t.equal(merged.rps, 70)
  t.equal(merged.responses, 150)
  t.equal(merged.non2xx, 2)
  t.equal(merged.errors, 2)
  t.same(merged.statusCodes, { 201: 150, 409: 2 })
  t.equal(merged.seconds, 2.5)
  t.same([merged.latency.count, merged.latency.p50, merged.latency.max], [5, 3, 5])
  const single = mergeParts(1, [part(10, [1], 0, {})])
  t.equal(single.rps, 0, 'a run that lasted nothing adds no rate')
})

t.test('runJob splits a job between two URLs and merges what both answered', async (t) => {
  const body = '{"ok":true}'
  const canned = (name: string): CannedResponse => ({
    scenario: name, method: 'POST', pathPrefix: '/api/payments/', status: 201, headers: [['x-instance', name], ['content-length', String(body.length)]], body: Buffer.from(body).toString('base64')
  })
  const servers = await Promise.all([startBaseline([canned('one')]), startBaseline([canned('two')])])
  t.teardown(() => { for (const server of servers) { server.close(); server.closeAllConnections() } })
  const seen = servers.map((server) => {
    const urls = new Set<string>()
    server.on('request', (req: { url?: string }) => { urls.add(req.url ?? '') })
    return urls
  })
  const urls = servers.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  const request: LoadRequest = { method: 'POST', path: '/api/payments/a/refunds', paths: ['/api/payments/a/refunds', '/api/payments/b/refunds'], headers: {}, body: '{}', freshKeyPrefix: 'run' }
  const split = await runJob({ id: 3, urls, request, connections: 4, warmupSeconds: 0, durationSeconds: 0.3 })
  t.equal(split.id, 3)
  t.ok(split.responses > 0, 'both instances answered')
  t.equal(split.statusCodes['201'], split.responses)
  t.equal(split.non2xx + split.errors + split.timeouts, 0)
  t.equal(split.latency.count, split.responses, 'every answer\'s latency is pooled')
  t.ok(split.rps > 0)
  t.same(seen.map((paths) => [...paths]), [['/api/payments/a/refunds'], ['/api/payments/b/refunds']], 'each instance got load, on its own share of the paths')
  const single = await runJob({ id: 4, urls: urls.slice(0, 1), request: { method: 'GET', path: '/x', headers: {} }, connections: 2, warmupSeconds: 0.1, durationSeconds: 0.2 })
  t.ok(single.non2xx > 0 && single.responses === 0, 'a 404 counts as non-2xx, not as an answer')
})

t.test('replayableHeaders drops what node:http writes itself', async (t) => {
  t.same(replayableHeaders(['X-A', '1', 'Date', 'now', 'Connection', 'keep-alive', 'Keep-Alive', 'timeout=5', 'content-length', '2']),
    [['X-A', '1'], ['content-length', '2']])
})

async function call (port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string):
Promise<{ status: number, headers: Record<string, string | string[] | undefined>, body: string }> {
  return await new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', method, path, headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { text += chunk })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }) })
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('the baseline answers each scenario with the canned bytes, after reading the body', async (t) => {
  const canned = (scenario: string, method: string, pathPrefix: string, status: number, body: string, idempotencyKey?: string): CannedResponse => ({
    scenario,
    method,
    pathPrefix,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    status,
    headers: [['x-scenario', scenario], ['content-type', 'application/json; charset=utf-8'], ['content-length', String(Buffer.byteLength(body))]],
    body: Buffer.from(body).toString('base64')
  })
  const server = await startBaseline([
    canned('replay', 'POST', '/api/payments', 201, '{"replayed":true}', 'k1'),
    canned('fresh', 'POST', '/api/payments', 201, '{"fresh":true}'),
    canned('get', 'GET', '/products/', 200, '{"id":"p"}')
  ])
  t.teardown(() => { server.close() })
  const { port } = server.address() as AddressInfo
  const get = await call(port, 'GET', '/products/p')
  t.equal(get.status, 200)
  t.equal(get.headers['x-scenario'], 'get')
  t.equal(get.body, '{"id":"p"}')
  const replay = await call(port, 'POST', '/api/payments', { 'idempotency-key': 'k1', 'content-type': 'application/json' }, '{"amount":1}')
  t.equal(replay.headers['x-scenario'], 'replay')
  const fresh = await call(port, 'POST', '/api/payments', { 'idempotency-key': 'k2', 'content-type': 'application/json' }, '{"amount":1}')
  t.equal(fresh.status, 201)
  t.equal(fresh.body, '{"fresh":true}')
  const missing = await call(port, 'DELETE', '/products/p')
  t.equal(missing.status, 404)
  t.same(JSON.parse(missing.body), { error: 'route not found', code: 'NOT_FOUND' })
})

t.test('the baseline matches the most specific answer: a key first, then the longest path prefix', async (t) => {
  t.equal(cannedPathPrefix('/products/bench-product'), '/products/')
  t.equal(cannedPathPrefix('/api/payments/019a/refunds'), '/api/payments/')
  t.equal(cannedPathPrefix('/api/payments/019a'), '/api/payments/')
  t.equal(cannedPathPrefix('/api/payments'), '/api/payments')
  t.equal(cannedPathPrefix('/api/payments?limit=10'), '/api/payments?limit=10')
  t.equal(cannedPathSuffix('/api/payments/019a/capture'), '/capture')
  t.equal(cannedPathSuffix('/api/payments/019a/refunds'), undefined)
  t.equal(cannedPathSuffix('/api/payments/019a'), undefined)
  const answer = (scenario: string, method: string, pathPrefix: string, idempotencyKey?: string): CannedResponse => ({
    scenario, method, pathPrefix, ...(idempotencyKey === undefined ? {} : { idempotencyKey }), status: 201, headers: [['x-scenario', scenario]], body: ''
  })
  const canned = [
    answer('fresh', 'POST', '/api/payments'),
    answer('refund', 'POST', '/api/payments/'),
    answer('replay', 'POST', '/api/payments', 'k1'),
    answer('list', 'GET', '/api/payments?limit=10'),
    answer('get', 'GET', '/api/payments/'),
    { ...answer('capture', 'POST', '/api/payments/'), pathSuffix: '/capture' }
  ]
  t.same(matchOrder(canned).map((c) => c.scenario), ['replay', 'capture', 'list', 'refund', 'get', 'fresh'])
  const server = await startBaseline(canned)
  t.teardown(() => { server.close() })
  const { port } = server.address() as AddressInfo
  const json = { 'content-type': 'application/json' }
  t.equal((await call(port, 'POST', '/api/payments/a/refunds', { ...json, 'idempotency-key': 'x' }, '{"amount":0.01}')).headers['x-scenario'], 'refund')
  t.equal((await call(port, 'POST', '/api/payments/b/refunds', json, '{"amount":0.01}')).headers['x-scenario'], 'refund', 'whichever payment')
  t.equal((await call(port, 'POST', '/api/payments', { ...json, 'idempotency-key': 'x' }, '{}')).headers['x-scenario'], 'fresh')
  t.equal((await call(port, 'POST', '/api/payments', { ...json, 'idempotency-key': 'k1' }, '{}')).headers['x-scenario'], 'replay')
  t.equal((await call(port, 'GET', '/api/payments?limit=10')).headers['x-scenario'], 'list')
  t.equal((await call(port, 'GET', '/api/payments/a')).headers['x-scenario'], 'get')
  t.equal((await call(port, 'POST', '/api/payments/a/capture', json, '{}')).headers['x-scenario'], 'capture')
})

t.test('measureMetricsHook reports the CPU the metrics hook adds per request', async (t) => {
  const cost = measureMetricsHook(2000, 3)
  t.equal(cost.samples.length, 3)
  t.ok(cost.samples.every(Number.isFinite), 'every repeat is measured')
  t.equal(cost.usPerRequest, median(cost.samples))
})

t.test('the Express peer answers the scenarios as the service does: statuses, replay by key, security and rate-limit headers', async (t) => {
  const server = await startExpressPeer()
  t.teardown(() => { server.close(); server.closeAllConnections() })
  const { port } = server.address() as AddressInfo
  const json = { 'content-type': 'application/json' }
  t.equal((await call(port, 'PUT', '/products/p', json, '{"name":"Cup","price":1.5}')).status, 200)
  const product = await call(port, 'GET', '/products/p')
  t.equal(product.status, 200)
  t.same(JSON.parse(product.body), { id: 'p', name: 'Cup', price: 1.5 })
  t.equal(product.headers['x-content-type-options'], 'nosniff', 'helmet is on')
  t.ok(product.headers.ratelimit !== undefined, 'express-rate-limit is on')
  t.equal((await call(port, 'GET', '/products/none')).status, 404)

  const merchant = await call(port, 'POST', '/merchants', json, '{"name":"Bench","email":"b@example.com"}')
  t.equal(merchant.status, 201)
  t.equal((await call(port, 'POST', '/merchants/unknown/api-keys')).status, 404)
  const key = await call(port, 'POST', `/merchants/${(JSON.parse(merchant.body) as { id: string }).id}/api-keys`)
  t.equal(key.status, 201)
  const auth = { authorization: `Bearer ${(JSON.parse(key.body) as { secret: string }).secret}` }
  t.equal((await call(port, 'POST', '/api/payments', { ...json, 'idempotency-key': 'k' }, '{"amount":10.1,"currency":"USD"}')).status, 401, 'payments need a merchant key')
  t.equal((await call(port, 'GET', '/api/payments/x', { authorization: 'Bearer wrong' })).status, 401)
  const first = await call(port, 'POST', '/api/payments', { ...json, ...auth, 'idempotency-key': 'k' }, '{"amount":10.1,"currency":"USD"}')
  t.equal(first.status, 201)
  const payment = JSON.parse(first.body) as { id: string }
  t.equal(first.headers.location, `/api/payments/${payment.id}`)
  const replay = await call(port, 'POST', '/api/payments', { ...json, ...auth, 'idempotency-key': 'k' }, '{"amount":10.1,"currency":"USD"}')
  t.equal(replay.body, first.body, 'a replayed key answers the same payment')
  const fresh = await call(port, 'POST', '/api/payments', { ...json, ...auth, 'idempotency-key': 'k2' }, '{"amount":10.1,"currency":"USD"}')
  t.not(JSON.parse(fresh.body).id, payment.id)
  t.equal((await call(port, 'POST', '/api/payments', { ...json, ...auth }, '{"amount":1,"currency":"USD"}')).status, 400, 'a key is required')
  const read = await call(port, 'GET', `/api/payments/${payment.id}`, auth)
  t.equal(read.status, 200)
  t.same(JSON.parse(read.body), JSON.parse(first.body))
  t.equal((await call(port, 'GET', '/api/payments/unknown', auth)).status, 404)

  // Refunds: pushed onto the payment, bounded by its amount, replayed by key; the list: the newest page.
  const refund = await call(port, 'POST', `/api/payments/${payment.id}/refunds`, { ...json, ...auth, 'idempotency-key': 'r1' }, '{"amount":0.01}')
  t.equal(refund.status, 201)
  const refunded = JSON.parse(refund.body) as { id: string, paymentId: string, amount: number, status: string }
  t.same([refunded.paymentId, refunded.amount, refunded.status], [payment.id, 0.01, 'succeeded'])
  t.equal(refund.headers.location, `/api/payments/${payment.id}/refunds/${refunded.id}`)
  t.equal((await call(port, 'POST', `/api/payments/${payment.id}/refunds`, { ...json, ...auth, 'idempotency-key': 'r1' }, '{"amount":0.01}')).body, refund.body,
    'a replayed refund key answers the same refund')
  t.equal((await call(port, 'POST', `/api/payments/${payment.id}/refunds`, { ...json, ...auth }, '{"amount":10.1}')).status, 409, 'not more than remains')
  const partly = JSON.parse((await call(port, 'GET', `/api/payments/${payment.id}`, auth)).body) as { status: string, amountRefunded: number }
  t.same([partly.status, partly.amountRefunded], ['partially_refunded', 0.01])
  const rest = await call(port, 'POST', `/api/payments/${payment.id}/refunds`, { ...auth })
  t.equal(rest.status, 201, 'no body: the rest')
  t.equal((JSON.parse(rest.body) as { amount: number }).amount, 10.09)
  t.equal((JSON.parse((await call(port, 'GET', `/api/payments/${payment.id}`, auth)).body) as { status: string }).status, 'refunded')
  t.equal((await call(port, 'POST', '/api/payments/unknown/refunds', { ...json, ...auth }, '{"amount":1}')).status, 404)
  // Manual capture: authorized, captured once.
  const authorized = await call(port, 'POST', '/api/payments', { ...json, ...auth, 'idempotency-key': 'm1' }, '{"amount":5,"currency":"USD","captureMethod":"manual"}')
  const authorization = JSON.parse(authorized.body) as { id: string, status: string }
  t.equal(authorization.status, 'requires_capture')
  const captured = await call(port, 'POST', `/api/payments/${authorization.id}/capture`, { ...json, ...auth }, '{}')
  t.equal(captured.status, 200)
  t.equal((JSON.parse(captured.body) as { status: string }).status, 'succeeded')
  t.equal((await call(port, 'POST', `/api/payments/${authorization.id}/capture`, { ...json, ...auth }, '{}')).status, 409, 'captured once')
  t.equal((await call(port, 'POST', '/api/payments/unknown/capture', { ...json, ...auth }, '{}')).status, 404)
  for (let i = 0; i < 11; i++) await call(port, 'POST', '/api/payments', { ...json, ...auth, 'idempotency-key': `l${i}` }, '{"amount":1,"currency":"USD"}')
  const page = await call(port, 'GET', '/api/payments?limit=10', auth)
  t.equal(page.status, 200)
  const listed = JSON.parse(page.body) as { data: Array<{ id: string }>, hasMore: boolean }
  t.equal(listed.data.length, 10)
  t.equal(listed.hasMore, true)
  const newest = JSON.parse((await call(port, 'POST', '/api/payments', { ...json, ...auth, 'idempotency-key': 'l10' }, '{"amount":1,"currency":"USD"}')).body) as { id: string }
  t.equal(listed.data[0]?.id, newest.id, 'newest first')
  t.equal((await call(port, 'GET', '/api/payments?limit=0', auth)).status, 400)
  t.equal((JSON.parse((await call(port, 'GET', '/api/payments', auth)).body) as { data: unknown[] }).data.length, 10, 'limit defaults to 10')
})

t.test('the bare Fastify peer serves the captured answers on the routes\' patterns, behind helmet and rate-limit', async (t) => {
  const canned = (scenario: string, method: string, pathPrefix: string, status: number, body: string, extra: Partial<CannedResponse> = {}): CannedResponse => ({
    scenario,
    method,
    pathPrefix,
    status,
    headers: [['content-type', 'application/json; charset=utf-8'], ['x-not-copied', scenario], ['content-length', String(Buffer.byteLength(body))],
      ...(scenario === 'fresh' ? [['location', '/api/payments/p1'] as [string, string]] : [])],
    body: Buffer.from(body).toString('base64'),
    ...extra
  })
  const app = await startFastifyPeer([
    canned('get-product', 'GET', '/products/', 200, '{"id":"p"}'),
    canned('fresh', 'POST', '/api/payments', 201, '{"fresh":true}'),
    canned('replay', 'POST', '/api/payments', 201, '{"replayed":true}', { idempotencyKey: 'k1' }),
    canned('get-payment', 'GET', '/api/payments/', 200, '{"payment":true}'),
    canned('refund', 'POST', '/api/payments/', 201, '{"refund":true}'),
    canned('capture', 'POST', '/api/payments/', 200, '{"captured":true}', { pathSuffix: '/capture' }),
    canned('list', 'GET', '/api/payments?limit=10', 200, '{"data":[]}')
  ])
  t.teardown(async () => { await app.close() })
  const { port } = app.server.address() as AddressInfo
  const json = { 'content-type': 'application/json' }
  const product = await call(port, 'GET', '/products/any')
  t.equal(product.status, 200)
  t.equal(product.body, '{"id":"p"}')
  t.equal(product.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(product.headers['x-not-copied'], undefined, 'only the content type and Location are copied')
  t.equal(product.headers['x-content-type-options'], 'nosniff', 'helmet is on')
  t.ok(product.headers['x-ratelimit-limit'] !== undefined, '@fastify/rate-limit is on')
  const fresh = await call(port, 'POST', '/api/payments', { ...json, 'idempotency-key': 'k2' }, '{"amount":1}')
  t.equal(fresh.status, 201)
  t.equal(fresh.body, '{"fresh":true}')
  t.equal(fresh.headers.location, '/api/payments/p1')
  t.equal((await call(port, 'POST', '/api/payments', { ...json, 'idempotency-key': 'k1' }, '{"amount":1}')).body, '{"replayed":true}', 'the replay\'s answer is bound to its key')
  t.equal((await call(port, 'GET', '/api/payments/x')).body, '{"payment":true}')
  t.equal((await call(port, 'POST', '/api/payments/x/refunds', json, '{"amount":0.01}')).body, '{"refund":true}')
  t.equal((await call(port, 'POST', '/api/payments/x/capture', json, '{}')).body, '{"captured":true}')
  t.equal((await call(port, 'GET', '/api/payments?limit=10')).body, '{"data":[]}')
  t.equal((await call(port, 'POST', '/api/payments', json, '{"amount":')).status, 400, 'Fastify parses the JSON body')
  t.equal((await call(port, 'DELETE', '/products/any')).status, 404)
  t.equal(routePattern({ method: 'GET', pathPrefix: '/api/payments?limit=10' }), '/api/payments')
})
