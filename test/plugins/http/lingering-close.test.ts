import t from 'tap'
import { connect } from 'node:net'
import { ADMIN_AUTH, buildTestApp, merchantWithKey } from '../../helpers/app'
import { LINGER_MAX_MS } from '../../../plugins/http/lingering-close'

const FIVE_MIB = 5 * 1024 * 1024

/**
 * Sends `size` bytes of body after a request head over a fresh socket, as fast as the socket takes
 * them, and only then reads the answer, as many clients do (they read once the request is sent).
 * Resolves with everything the server sent back, or rejects with the socket error: ECONNRESET or
 * EPIPE when the server closed the connection while the body was still coming, which discards its
 * answer before the client reads it.
 */
function upload (port: number, method: string, path: string, authorization: string, size: number, chunked: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    let settled = false
    const finish = (error?: Error): void => {
      if (settled) return
      settled = true
      socket.destroy()
      if (received.startsWith('HTTP/1.1 ')) resolve(received)
      else reject(error ?? new Error(`no answer (got ${JSON.stringify(received.slice(0, 100))})`))
    }
    socket.setEncoding('latin1')
    socket.pause()
    socket.on('data', (chunk: string) => {
      received += chunk
      // The whole answer: head and the Content-Length of body.
      const [head = '', body = ''] = received.split('\r\n\r\n')
      const length = /content-length: (\d+)/i.exec(head)?.[1]
      if (length !== undefined && body.length >= Number(length)) finish()
    })
    socket.on('error', (error) => { finish(error) })
    socket.on('close', () => { finish() })
    socket.on('connect', () => {
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\n` +
        (chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${size}\r\n`) + '\r\n')
      const block = Buffer.alloc(64 * 1024, 0x20)
      let sent = 0
      const pump = (): void => {
        while (sent < size && !socket.destroyed) {
          sent += block.length
          const data = chunked ? Buffer.concat([Buffer.from(`${block.length.toString(16)}\r\n`), block, Buffer.from('\r\n')]) : block
          if (!socket.write(data)) { socket.once('drain', pump); return }
        }
        if (chunked && !settled) socket.write('0\r\n\r\n')
        // Everything is sent: now read the answer.
        socket.resume()
      }
      pump()
    })
  })
}

t.test('a body over BODY_LIMIT: the client reads the 413 every time (lingering close), 20 times, 5 MiB each', async (t) => {
  const app = await buildTestApp(t, { BODY_LIMIT: '65536' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const merchant = await merchantWithKey(app)
  const cases = [
    ['declared length, products', 'PUT', '/products/big', ADMIN_AUTH.authorization, false],
    ['chunked, payments', 'POST', '/api/payments', merchant.auth.authorization, true]
  ] as const
  for (const [label, method, path, authorization, chunked] of cases) {
    for (let i = 1; i <= 20; i++) {
      const answer = await upload(port, method, path, authorization, FIVE_MIB, chunked)
      t.match(answer, /^HTTP\/1\.1 413 /, `${label}: upload ${i} read its 413`)
      if (i === 1) {
        t.match(answer, /\r\nconnection: close\r\n/i, 'and was told the connection closes')
        t.match(answer, /PAYLOAD_TOO_LARGE|Payload Too Large/, 'in the area\'s shape')
      }
    }
  }
})

t.test('lingering is bounded: a client that never stops sending is cut off after LINGER_MAX_MS', async (t) => {
  const app = await buildTestApp(t, { BODY_LIMIT: '1024' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const started = Date.now()
  const { answer, closedAfter } = await new Promise<{ answer: string, closedAfter: number }>((resolve) => {
    // allowHalfOpen: keep sending after the server's FIN, as a client busy uploading does.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    let answer = ''
    const timer = setInterval(() => { if (!socket.destroyed) socket.write(`400\r\n${'x'.repeat(1024)}\r\n`) }, 50)
    socket.setEncoding('latin1').on('data', (chunk: string) => { answer += chunk })
    socket.on('error', () => {})
    socket.on('close', () => { clearInterval(timer); resolve({ answer, closedAfter: Date.now() - started }) })
    socket.write(`PUT /products/endless HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${ADMIN_AUTH.authorization}\r\n` +
      'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n')
  })
  t.match(answer, /^HTTP\/1\.1 413 /, 'answered first')
  t.ok(closedAfter < LINGER_MAX_MS + 2000, `closed after ${closedAfter} ms (bound ${LINGER_MAX_MS} ms)`)
  t.ok(closedAfter >= LINGER_MAX_MS - 500, 'not before the bound: the client was given time to read the answer')
})
