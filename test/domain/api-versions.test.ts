import t from 'tap'
import {
  API_VERSIONS, changesSince, eventBodyIn, eventResource, isApiVersion, LATEST_API_VERSION, parseSunsets, retirementHeaders, unknownVersionMessage, type VersionChange
} from '../../src/domain/api-versions'
import type { DomainEvent } from '../../src/domain/events'

const event: DomainEvent = {
  id: '019aa9f1-2b3c-7d4e-8f50-6172839a4b5c',
  merchantId: 'm',
  type: 'payment.succeeded',
  resourceType: 'payment',
  resourceId: 'p',
  sequence: 3,
  data: { id: 'p', status: 'succeeded' },
  dataFormat: 'snapshot',
  createdAt: '2026-01-15T09:30:01.000Z'
}

/** A stand-in for the edge's renderer (schemas/events.ts renderEventData): the stored snapshot is never sent as it is. */
const rendered = { id: 'p', status: 'succeeded', amount: 10 }
const render = (): Record<string, unknown> => rendered

t.test('the versions: date-named, oldest first, the last is the current one', async (t) => {
  t.same([...API_VERSIONS], [...API_VERSIONS].sort())
  t.equal(LATEST_API_VERSION, API_VERSIONS[API_VERSIONS.length - 1])
  for (const version of API_VERSIONS) t.match(version, /^\d{4}-\d{2}-\d{2}$/)
  t.ok(isApiVersion('2026-11-01'))
  t.notOk(isApiVersion('2026-11-02'))
  t.notOk(isApiVersion(20261101))
  t.match(unknownVersionMessage('x'.repeat(40)), /^the given value is not a supported API version/, 'long values are not echoed')
})

t.test('a delivery body in each version: the Event resource now, {type, timestamp, data, sequence} before 2026-11-25', async (t) => {
  t.same(eventBodyIn(event, '2026-11-25', render), eventResource(event, render))
  t.same(Object.keys(eventBodyIn(event, '2026-11-25', render)), ['id', 'type', 'createdAt', 'sequence', 'resource', 'data'])
  t.same(eventBodyIn(event, '2026-11-01', render), { type: 'payment.succeeded', timestamp: event.createdAt, data: rendered, sequence: 3 }, 'the older body carries the rendered data too')
  t.same(eventResource(event, render).data, rendered, 'the data as the renderer shows it, not as stored')
})

t.test('version changes are undone newest first, only those released after the version asked for', async (t) => {
  const applied: string[] = []
  const changes = [
    { version: '2026-11-25', description: 'b', downgradeEventBody: (body) => { applied.push('b'); return { ...body, b: true } } },
    { version: '2026-11-25', description: 'response only' },
    { version: '2026-11-01', description: 'a', downgradeEventBody: (body) => { applied.push('a'); return body } }
  ] satisfies VersionChange[]
  t.same(changesSince('2026-11-25', changes), [])
  t.same(changesSince('2026-11-01', changes).map((c) => c.description), ['b', 'response only'])
  t.match(eventBodyIn(event, '2026-11-01', render, changes), { b: true })
  t.same(applied, ['b'], 'the change of the version itself is not undone')
})

t.test('API_VERSION_SUNSETS: version=date pairs; Deprecation and Sunset from them', async (t) => {
  t.same(parseSunsets(''), new Map())
  const sunsets = parseSunsets(' 2026-11-01=2027-11-25 ')
  t.same(sunsets, new Map([['2026-11-01', new Date('2027-11-25T00:00:00Z')]]))
  for (const bad of ['2026-11-25=2027-01-01', '2020-01-01=2027-01-01', '2026-11-01', '2026-11-01=soon', '2026-11-01=2027-13-45']) {
    t.equal(parseSunsets(bad), undefined, bad)
  }
  t.same(retirementHeaders('2026-11-01', new Date('2027-11-25T00:00:00Z')), {
    deprecation: `@${Date.parse('2026-11-25T00:00:00Z') / 1000}`,
    sunset: 'Thu, 25 Nov 2027 00:00:00 GMT'
  })
})
