import fp from 'fastify-plugin'
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { REQUEST_ID_PATTERN } from '../schemas/openapi-contract'

export const REQUEST_ID_HEADER = 'x-request-id'
const SAFE_REQUEST_ID = new RegExp(REQUEST_ID_PATTERN)

/** Honours a well-formed incoming X-Request-Id, otherwise makes a new one. */
export function requestIdFor (request: IncomingMessage): string {
  const incoming = request.headers[REQUEST_ID_HEADER]
  if (typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming)) return incoming
  return randomUUID()
}

/** Echoes the request id on every response. */
export default fp(async (app) => {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id)
    done()
  })
}, { name: 'request-id', fastify: '5.x' })
