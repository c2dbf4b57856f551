/**
 * A REAL listening server against slow and oversized clients: slowloris headers, a slow body,
 * idle and keep-alive sockets, header sections over Node's limit, unparseable HTTP. Time-outs
 * are configured small for the test; every case ends with the server still serving.
 */
import t, { type Test } from 'tap'
import { connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { ADMIN_AUTH, buildTestApp, merchantWithKey, testConfig } from '../../helpers/app'
import type { App } from '../../../app/app'
import { ConfigError } from '../../../src/config'
import { loadConfig } from '../../../src/load-config'
import { httpServerOptions } from '../../../plugins/http/server-limits'

/** Slack for a loaded CI machine on top of a deadline and Node's check interval. */
const SLACK_MS = 1500

interface Exchange {
  /** Everything the server sent. */
  data: string
  /** Milliseconds from connecting until the server closed the socket. */
  closedAfter: number
  /** Bytes the client managed to send before it was cut off. */
  sent: number
}

async function listening (t: Test, env: Record<string, string>): Promise<{ app: App, port: number }> {
  const app = await buildTestApp(t, env)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as AddressInfo).port }
}

/**
 * Opens a socket, writes `head` at once, then `drip` one character every `everyMs` (if any), until the
 * server closes the connection or `giveUpMs` passes (then the test fails: the server did not act).
 */
async function exchange (port: number, head: string, drip = '', everyMs = 50, giveUpMs = 15_000): Promise<Exchange> {
  return await new Promise((resolve, reject) => {
    const started = Date.now()
    const socket: Socket = connect(port, '127.0.0.1')
    let data = ''
    let sent = 0
    let timer: NodeJS.Timeout | undefined
    const giveUp = setTimeout(() => { socket.destroy(); reject(new Error(`the server kept the connection open for ${giveUpMs} ms; got ${JSON.stringify(data)}`)) }, giveUpMs)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { data += chunk })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(giveUp)
      clearInterval(timer)
      resolve({ data, closedAfter: Date.now() - started, sent })
    })
    socket.on('connect', () => {
      if (head !== '') { socket.write(head); sent += head.length }
      if (drip === '') return
      let i = 0
      timer = setInterval(() => {
        if (socket.destroyed || !socket.writable) return
        socket.write(drip[i++ % drip.length] ?? '')
        sent++
      }, everyMs)
    })
  })
}

function statusOf (data: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0)
}

function bodyOf (data: string): Record<string, unknown> {
  return JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4))
}

