/**
 * The database's health as its answers tell it (src/store/health.ts): one change of state per outage
 * (hysteresis), calls refused at once while the database does not answer, failures counted.
 */
import t from 'tap'
import { StoreUnavailableError } from '../../src/domain/errors'
import { databaseHealth, observed } from '../../src/store/health'
import { toStoreError } from '../../src/store/unavailable'
import type { HealthChange } from '../../src/store/types'

const coded = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code })

t.test('the state leaves ok on the first failure and returns once, after the settle time without failure', async (t) => {
  let now = 0
  const health = databaseHealth(2000, () => now)
  const changes: HealthChange[] = []
  health.onChange((change) => { changes.push(change) })

  health.answered()
  t.equal(health.state, 'ok')
  health.failed(toStoreError(coded('SQLITE_FULL')))
  t.equal(health.state, 'full', 'the first failed write says it at once')
  t.equal(health.away, false, 'a full disk answers: calls still go to it')
  for (let i = 0; i < 50; i++) {
    now += 100
    // A nearly full disk: some writes fit, most do not.
    if (i % 3 === 0) health.answered()
    else health.failed(toStoreError(coded('SQLITE_FULL')))
  }
  t.equal(health.state, 'full', 'answers between failures do not flip it back')
  now += 1999
  health.answered()
  t.equal(health.state, 'full', 'not before the settle time')
  now += 1
  health.answered()
  t.equal(health.state, 'ok', 'back after 2 s of answers without failure')
  t.equal(changes.length, 2, 'told once when it went, once when it came back')
  t.match(changes[0], { state: 'full', previous: 'ok', failures: 1 })
  t.match(changes[1], { state: 'ok', previous: 'full', failures: 34, downMs: 7000 })
  t.equal(health.failures.full, 34, 'every failure counted (metrics)')

  health.failed(toStoreError(coded('40001', 'could not serialize access')))
  t.equal(health.state, 'ok', 'busy (a serialization failure, a lock time-out) says nothing about other calls')
  t.equal(health.failures.busy, 1, '...but is counted')
  health.failed(new Error('a bug'))
  t.equal(health.state, 'ok', 'a bug is not an outage')
})

t.test('no answer (unreachable, read time-out) refuses new calls at once until the next answer', async (t) => {
  const health = databaseHealth(0)
  let calls = 0
  let fail: Error | undefined
  const store = observed({
    async query () {
      calls++
      if (fail !== undefined) throw toStoreError(fail)
      return 'rows'
    }
  }, health, { failFast: true })
  const probe = observed({ async beat () { if (fail !== undefined) throw toStoreError(fail) } }, health, { failFast: false })

  fail = new Error('Query read timeout')
  await t.rejects(store.query(), { code: 'STORE_UNAVAILABLE', reason: 'timeout' })
  t.equal(health.away, true, 'the server did not answer')
  const started = Date.now()
  const refused = await store.query().catch((err: unknown) => err)
  t.ok(refused instanceof StoreUnavailableError && refused.retryAfterSeconds === 2, 'refused with its Retry-After')
  t.ok(Date.now() - started < 50, 'at once')
  t.equal(calls, 1, 'without calling the database')
  await t.rejects(probe.beat(), { code: 'STORE_UNAVAILABLE', reason: 'timeout' }, 'the heartbeat still probes')

  fail = coded('57014', 'canceling statement due to statement timeout')
  await probe.beat().catch(() => {})
  t.equal(health.away, false, 'a statement time-out is the server answering: calls go through again')
  fail = coded('ECONNREFUSED')
  await probe.beat().catch(() => {})
  t.equal(health.away, true)
  fail = undefined
  await probe.beat()
  t.equal(health.away, false, 'the first answer ends it')
  t.equal(await store.query(), 'rows')
})
