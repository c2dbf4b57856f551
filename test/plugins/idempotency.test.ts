import t, { type Test } from 'tap'
import Fastify from 'fastify'
import configPlugin from '../../plugins/config'
import databasePlugin from '../../plugins/database'
import clockPlugin from '../../plugins/clock'
import idempotencyPlugin from '../../plugins/idempotency'
import instancePlugin from '../../plugins/instance'
import metricsPlugin from '../../plugins/metrics'
import { problemErrorHandler } from '../../plugins/http/errors/problem'
import { buildTestApp, testConfig } from '../helpers/app'
import { spyGateway, unavailable } from '../helpers/gateway'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { GatewayUnavailableError, NotFoundError } from '../../src/domain/errors'
import type { Database, IdempotencyKeyRef, IdempotencyStore } from '../../src/store/types'

/** An in-memory SQLite database that counts what happens to idempotency keys. */
async function countingDatabase (): Promise<{ db: Database, calls: Record<'claim' | 'release' | 'abandon' | 'finish', IdempotencyKeyRef[]> }> {
  const real = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  const calls = { claim: [] as IdempotencyKeyRef[], release: [] as IdempotencyKeyRef[], abandon: [] as IdempotencyKeyRef[], finish: [] as IdempotencyKeyRef[] }
  const store = real.idempotency
  const idempotency: IdempotencyStore = {
    ...store,
    claim: async (request) => { calls.claim.push(request.ref); return await store.claim(request) },
    release: async (ref) => { calls.release.push(ref); return await store.release(ref) },
    abandon: async (ref) => { calls.abandon.push(ref); await store.abandon(ref) },
    finish: async (ref, response) => { calls.finish.push(ref); await store.finish(ref, response) }
  }
  return { db: { ...real, idempotency }, calls }
}

/** The idempotency plugin alone on a bare Fastify instance, with one route whose work the test chooses. */
async function bareApp (t: Test, work: () => Promise<never> | never) {
  const { db, calls } = await countingDatabase()
  const app = Fastify()
  await app.register(configPlugin, { config: testConfig() })
  await app.register(clockPlugin, {})
  await app.register(databasePlugin, { database: db })
  await app.register(metricsPlugin)
  await app.register(instancePlugin)
  await app.register(idempotencyPlugin)
  // Domain errors carry no status: an area's error handler maps them (plugins/http/errors/classify-error.ts).
  app.setErrorHandler(problemErrorHandler)
  app.post('/things', async (request, reply) => await app.idempotency.handle(request, reply, {
    work: async () => work(),
    respond: () => ({ statusCode: 201, headers: {}, body: '' })
  }))
  await app.ready()
  t.teardown(async () => { await app.close() })
  return { app, calls }
}

const post = { method: 'POST' as const, url: '/things', headers: { 'idempotency-key': 'k-1' }, payload: { a: 1 } }

t.test('plugin on a bare instance: a failure after the resource may exist releases the key once, never abandons it', async (t) => {
  const { app, calls } = await bareApp(t, () => { throw new GatewayUnavailableError('down', '00000000-0000-4000-8000-000000000000', 5) })
  const res = await app.inject(post)
  t.equal(res.statusCode, 503)
  t.equal(calls.claim.length, 1, 'claimed once')
  t.equal(calls.release.length, 1, 'released once')
  t.equal(calls.abandon.length, 0, 'not abandoned')
})

t.test('plugin on a bare instance: a client error before anything was created abandons the key once, never releases it', async (t) => {
  const { app, calls } = await bareApp(t, () => { throw new NotFoundError('nothing here') })
  const res = await app.inject(post)
  t.equal(res.statusCode, 404)
  t.equal(calls.abandon.length, 1, 'abandoned once')
  t.equal(calls.release.length, 0, 'not released')
})

t.test('one gateway outage releases the payment\'s idempotency key exactly once', async (t) => {
  const { db, calls } = await countingDatabase()
  const gateway = spyGateway(unavailable)
  const app = await buildTestApp(t, {}, { gateway, database: db })
  const res = await app.inject({
    method: 'POST',
    url: '/api/payments',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'outage-1' },
    payload: { amount: 10, currency: 'USD' }
  })
  t.equal(res.statusCode, 503)
  t.equal(gateway.calls.length, 1, 'one outage')
  t.equal(calls.claim.length, 1, 'claimed once')
  t.equal(calls.release.length, 1, 'released exactly once')
  t.equal(calls.abandon.length, 0, 'never abandoned (the pending payment exists)')
  t.equal(calls.finish.length, 0, 'never finished')
  t.equal((await db.idempotency.findByResource(res.json().paymentId))?.recoveryPoint, 'resource_created', 'the key keeps its recovery point for the retry')
})
