import { Socket } from 'node:net'
import type { IncomingMessage } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'

/** The most of a refused body read and discarded after the answer (nginx: lingering close). */
export const LINGER_MAX_BYTES = 16 * 1024 * 1024
/** The longest the connection stays open after the answer, and the longest pause between two chunks of the rest. */
export const LINGER_MAX_MS = 5000
export const LINGER_IDLE_MS = 1000

/**
 * Answers sent while the client is still sending its body (413, or a 4xx decided before the body was
 * read) close the connection in stages, as RFC 9112 §9.6 asks: the answer is written, the sending
 * side is closed (FIN), and the rest of the body is read and discarded — at most LINGER_MAX_BYTES,
 * for at most LINGER_MAX_MS, never idle for more than LINGER_IDLE_MS — before the socket is closed.
 * Closing at once, with the body still arriving, makes the kernel answer the client's next segment
 * with a reset, which discards the answer on the client's side before it reads it: the client sees
 * ECONNRESET/EPIPE instead of the 413.
 *
 * Called by the root onSend hook (server-limits.ts). Only real sockets (not `app.inject`).
 */
export function lingerAfterRefusedBody (request: FastifyRequest, reply: FastifyReply): void {
  const incoming = request.raw
  const socket = incoming.socket as (Socket & { destroySoon?: () => void }) | null
  if (!(socket instanceof Socket) || reply.statusCode < 400) return
  const refusedBody = reply.statusCode === 413 || (incoming.complete === false && hasBody(incoming))
  if (!refusedBody) return
  reply.header('connection', 'close')
  // Node ends a `Connection: close` response with socket.destroySoon(): end, then destroy at once.
  socket.destroySoon = function lingeringClose (this: Socket): void {
    this.end()
    drainThenClose(incoming, this)
  }
}

function hasBody (incoming: IncomingMessage): boolean {
  return incoming.headers['transfer-encoding'] !== undefined || Number(incoming.headers['content-length'] ?? 0) > 0
}

function drainThenClose (incoming: IncomingMessage, socket: Socket): void {
  let drained = 0
  const close = (): void => {
    clearTimeout(deadline)
    clearTimeout(idle)
    socket.destroy()
  }
  const deadline = setTimeout(close, LINGER_MAX_MS)
  let idle = setTimeout(close, LINGER_IDLE_MS)
  socket.once('close', () => { clearTimeout(deadline); clearTimeout(idle) })
  if (incoming.complete) { close(); return }
  // The HTTP parser still frames the body (Content-Length or chunked) into the request stream: read it and let it go.
  incoming.removeAllListeners('data')
  incoming.on('data', (chunk: Buffer) => {
    drained += chunk.length
    if (drained > LINGER_MAX_BYTES) { close(); return }
    clearTimeout(idle)
    idle = setTimeout(close, LINGER_IDLE_MS)
  })
  incoming.once('end', close)
  incoming.once('error', close)
  incoming.resume()
}
