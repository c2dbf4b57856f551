import fp from 'fastify-plugin'
import type { Server, ServerOptions } from 'node:http'
import type { Socket } from 'node:net'
import type { Config } from '../../src/config'
import { MAX_PARAM_LENGTH } from '../../schemas/patterns'
import { lingerAfterRefusedBody } from './lingering-close'

/**
 * Longest path parameter the router accepts. Fastify's default (100) answers longer ids with its own
 * 414 in no area's shape; the schemas and handlers judge ids (products: 400, payments: 400 over 64
 * characters, merchants: 404 for anything that is not a GUID), so the router only guards against
 * absurd lengths (the header size limit, 16 KiB, bounds a request line anyway).
 */
export { MAX_PARAM_LENGTH }

/**
 * Options for Node's HTTP server. Node enforces headersTimeout and requestTimeout from a periodic
 * sweep (`connectionsCheckingInterval`, 30 s by default), which would let a slow client hold a
 * socket up to 30 s past its deadline; the sweep runs at a quarter of the shortest time-out,
 * between 10 ms and 1 s, so the deadlines hold within that resolution.
 */
export function httpServerOptions (config: Pick<Config, 'HEADERS_TIMEOUT_MS' | 'REQUEST_TIMEOUT_MS'>): ServerOptions {
  const timeouts = [config.HEADERS_TIMEOUT_MS, config.REQUEST_TIMEOUT_MS].filter((ms) => ms > 0)
  const shortest = timeouts.length > 0 ? Math.min(...timeouts) : 4000
  return {
    headersTimeout: config.HEADERS_TIMEOUT_MS,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: Math.min(1000, Math.max(10, Math.floor(shortest / 4))),
    // A missing Host is still a 400, but answered by the service (plugins/http/request-hygiene.ts), in the
    // area's shape with the security headers, instead of Node's bare 400.
    requireHostHeader: false
  }
}

/**
 * CONNECTION_TIMEOUT_MS: a connection that sends no request for this long after it was opened is
 * closed. Only until its first request arrives: Node's own `server.timeout` (Fastify's
 * connectionTimeout, kept at 0) is a socket inactivity time-out that would also cut a request still
 * being worked on after that long, without any answer. Afterwards REQUEST_TIMEOUT_MS bounds each
 * request and KEEP_ALIVE_TIMEOUT_MS the idle time between requests.
 */
export function closeIdleBeforeFirstRequest (server: Server, timeoutMs: number): void {
  if (timeoutMs <= 0) return
  const waiting = new WeakSet<Socket>()
  server.on('connection', (socket: Socket) => {
    // Node's 'timeout' listener on the socket destroys it (no request, no response to time out).
    socket.setTimeout(timeoutMs)
    waiting.add(socket)
  })
  server.on('request', (request: { socket: Socket }) => {
    if (waiting.delete(request.socket)) request.socket.setTimeout(0)
  })
}

/**
 * How connections are bounded and closed, beyond the server options (server-options.ts): an idle
 * connection is closed before its first request (closeIdleBeforeFirstRequest); a refused body is
 * answered, then read and discarded for a while before closing (lingering-close.ts); during shutdown,
 * requests already in flight are answered with `Connection: close` — server.close() only drops
 * connections idle at that moment, so a keep-alive socket that was busy would otherwise hold
 * app.close() open until the client or keepAliveTimeout drops it.
 */
export default fp(async (app) => {
  closeIdleBeforeFirstRequest(app.server, app.config.CONNECTION_TIMEOUT_MS)
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  // One callback hook for both (every response runs it).
  app.addHook('onSend', (request, reply, payload, done) => {
    lingerAfterRefusedBody(request, reply)
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
}, { name: 'server-limits', dependencies: ['config'], fastify: '5.x' })
