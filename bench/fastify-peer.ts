import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance, type HTTPMethods } from 'fastify'
import helmet from '@fastify/helmet'
import rateLimit from '@fastify/rate-limit'
import { matchOrder, type CannedResponse } from './baseline-server'

/**
 * What the design card's packages cost before any plugin of ours (issue 41): a bare Fastify 5 app with only
 * @fastify/helmet and @fastify/rate-limit (global, a limit no run reaches, as the service's), routing each scenario's
 * request by its pattern and answering the status, content type, Location and body the service sent for it (captured
 * from the running service, as the baseline's), from memory. Fastify parses the JSON bodies; there is no
 * authentication, validation, storage or logging. The distance from this row to the service is what our own plugins,
 * services and database cost.
 */

/** The route pattern a captured answer is served on (the baseline's prefixes and suffixes, as Fastify routes). */
export function routePattern (entry: Pick<CannedResponse, 'method' | 'pathPrefix' | 'pathSuffix'>): string {
  const path = entry.pathPrefix.split('?')[0] ?? entry.pathPrefix
  if (path === '/products/') return '/products/:id'
  if (path === '/api/payments/') {
    if (entry.pathSuffix !== undefined) return `/api/payments/:id${entry.pathSuffix}`
    return entry.method === 'GET' ? '/api/payments/:id' : '/api/payments/:id/refunds'
  }
  return path
}

/** The headers a peer answer copies from the captured one; the framework and its plugins write the rest. */
const COPIED_HEADERS = new Set(['content-type', 'location'])

interface Answer { entry: CannedResponse, headers: Record<string, string>, body: Buffer }

export async function createFastifyPeer (responses: CannedResponse[]): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, keepAliveTimeout: 72_000 })
  await app.register(helmet)
  await app.register(rateLimit, { max: 1_000_000_000, timeWindow: 60_000 })
  const routes = new Map<string, { method: HTTPMethods, url: string, answers: Answer[] }>()
  for (const entry of matchOrder(responses)) {
    const url = routePattern(entry)
    const id = `${entry.method} ${url}`
    const headers = Object.fromEntries(entry.headers.filter(([name]) => COPIED_HEADERS.has(name.toLowerCase())))
    const route = routes.get(id) ?? { method: entry.method as HTTPMethods, url, answers: [] }
    route.answers.push({ entry, headers, body: Buffer.from(entry.body, 'base64') })
    routes.set(id, route)
  }
  for (const { method, url, answers } of routes.values()) {
    app.route({
      method,
      url,
      handler: async (request, reply) => {
        const key = request.headers['idempotency-key']
        const answer = answers.find(({ entry }) => entry.idempotencyKey === undefined || entry.idempotencyKey === key) as Answer
        return await reply.code(answer.entry.status).headers(answer.headers).send(answer.body)
      }
    })
  }
  await app.ready()
  return app
}

export async function startFastifyPeer (responses: CannedResponse[], port = 0, host = '127.0.0.1'): Promise<FastifyInstance> {
  const app = await createFastifyPeer(responses)
  await app.listen({ port, host })
  return app
}

/* c8 ignore start */
if (require.main === module) {
  const file = process.argv[2]
  if (file === undefined) {
    process.stderr.write('usage: node dist/bench/fastify-peer.js RESPONSES.json\n')
    process.exit(2)
  }
  startFastifyPeer(JSON.parse(readFileSync(file, 'utf8')) as CannedResponse[], Number(process.env.PORT ?? 0)).then((app) => {
    process.stdout.write(`listening ${(app.server.address() as AddressInfo).port}\n`)
    const stop = (): void => { app.close().catch(() => {}) }
    process.on('SIGTERM', stop)
    process.on('SIGINT', stop)
  }).catch((err: unknown) => {
    process.stderr.write(`fastify peer failed to start: ${String(err)}\n`)
    process.exit(1)
  })
}
/* c8 ignore stop */
