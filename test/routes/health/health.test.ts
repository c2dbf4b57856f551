import t from 'tap'
import { buildTestApp } from '../../helpers/app'

const JSON_UTF8 = 'application/json; charset=utf-8'

t.test('GET /health/live answers 200 ok', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/health/live' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], JSON_UTF8)
  t.same(res.json(), { status: 'ok' })
})

t.test('GET /health/ready answers 200 with the database ok', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/health/ready' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], JSON_UTF8)
  t.match(res.json(), { status: 'ok', checks: { database: 'ok' } })
  t.ok(Object.values(res.json().checks).every((state) => state === 'ok'), 'every check is ok')
})

t.test('readiness is 503 when any check fails or throws, and names it', async (t) => {
  const app = await buildTestApp(t)
  app.addReadinessCheck('cache', async () => 'timeout')
  const degraded = await app.inject({ method: 'GET', url: '/health/ready' })
  t.equal(degraded.statusCode, 503)
  t.equal(degraded.headers['content-type'], JSON_UTF8)
  t.match(degraded.json(), { status: 'unavailable', checks: { database: 'ok', cache: 'timeout' } })

  app.addReadinessCheck('cache', async () => { throw new Error('ECONNREFUSED 10.0.0.1:6379') })
  const down = await app.inject({ method: 'GET', url: '/health/ready' })
  t.equal(down.statusCode, 503)
  t.match(down.json(), { status: 'unavailable', checks: { database: 'ok', cache: 'unreachable' } })
  t.notMatch(down.body, /ECONNREFUSED|10\.0\.0\.1/, 'failure details are not exposed')

  app.addReadinessCheck('cache', async () => 'ok')
  t.equal((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode, 200, 'ready again once the check passes')
})

t.test('readiness is 503 once the database is closed', async (t) => {
  const app = await buildTestApp(t)
  await app.db.close()
  const res = await app.inject({ method: 'GET', url: '/health/ready' })
  t.equal(res.statusCode, 503)
  t.same(res.json(), { status: 'unavailable', checks: { database: 'unreachable' } })
  t.equal((await app.inject({ method: 'GET', url: '/health/live' })).statusCode, 200, 'but the process is alive')
})

t.test('the probes answer HEAD', async (t) => {
  const app = await buildTestApp(t)
  for (const url of ['/health/live', '/health/ready']) {
    const head = await app.inject({ method: 'HEAD', url })
    t.equal(head.statusCode, 200, `HEAD ${url}`)
    t.equal(head.body, '')
  }
})
