/** The readiness probe answers in bounded time even when a dependency hangs (a paused database server). */
import t from 'tap'
import { buildTestApp } from '../helpers/app'
import { READINESS_CHECK_TIMEOUT_MS } from '../../plugins/readiness'

t.test('a check that does not answer is reported as timeout within READINESS_CHECK_TIMEOUT_MS', async (t) => {
  const app = await buildTestApp(t)
  app.addReadinessCheck('hanging', async () => await new Promise<never>(() => {}))
  const started = Date.now()
  const res = await app.inject({ method: 'GET', url: '/health/ready' })
  const took = Date.now() - started
  t.equal(res.statusCode, 503)
  t.same(res.json(), { status: 'unavailable', checks: { database: 'ok', hanging: 'timeout' } })
  t.ok(took >= READINESS_CHECK_TIMEOUT_MS - 50 && took < READINESS_CHECK_TIMEOUT_MS + 1000, `answered after ${took} ms`)
})
