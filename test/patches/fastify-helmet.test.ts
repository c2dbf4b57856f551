import t from 'tap'
import Fastify from 'fastify'
import realHelmet from 'helmet'

/**
 * patches/@fastify+helmet+*.patch: @fastify/helmet builds helmet's middleware once per
 * configuration instead of on every request. Loaded with a counting stand-in for the helmet
 * package so the test sees how often helmet(options) runs.
 */
function countingHelmet (): { helmet: typeof realHelmet, calls: () => number } {
  let calls = 0
  const counting = ((options: Parameters<typeof realHelmet>[0]) => {
    calls++
    return realHelmet(options)
  }) as typeof realHelmet
  Object.assign(counting, realHelmet)
  return { helmet: counting, calls: () => calls }
}

t.test('the global configuration builds one helmet middleware for all requests, and the headers are set', async (t) => {
  const counter = countingHelmet()
  const fastifyHelmet = t.mockRequire('@fastify/helmet', { helmet: counter.helmet })
  const app = Fastify()
  await app.register(fastifyHelmet, { contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], frameAncestors: ["'none'"] } } })
  app.get('/a', async () => ({ ok: true }))
  app.get('/b', async () => ({ ok: true }))
  t.teardown(async () => { await app.close() })
  for (let i = 0; i < 5; i++) {
    for (const url of ['/a', '/b']) {
      const res = await app.inject({ method: 'GET', url })
      t.equal(res.statusCode, 200)
      t.match(res.headers['content-security-policy'], /default-src 'self';.*frame-ancestors 'none'/)
      t.equal(res.headers['x-content-type-options'], 'nosniff')
      t.match(res.headers['strict-transport-security'], /max-age=\d+/)
    }
  }
  t.equal(counter.calls(), 1, 'helmet(options) ran once for 10 requests on 2 routes')
})

t.test('route options: one middleware per route configuration, merged over the global one; helmet: false skips', async (t) => {
  const counter = countingHelmet()
  const fastifyHelmet = t.mockRequire('@fastify/helmet', { helmet: counter.helmet })
  const app = Fastify()
  await app.register(fastifyHelmet, { global: true, referrerPolicy: { policy: 'no-referrer' } })
  app.get('/own', { helmet: { frameguard: { action: 'deny' } } } as object, async () => ({ ok: true }))
  app.get('/none', { helmet: false } as object, async () => ({ ok: true }))
  app.get('/global', async () => ({ ok: true }))
  t.teardown(async () => { await app.close() })
  for (let i = 0; i < 3; i++) {
    const own = await app.inject({ method: 'GET', url: '/own' })
    t.equal(own.headers['x-frame-options'], 'DENY', 'the route option applies')
    t.equal(own.headers['referrer-policy'], 'no-referrer', 'merged over the global configuration')
    const none = await app.inject({ method: 'GET', url: '/none' })
    t.notOk('x-frame-options' in none.headers, 'helmet: false sets no headers')
    const global = await app.inject({ method: 'GET', url: '/global' })
    t.equal(global.headers['x-frame-options'], 'SAMEORIGIN')
  }
  t.equal(counter.calls(), 2, 'one middleware for the route configuration, one for the global one')
})

t.test('reply.helmet() without options reuses the cached middleware; with options builds its own', async (t) => {
  const counter = countingHelmet()
  const fastifyHelmet = t.mockRequire('@fastify/helmet', { helmet: counter.helmet })
  const app = Fastify()
  await app.register(fastifyHelmet, { global: false })
  app.get('/default', async (_request, reply) => { (reply as unknown as { helmet: (o?: object) => void }).helmet(); return { ok: true } })
  app.get('/custom', async (_request, reply) => { (reply as unknown as { helmet: (o?: object) => void }).helmet({ frameguard: { action: 'deny' } }); return { ok: true } })
  t.teardown(async () => { await app.close() })
  for (let i = 0; i < 3; i++) {
    t.equal((await app.inject({ method: 'GET', url: '/default' })).headers['x-frame-options'], 'SAMEORIGIN')
  }
  t.equal(counter.calls(), 1, 'three reply.helmet() calls, one middleware')
  t.equal((await app.inject({ method: 'GET', url: '/custom' })).headers['x-frame-options'], 'DENY')
  t.equal(counter.calls(), 2, 'per-call options are not cached (they may differ every time)')
})

