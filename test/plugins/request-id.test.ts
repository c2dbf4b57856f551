import t from 'tap'
import { buildTestApp, failingDatabase } from '../helpers/app'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

interface LogEntry { msg: string, requestId?: string, reqId?: string, [key: string]: unknown }

/** Collects the JSON log lines of an app; `entries()` returns those written since `mark()`. */
function captureLogs (): { stream: { write: (line: string) => void }, mark: () => void, entries: () => LogEntry[] } {
  let from = 0
  const lines: string[] = []
  return {
    stream: { write: (line: string) => { lines.push(line) } },
    mark: () => { from = lines.length },
    entries: () => lines.slice(from).map((line) => JSON.parse(line) as LogEntry)
  }
}

t.test('a safe incoming X-Request-Id is echoed', async (t) => {
  const app = await buildTestApp(t)
  for (const id of ['abc', 'req-42', 'a.b_c:d-e', 'X'.repeat(128), '0f8fad5b-d9cb-469f-a165-70867728950e']) {
    const res = await app.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': id } })
    t.equal(res.headers['x-request-id'], id, `${id.slice(0, 20)}… is kept`)
  }
})

t.test('a missing, unsafe or too long X-Request-Id is replaced by a new UUID', async (t) => {
  const app = await buildTestApp(t)
  const seen = new Set<string>()
  const unsafe = ['', 'has space', 'semi;colon', '<script>', 'new\tline', 'é', 'a/b', 'X'.repeat(129), '"quoted"']
  for (const id of [undefined, ...unsafe]) {
    const res = await app.inject({ method: 'GET', url: '/health/live', headers: id === undefined ? {} : { 'x-request-id': id } })
    const echoed = String(res.headers['x-request-id'])
    t.match(echoed, UUID, `${JSON.stringify(id?.slice(0, 20))} is replaced by a UUID`)
    t.not(echoed, id)
    seen.add(echoed)
  }
  t.equal(seen.size, unsafe.length + 1, 'every request gets its own id')
})

t.test('a repeated X-Request-Id header is not trusted', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': ['one', 'two'] as unknown as string } })
  t.match(res.headers['x-request-id'], UUID)
})

t.test('error responses carry the request id too', async (t) => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '3' })
  const requests = [
    [404, { method: 'GET', url: '/products/missing' }],
    [404, { method: 'GET', url: '/no/such/route' }],
    [400, { method: 'PUT', url: '/products/x', headers: { 'content-type': 'application/json' }, payload: '{' }],
    [429, { method: 'GET', url: '/products/missing' }]
  ] as const
  for (const [i, [status, request]] of requests.entries()) {
    const id = `err-${i}`
    const res = await app.inject({ ...request, headers: { ...('headers' in request ? request.headers : {}), 'x-request-id': id } })
    t.equal(res.statusCode, status, `${request.method} ${request.url}`)
    t.equal(res.headers['x-request-id'], id)
  }
})

t.test('every log line of a request carries its requestId', async (t) => {
  const logs = captureLogs()
  const app = await buildTestApp(t, {}, { logger: { level: 'info', stream: logs.stream } })
  logs.mark()
  await app.inject({ method: 'PUT', url: '/products/p', headers: { 'x-request-id': 'put-1' }, payload: { name: 'P', price: 1 } })
  await app.inject({ method: 'GET', url: '/products/nope', headers: { 'x-request-id': 'get-404' } })
  await app.inject({ method: 'PUT', url: '/products/p', headers: { 'x-request-id': 'bad-json', 'content-type': 'application/json' }, payload: '{' })
  const generated = await app.inject({ method: 'GET', url: '/health/ready', headers: { 'x-request-id': 'not safe!' } })

  const entries = logs.entries()
  t.ok(entries.length >= 4, `${entries.length} lines were logged`)
  for (const entry of entries) {
    t.type(entry.requestId, 'string', `"${entry.msg}" has a requestId`)
    t.notOk('reqId' in entry, 'under the requestId label only')
  }
  for (const id of ['put-1', 'get-404', 'bad-json', String(generated.headers['x-request-id'])]) {
    const mine = entries.filter((entry) => entry.requestId === id)
    t.same(mine.map((entry) => entry.msg), ['request completed'], `${id}: one access-log line per request`)
  }
  t.match(String(generated.headers['x-request-id']), UUID)
})

t.test('lines logged by handlers through request.log carry the requestId', async (t) => {
  const logs = captureLogs()
  const app = await buildTestApp(t, {}, {
    logger: { level: 'info', stream: logs.stream },
    database: failingDatabase()
  })
  logs.mark()
  await app.inject({ method: 'GET', url: '/products/a', headers: { 'x-request-id': 'fails' } })
  const entries = logs.entries()
  t.same(entries.map((entry) => [entry.msg, entry.requestId]), [
    ['unhandled error', 'fails'],
    ['request completed', 'fails']
  ])
})