async function stillServing (t: Test, port: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/health/live`)
  t.equal(res.status, 200, 'the server is still serving')
}

t.test('the configured time-outs reach Node\'s HTTP server; the header time-out defaults below the request time-out', async (t) => {
  const app = await buildTestApp(t, { CONNECTION_TIMEOUT_MS: '1234', REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '2000', KEEP_ALIVE_TIMEOUT_MS: '3000' })
  t.equal(app.server.timeout, 0, 'no socket inactivity time-out: CONNECTION_TIMEOUT_MS applies before the first request only')
  t.equal(app.server.headersTimeout, 2000, 'HEADERS_TIMEOUT_MS')
  t.equal(app.server.requestTimeout, 5000, 'REQUEST_TIMEOUT_MS')
  t.equal(app.server.keepAliveTimeout, 3000, 'KEEP_ALIVE_TIMEOUT_MS')

  const defaults = testConfig()
  t.equal(defaults.HEADERS_TIMEOUT_MS, 10_000, 'headers: 10 s by default')
  t.equal(defaults.REQUEST_TIMEOUT_MS, 30_000)
  t.equal(httpServerOptions(defaults).connectionsCheckingInterval, 1000, 'deadlines are checked every second, not every 30 s')
  t.equal(httpServerOptions({ HEADERS_TIMEOUT_MS: 200, REQUEST_TIMEOUT_MS: 1000 }).connectionsCheckingInterval, 50)
  t.equal(httpServerOptions({ HEADERS_TIMEOUT_MS: 0, REQUEST_TIMEOUT_MS: 0 }).connectionsCheckingInterval, 1000, 'time-outs off')
  t.equal(loadConfig({ REQUEST_TIMEOUT_MS: '5000' }).HEADERS_TIMEOUT_MS, 5000, 'the default follows a shorter REQUEST_TIMEOUT_MS')
  t.equal(loadConfig({ REQUEST_TIMEOUT_MS: '0' }).HEADERS_TIMEOUT_MS, 10_000, 'and stands when the request time-out is off')
  t.throws(() => loadConfig({ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '6000' }),
    new ConfigError('invalid configuration: HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS (got 6000 > 5000)'))
})

t.test('slowloris: headers sent byte by byte are cut off with a 408 envelope at HEADERS_TIMEOUT_MS', async (t) => {
  const headersTimeout = 600
  const { port } = await listening(t, { HEADERS_TIMEOUT_MS: String(headersTimeout), REQUEST_TIMEOUT_MS: '5000', CONNECTION_TIMEOUT_MS: '10000' })
  // Never idle for long (a byte every 50 ms keeps CONNECTION_TIMEOUT_MS from firing); never finishes the header section.
  const result = await exchange(port, 'GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Slow: ', 'abcdefghij')
  t.equal(statusOf(result.data), 408, `answered 408 (${JSON.stringify(result.data.slice(0, 40))})`)
  t.match(result.data, /\r\nContent-Type: application\/json; charset=utf-8\r\n/)
  t.match(result.data, /\r\nConnection: close\r\n/)
  t.same(bodyOf(result.data), { error: 'request timed out: the request (headers and body) did not arrive in time', code: 'REQUEST_TIMEOUT' })
  t.ok(result.closedAfter >= headersTimeout - 50, `not cut before the deadline (${result.closedAfter} ms)`)
  t.ok(result.closedAfter < headersTimeout + SLACK_MS, `disconnected within HEADERS_TIMEOUT_MS + check interval + slack (${result.closedAfter} ms)`)
  t.ok(result.sent > 10, `the client was still sending when it was cut off (${result.sent} bytes)`)
  await stillServing(t, port)
})

t.test('a slow body is cut off with a 408 at REQUEST_TIMEOUT_MS and nothing is stored', async (t) => {
  const requestTimeout = 1200
  const { app, port } = await listening(t, { HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: String(requestTimeout), CONNECTION_TIMEOUT_MS: '10000' })
  const head = `PUT /products/slow HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${ADMIN_AUTH.authorization}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`
  const result = await exchange(port, head, '{"name":"', 50)
  t.equal(statusOf(result.data), 408, `answered 408 (${JSON.stringify(result.data.slice(0, 40))})`)
  t.equal(bodyOf(result.data).code, 'REQUEST_TIMEOUT')
  t.ok(result.closedAfter >= requestTimeout - 50, `not before the deadline (${result.closedAfter} ms)`)
  t.ok(result.closedAfter < requestTimeout + SLACK_MS, `within REQUEST_TIMEOUT_MS + slack (${result.closedAfter} ms)`)
  t.equal(await app.db.products.get('slow'), undefined, 'nothing was stored')
  await stillServing(t, port)
})

t.test('an idle connection that never sends a byte is closed', async (t) => {
  const { port } = await listening(t, { CONNECTION_TIMEOUT_MS: '300', HEADERS_TIMEOUT_MS: '2000', REQUEST_TIMEOUT_MS: '5000' })
  const result = await exchange(port, '')
  t.ok(result.closedAfter < 300 + SLACK_MS, `closed after ${result.closedAfter} ms (CONNECTION_TIMEOUT_MS 300)`)
  t.ok(result.closedAfter >= 250, 'not before the time-out')
  await stillServing(t, port)
})

t.test('a request that takes longer than CONNECTION_TIMEOUT_MS still gets its answer', async (t) => {
  const { app, port } = await listening(t, { CONNECTION_TIMEOUT_MS: '300', GATEWAY_SIM_LATENCY_MS: '900', REQUEST_TIMEOUT_MS: '5000' })
  const { auth } = await merchantWithKey(app)
  const started = Date.now()
  const res = await fetch(`http://127.0.0.1:${port}/api/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify({ amount: 10, currency: 'EUR' })
  })
  t.equal(res.status, 201, 'answered, not cut off')
  t.ok(Date.now() - started >= 900, 'the gateway took longer than CONNECTION_TIMEOUT_MS')
  // The same connection, kept alive, then waits for its next request under KEEP_ALIVE_TIMEOUT_MS, not CONNECTION_TIMEOUT_MS.
  const again = await exchange(port, 'GET /health/live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
  t.equal(statusOf(again.data), 200)
})