t.test('CSP nonces still differ on every request', async (t) => {
  const fastifyHelmet = t.mockRequire('@fastify/helmet', { helmet: realHelmet })
  const app = Fastify()
  await app.register(fastifyHelmet, { enableCSPNonces: true })
  app.get('/', async () => ({ ok: true }))
  t.teardown(async () => { await app.close() })
  const first = String((await app.inject({ method: 'GET', url: '/' })).headers['content-security-policy'])
  const second = String((await app.inject({ method: 'GET', url: '/' })).headers['content-security-policy'])
  t.match(first, /'nonce-[0-9a-f]{32}'/)
  t.not(first, second)
})

/** helmet, with every middleware it builds counting its runs. */
function runCountingHelmet (): { helmet: typeof realHelmet, runs: () => number } {
  let runs = 0
  const counting = ((options: Parameters<typeof realHelmet>[0]) => {
    const middleware = realHelmet(options)
    return (req: Parameters<typeof middleware>[0], res: Parameters<typeof middleware>[1], next: Parameters<typeof middleware>[2]) => {
      runs++
      middleware(req, res, next)
    }
  }) as typeof realHelmet
  Object.assign(counting, realHelmet)
  return { helmet: counting, runs: () => runs }
}

t.test('constant headers are computed once: every request gets exactly what helmet itself sets, in its order', async (t) => {
  const counter = runCountingHelmet()
  const options = { contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], imgSrc: ["'self'", 'data:'], upgradeInsecureRequests: null } } }
  const fastifyHelmet = t.mockRequire('@fastify/helmet', { helmet: counter.helmet })
  const app = Fastify()
  await app.register(fastifyHelmet, options)
  app.get('/', async (_request, reply) => { reply.header('x-powered-by', 'set by the route'); return { ok: true } })
  t.teardown(async () => { await app.close() })

  // What unpatched use of helmet sets on a plain node:http response.
  const expected: Array<[string, unknown]> = []
  const recorder = { setHeader: (name: string, value: unknown) => { expected.push([name.toLowerCase(), value]) }, removeHeader: () => {} }
  realHelmet(options)({ headers: {} } as never, recorder as never, () => {})
  t.ok(expected.length >= 10, 'helmet sets its headers')
  for (let i = 0; i < 4; i++) {
    const res = await app.inject({ method: 'GET', url: '/' })
    t.equal(res.statusCode, 200)
    for (const [name, value] of expected) t.equal(res.headers[name], value, `${name} as helmet sets it`)
  }
  t.equal(counter.runs(), 1, 'the middleware ran once (recorded), not once per request')
})

t.test('a CSP directive given as a function still runs on every request', async (t) => {
  const counter = runCountingHelmet()
  let n = 0
  const fastifyHelmet = t.mockRequire('@fastify/helmet', { helmet: counter.helmet })
  const app = Fastify()
  await app.register(fastifyHelmet, { contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], scriptSrc: ["'self'", () => `'nonce-n${++n}'`] } } })
  app.get('/', async () => ({ ok: true }))
  t.teardown(async () => { await app.close() })
  const first = String((await app.inject({ method: 'GET', url: '/' })).headers['content-security-policy'])
  const second = String((await app.inject({ method: 'GET', url: '/' })).headers['content-security-policy'])
  t.match(first, /'nonce-n1'/)
  t.match(second, /'nonce-n2'/)
  t.equal(counter.runs(), 2, 'one run per request')
})
