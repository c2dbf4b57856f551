import { maxHeaderSize, STATUS_CODES } from 'node:http'
import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { JSON_CONTENT_TYPE } from './envelope'
import { areaOf, type AreaErrors } from './framework-errors'
import { bounded, buildProblem, PROBLEM_CONTENT_TYPE } from './problem'

interface ClientError extends Error {
  code?: string
  /** The bytes Node's parser was reading when it failed (a Buffer): the last chunk received, not the whole request. */
  rawPacket?: unknown
}

interface Answer { status: number, error: string, code: string }

const answers: Record<string, Answer> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, error: 'request timed out: the request (headers and body) did not arrive in time', code: 'REQUEST_TIMEOUT' },
  HPE_HEADER_OVERFLOW: { status: 431, error: 'request header fields too large', code: 'HEADERS_TOO_LARGE' }
}
const uriTooLong: Answer = { status: 414, error: 'request URI too long', code: 'URI_TOO_LONG' }
const badRequest: Answer = { status: 400, error: 'malformed HTTP request', code: 'BAD_REQUEST' }

/** The start of a request line (RFC 9112 §3, after the empty lines §2.2 lets a server ignore): method, origin-form target. */
const REQUEST_LINE = /^(?:\r?\n)*([!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}) (\/[!-~]*)/

/** What can be read of the failed request: its method and path, and whether its request line alone was over the limit. */
interface RequestStart { method: string, path: string, lineTooLong: boolean }

/**
 * The method and path of a request the parser refused, where they can be read: from the request in
 * flight (headers complete, body late), or from the failing chunk when it starts with the request
 * line. The header size limit counts the request line too: a line that does not end in the chunk
 * where the parser gave up, or that alone is longer than the limit, was the part too large (414).
 */
function requestStartOf (err: ClientError, socket: Socket): RequestStart | undefined {
  const incoming = (socket as Socket & { parser?: { incoming?: { method?: string, url?: string } | null } }).parser?.incoming
  if (typeof incoming?.url === 'string' && typeof incoming.method === 'string') {
    const [path = incoming.url] = incoming.url.split('?')
    return { method: incoming.method, path, lineTooLong: false }
  }
  if (!Buffer.isBuffer(err.rawPacket)) return undefined
  const text = err.rawPacket.toString('latin1')
  const match = REQUEST_LINE.exec(text)
  const [start, method, target] = match ?? []
  if (start === undefined || method === undefined || target === undefined) return undefined
  const lineEnd = text.indexOf('\n', start.length)
  const [path = target] = target.split('?')
  return { method, path, lineTooLong: lineEnd === -1 || lineEnd > maxHeaderSize }
}

/**
 * Answers what Node's HTTP parser and timers reject before Fastify sees a request (a header section
 * over the size limit, a request that does not arrive within HEADERS_TIMEOUT_MS/REQUEST_TIMEOUT_MS,
 * unparseable HTTP), then closes the connection. Where the request's path can be read, the answer is
 * in its area's shape (problem+json for /api and /merchants, the `{ error, code }` envelope
 * elsewhere), and a request line over the limit is a 414 URI Too Long instead of a 431; where it
 * cannot (Node hands over only the chunk it was reading), the envelope. Nothing of the request is
 * echoed but a problem's `instance` (the path, bounded as in every problem). A HEAD request gets the
 * head alone. Node documents that the response must be written to the socket directly, and only when
 * no response is already on its way on this socket.
 */
export function clientErrorHandler (areas: readonly AreaErrors[]) {
  return function onClientError (this: FastifyInstance, err: ClientError, socket: Socket): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return
    const start = requestStartOf(err, socket)
    let answer = (err.code !== undefined ? answers[err.code] : undefined) ?? badRequest
    if (answer.status === 431 && start?.lineTooLong === true) answer = uriTooLong
    this.log.debug({ err, status: answer.status }, 'client error')
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
    if (socket.writable && inFlight?.headersSent !== true) {
      const requestId = randomUUID()
      const problem = start !== undefined && areaOf(areas, start.path)?.errorShape === 'problem'
      const body = problem
        ? JSON.stringify(buildProblem({ statusCode: answer.status, code: answer.code, message: answer.error, headers: {}, internal: false },
          { instance: bounded(start.path), traceId: requestId }))
        : JSON.stringify({ error: answer.error, code: answer.code })
      // The security headers every answer carries (helmet's, as on routed answers) and a request id of its own.
      const security = Object.entries(this.securityHeaders ?? { 'X-Content-Type-Options': 'nosniff' })
        .map(([name, value]) => `${name}: ${value}\r\n`).join('')
      socket.write(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}\r\n` +
        `Content-Type: ${problem ? PROBLEM_CONTENT_TYPE : JSON_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n` +
        `Cache-Control: no-store\r\nX-Request-Id: ${requestId}\r\n${security}\r\n${start?.method === 'HEAD' ? '' : body}`)
    }
    socket.destroy(err)
  }
}
