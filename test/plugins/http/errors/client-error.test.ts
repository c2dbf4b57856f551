/**
 * What Node's HTTP parser refuses (431, 414, 400, 408) is answered by the client-error handler on a
 * REAL listening server, over raw sockets: in the shape of the area whose path the request line
 * names (problem+json for /api and /merchants, the envelope elsewhere), 414 for a request line over
 * the limit, the head alone for HEAD.
 */
import t, { type Test } from 'tap'
import { connect, type AddressInfo } from 'node:net'
import { ADMIN_AUTH, buildTestApp } from '../../../helpers/app'

const LONG = 'x'.repeat(20_000)

async function listening (t: Test, env: Record<string, string> = {}): Promise<number> {
  const app = await buildTestApp(t, env)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

/** Writes each chunk (30 ms apart, so each reaches the parser alone) and returns all the server sent until it closed. */
async function exchange (port: number, ...chunks: string[]): Promise<string> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let data = ''
    const giveUp = setTimeout(() => { socket.destroy(); reject(new Error(`the server kept the connection open; got ${JSON.stringify(data.slice(0, 200))}`)) }, 10_000)
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => { data += chunk })
    socket.on('error', () => {})
    socket.on('close', () => { clearTimeout(giveUp); resolve(data) })
    socket.on('connect', async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return
        socket.write(chunk)
        await new Promise((resolve) => setTimeout(resolve, 30))
      }
    })
  })
}

interface Answer { status: number, headers: Record<string, string>, body: string }

function parse (data: string): Answer {
  const [head = '', ...rest] = data.split('\r\n\r\n')
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim()
  // Read as bytes (latin1), decoded as the UTF-8 the server sends.
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: Buffer.from(rest.join('\r\n\r\n'), 'latin1').toString('utf8') }
}

t.test('a 431 on /api or /merchants is a problem document; on /products and elsewhere the envelope', async (t) => {
  const port = await listening(t)
  for (const [method, path] of [['POST', '/api/payments'], ['GET', '/api/payments/abc/refunds'], ['PATCH', '/merchants/abc'], ['GET', '/merchants']]) {
    const answer = parse(await exchange(port, `${method} ${path}?q=1 HTTP/1.1\r\nHost: localhost\r\nX-Long: ${LONG}\r\n\r\n`))
    t.equal(answer.status, 431, `${method} ${path} with a 20,000-byte header → 431`)
    t.equal(answer.headers['content-type'], 'application/problem+json; charset=utf-8')
    t.same(JSON.parse(answer.body), {
      type: 'https://www.rfc-editor.org/rfc/rfc6585#section-5',
      title: 'Request Header Fields Too Large',
      status: 431,
      detail: 'request header fields too large',
      instance: path,
      traceId: answer.headers['x-request-id']
    }, 'instance is the path (no query), traceId the X-Request-Id')
    t.equal(Buffer.byteLength(answer.body), Number(answer.headers['content-length']))
  }
  for (const path of ['/products/p1', '/health/live', '/', '/nowhere', '/apis', '/merchantsx']) {
    const answer = parse(await exchange(port, `GET ${path} HTTP/1.1\r\nHost: localhost\r\nX-Long: ${LONG}\r\n\r\n`))
    t.equal(answer.status, 431, `GET ${path} → 431`)
    t.equal(answer.headers['content-type'], 'application/json; charset=utf-8')
    t.same(JSON.parse(answer.body), { error: 'request header fields too large', code: 'HEADERS_TOO_LARGE' })
  }
})

t.test('a request line over the limit is a 414 URI Too Long, in the area\'s shape', async (t) => {
  const port = await listening(t)
  for (const method of ['OPTIONS', 'GET', 'POST']) {
    const answer = parse(await exchange(port, `${method} /api/payments?x=${LONG} HTTP/1.1\r\nHost: localhost\r\n\r\n`))
    t.equal(answer.status, 414, `${method} /api/payments?x=<20,000 bytes> → 414`)
    t.equal(answer.headers['content-type'], 'application/problem+json; charset=utf-8')
    t.match(JSON.parse(answer.body), { type: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.15', title: 'URI Too Long', status: 414, instance: '/api/payments' })
    t.notOk(answer.body.includes('xxxx'), 'the query is not echoed')
  }
  const long = parse(await exchange(port, `GET /merchants/${LONG} HTTP/1.1\r\nHost: localhost\r\n\r\n`))
  t.equal(long.status, 414, 'a 20,000-byte merchant id → 414')
  const instance = (JSON.parse(long.body) as { instance: string }).instance
  t.equal(instance.length, 256, 'the path is echoed bounded, as in every problem')
  t.ok(instance.startsWith('/merchants/xxx') && instance.endsWith('…'))

  const products = parse(await exchange(port, `GET /products?x=${LONG} HTTP/1.1\r\nHost: localhost\r\n\r\n`))
  t.equal(products.status, 414)
  t.same(JSON.parse(products.body), { error: 'request URI too long', code: 'URI_TOO_LONG' }, 'the products envelope')

  // A request line that ends, followed by headers that push the section over the limit: the headers are too large.
  const both = parse(await exchange(port, `GET /api/payments?x=${'y'.repeat(12_000)} HTTP/1.1\r\nHost: localhost\r\nX-Long: ${'z'.repeat(8000)}\r\n\r\n`))
  t.equal(both.status, 431, 'a long URL under the limit plus long headers → 431')
  t.equal(both.headers['content-type'], 'application/problem+json; charset=utf-8')
})

t.test('HEAD gets the head of the answer, without a body', async (t) => {
  const port = await listening(t)
  const data = await exchange(port, `HEAD /api/payments?x=${LONG} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
  const answer = parse(data)
  t.equal(answer.status, 414)
  t.equal(answer.headers['content-type'], 'application/problem+json; charset=utf-8')
  t.ok(Number(answer.headers['content-length']) > 0, 'Content-Length says what a GET would have had')
  t.equal(answer.body, '', 'no body')
  t.ok(data.endsWith('\r\n\r\n'))
})

t.test('where the request line cannot be read (it came in an earlier chunk), the envelope', async (t) => {
  const port = await listening(t)
  const answer = parse(await exchange(port, 'GET /api/payments HTTP/1.1\r\nHost: localhost\r\n', `X-Long: ${LONG}`, `${LONG}\r\n\r\n`))
  t.equal(answer.status, 431)
  t.same(JSON.parse(answer.body), { error: 'request header fields too large', code: 'HEADERS_TOO_LARGE' })
})

t.test('a malformed request and a late body on /api are problem documents too', async (t) => {
  const port = await listening(t, { HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '1000', CONNECTION_TIMEOUT_MS: '10000' })
  const malformed = parse(await exchange(port, 'GET /api/payments HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx'))
  t.equal(malformed.status, 400)
  t.match(JSON.parse(malformed.body), { status: 400, title: 'Bad Request', detail: 'malformed HTTP request', instance: '/api/payments' })
  t.equal(malformed.headers['content-type'], 'application/problem+json; charset=utf-8')

  const late = parse(await exchange(port, `POST /merchants HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${ADMIN_AUTH.authorization}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na`))
  t.equal(late.status, 408, 'the body never arrived → 408')
  t.match(JSON.parse(late.body), { status: 408, title: 'Request Timeout', instance: '/merchants', type: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.9' })
})
