import { STATUS_CODES } from 'node:http'
import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { JSON_CONTENT_TYPE } from './envelope'

interface ClientError extends Error { code?: string }

const answers: Record<string, { status: number, error: string, code: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, error: 'request timed out: the request (headers and body) did not arrive in time', code: 'REQUEST_TIMEOUT' },
  HPE_HEADER_OVERFLOW: { status: 431, error: 'request header fields too large', code: 'HEADERS_TOO_LARGE' }
}
const badRequest = { status: 400, error: 'malformed HTTP request', code: 'BAD_REQUEST' }

/**
 * Answers what Node's HTTP parser and timers reject before Fastify sees a request (a header section
 * over the size limit, a request that does not arrive within HEADERS_TIMEOUT_MS/REQUEST_TIMEOUT_MS,
 * unparseable HTTP) with the infrastructure envelope `{ error, code }`, then closes the connection.
 * Nothing of the request is echoed. Node documents that the response must be written to the socket
 * directly, and only when no response is already on its way on this socket.
 */
export function clientErrorHandler (this: FastifyInstance, err: ClientError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const answer = (err.code !== undefined ? answers[err.code] : undefined) ?? badRequest
  this.log.debug({ err, status: answer.status }, 'client error')
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (socket.writable && inFlight?.headersSent !== true) {
    const body = JSON.stringify({ error: answer.error, code: answer.code })
    // The security headers every answer carries (helmet's, as on routed answers) and a request id of its own.
    const security = Object.entries(this.securityHeaders ?? { 'X-Content-Type-Options': 'nosniff' })
      .map(([name, value]) => `${name}: ${value}\r\n`).join('')
    socket.write(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}\r\n` +
      `Content-Type: ${JSON_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n` +
      `Cache-Control: no-store\r\nX-Request-Id: ${randomUUID()}\r\n${security}\r\n${body}`)
  }
  socket.destroy(err)
}