t.test('an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS', async (t) => {
  const { port } = await listening(t, { KEEP_ALIVE_TIMEOUT_MS: '300', CONNECTION_TIMEOUT_MS: '10000' })
  const result = await exchange(port, 'GET /health/live HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n')
  t.equal(statusOf(result.data), 200, 'the request was answered')
  t.match(result.data, /\r\nKeep-Alive: timeout=0\r\n|\r\nKeep-Alive: timeout=\d+\r\n/i, 'keep-alive was offered')
  // Node arms the socket's idle timer at keepAliveTimeout plus a one-second buffer (for clients racing the close).
  t.ok(result.closedAfter >= 250 && result.closedAfter < 300 + 1000 + SLACK_MS, `then closed when idle (${result.closedAfter} ms)`)
})

t.test('a header section over Node\'s limit is a 431 (a problem document on /api), not a crash; the server keeps serving', async (t) => {
  const { app, port } = await listening(t, {})
  for (const [name, value] of [['X-Long', 'v'.repeat(20_000)], ['Idempotency-Key', 'k'.repeat(20_000)], ['X-Request-Id', 'r'.repeat(20_000)]] as const) {
    const result = await exchange(port, `POST /api/payments HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n${name}: ${value}\r\n\r\n{}`)
    t.equal(statusOf(result.data), 431, `a 20,000-byte ${name} → 431`)
    t.match(result.data, /\r\nContent-Type: application\/problem\+json; charset=utf-8\r\n/, 'in the payments area\'s shape (test/plugins/http/errors/client-error.test.ts)')
    t.match(bodyOf(result.data), { status: 431, detail: 'request header fields too large', instance: '/api/payments' })
    t.notOk(result.data.includes(value.slice(0, 100)), 'nothing of the request is echoed')
    for (const header of [/\r\nContent-Security-Policy: default-src 'self'/i, /\r\nStrict-Transport-Security: /i, /\r\nX-Content-Type-Options: nosniff\r\n/i,
      /\r\nX-Frame-Options: /i, /\r\nCache-Control: no-store\r\n/, /\r\nX-Request-Id: [0-9a-f-]{36}\r\n/]) {
      t.match(result.data, header, `the 431 carries the security headers and a request id (${header.source})`)
    }
  }
  const many = Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`).join('\r\n')
  const flood = await exchange(port, `GET /health/live HTTP/1.1\r\nHost: localhost\r\n${many}\r\n\r\n`)
  t.equal(statusOf(flood.data), 431, `3,000 small headers (${many.length} bytes) → 431 too`)
  await stillServing(t, port)

  // Under the limit, a long Idempotency-Key reaches the service and is refused there.
  const res = await fetch(`http://127.0.0.1:${port}/api/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'k'.repeat(8000), ...(await merchantWithKey(app)).auth },
    body: JSON.stringify({ amount: 1, currency: 'USD' })
  })
  t.equal(res.status, 400, 'an 8,000-character Idempotency-Key → 400')
  t.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8')
  const problem = await res.json() as { errors: Record<string, string[]> }
  t.match(problem.errors['Idempotency-Key']?.[0], /1-255 printable ASCII/)
})

t.test('unparseable HTTP is a 400 envelope and the connection is closed', async (t) => {
  const { port } = await listening(t, {})
  for (const request of ['GARBAGE\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', 'GET /health/live HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx', 'GET /health/live HTTP/1.1\r\nBad Header\r\n\r\n']) {
    const result = await exchange(port, request)
    t.equal(statusOf(result.data), 400, `${JSON.stringify(request.slice(0, 30))} → 400`)
    t.same(bodyOf(result.data), { error: 'malformed HTTP request', code: 'BAD_REQUEST' })
  }
  await stillServing(t, port)
})
