import t from 'tap'
import { buildTestApp } from '../../helpers/app'

interface LogEntry { level: number, msg: string, [key: string]: unknown }

function captureLogs (): { stream: { write: (line: string) => void }, entries: () => LogEntry[] } {
  const lines: string[] = []
  return { stream: { write: (line: string) => { lines.push(line) } }, entries: () => lines.map((line) => JSON.parse(line) as LogEntry) }
}

t.test('one info line per request: method, route pattern, status, response time, request id', async (t) => {
  const logs = captureLogs()
  const app = await buildTestApp(t, {}, { logger: { level: 'info', stream: logs.stream } })
  await app.inject({ method: 'PUT', url: '/products/cup', headers: { 'x-request-id': 'put' }, payload: { name: 'Cup', price: 1 } })
  await app.inject({ method: 'GET', url: '/products/cup?secret=1', headers: { 'x-request-id': 'get' } })
  await app.inject({ method: 'GET', url: '/no/such/route', headers: { 'x-request-id': 'unknown' } })
  const requestLines = logs.entries().filter((entry) => typeof entry.requestId === 'string')
  t.equal(requestLines.length, 3, 'one line for each of the three requests')
  t.match(requestLines, [
    { level: 30, msg: 'request completed', requestId: 'put', method: 'PUT', route: '/products/:id', statusCode: 200, responseTime: Number, remoteAddress: '127.0.0.1' },
    { level: 30, msg: 'request completed', requestId: 'get', method: 'GET', route: '/products/:id', statusCode: 200 },
    { level: 30, msg: 'request completed', requestId: 'unknown', method: 'GET', route: null, statusCode: 404 }
  ])
  const text = JSON.stringify(requestLines)
  t.notOk(text.includes('cup') || text.includes('secret') || text.includes('/no/such'), 'the URL (ids, query strings) is not logged, only the route pattern')
})

t.test('at debug level the arrival of a request is logged too', async (t) => {
  const logs = captureLogs()
  const app = await buildTestApp(t, {}, { logger: { level: 'debug', stream: logs.stream } })
  await app.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': 'traced' } })
  const mine = logs.entries().filter((entry) => entry.requestId === 'traced')
  t.match(mine, [
    { level: 20, msg: 'incoming request', method: 'GET', url: '/health/live' },
    { level: 30, msg: 'request completed', route: '/health/live', statusCode: 200 }
  ])
})
