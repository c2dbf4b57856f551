import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'

/**
 * The practical limit of the machine: a raw node:http server that answers each
 * scenario with the status, headers and body bytes the service sent for it
 * (captured from the running service), with no framework and no storage.
 * It still reads every request body before answering, as the service must.
 */

/** One captured answer and the requests it is sent for. */
export interface CannedResponse {
  scenario: string
  method: string
  /** Matches a request path that starts with this. */
  pathPrefix: string
  /** When set, the path must also end with this (POST /api/payments/{id}/capture beside …/refunds). */
  pathSuffix?: string
  /** When set, only requests carrying this Idempotency-Key match. */
  idempotencyKey?: string
  status: number
  /** Header name/value pairs in the order the service sent them (without Date, Connection, Keep-Alive). */
  headers: Array<[string, string]>
  /** The body, base64. */
  body: string
}

/** Headers Node's http server writes itself on every response. */
const AUTOMATIC_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding'])

/** name/value pairs from a response's rawHeaders, minus what node:http adds itself. */
export function replayableHeaders (rawHeaders: string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = []
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]
    const value = rawHeaders[i + 1]
    if (name !== undefined && value !== undefined && !AUTOMATIC_HEADERS.has(name.toLowerCase())) pairs.push([name, value])
  }
  return pairs
}

/**
 * The path prefix a captured answer is sent for: any product, any payment (GET /api/payments/{id}) or anything under
 * one (POST /api/payments/{id}/refunds, whichever payment the request names); other paths (POST /api/payments,
 * GET /api/payments?limit=10) as they are.
 */
export function cannedPathPrefix (path: string): string {
  for (const prefix of ['/products/', '/api/payments/']) if (path.startsWith(prefix)) return prefix
  return path
}

/** The path suffix a captured answer also needs: the last segment of an action under a payment (`/capture`), else none. */
export function cannedPathSuffix (path: string): string | undefined {
  return /^\/api\/payments\/[^/]+\/capture$/.test(path) ? '/capture' : undefined
}

/**
 * The order candidates are tried in: those bound to an Idempotency-Key first, then those with a path suffix, then the longest path prefix (so
 * POST /api/payments/ is not taken for POST /api/payments or the other way round); otherwise as given.
 */
export function matchOrder (responses: CannedResponse[]): CannedResponse[] {
  return responses.map((entry, index) => ({ entry, index })).sort((a, b) =>
    Number(b.entry.idempotencyKey !== undefined) - Number(a.entry.idempotencyKey !== undefined) ||
    Number(b.entry.pathSuffix !== undefined) - Number(a.entry.pathSuffix !== undefined) ||
    b.entry.pathPrefix.length - a.entry.pathPrefix.length ||
    a.index - b.index
  ).map(({ entry }) => entry)
}

interface Prepared {
  entry: CannedResponse
  headers: string[]
  body: Buffer
}

const NOT_FOUND = Buffer.from('{"error":"route not found","code":"NOT_FOUND"}')

/** The request handler: the most specific matching canned response (matchOrder), else a 404 envelope. */
export function baselineHandler (responses: CannedResponse[]): (request: IncomingMessage, response: ServerResponse) => void {
  const prepared: Prepared[] = matchOrder(responses).map((entry) => ({ entry, headers: entry.headers.flat(), body: Buffer.from(entry.body, 'base64') }))
  const match = (request: IncomingMessage): Prepared | undefined => {
    for (const candidate of prepared) {
      const { entry } = candidate
      const url = request.url ?? ''
      if (entry.method !== request.method || !url.startsWith(entry.pathPrefix)) continue
      if (entry.pathSuffix !== undefined && !url.endsWith(entry.pathSuffix)) continue
      if (entry.idempotencyKey !== undefined && request.headers['idempotency-key'] !== entry.idempotencyKey) continue
      return candidate
    }
    return undefined
  }
  return (request, response) => {
    const found = match(request)
    const answer = (): void => {
      if (found === undefined) {
        response.writeHead(404, ['content-type', 'application/json; charset=utf-8', 'content-length', String(NOT_FOUND.length)])
        response.end(NOT_FOUND)
        return
      }
      response.writeHead(found.entry.status, found.headers)
      response.end(found.body)
    }
    if (request.method === 'GET' || request.method === 'HEAD') {
      request.resume()
      answer()
      return
    }
    // Read the whole body first, as the service does before it answers.
    request.on('data', () => {})
    request.on('end', answer)
  }
}

/** Starts the baseline on `port` (0: any free port) with the service's keep-alive timeout. */
export async function startBaseline (responses: CannedResponse[], port = 0, host = '127.0.0.1'): Promise<Server> {
  const server = createServer({ keepAliveTimeout: 72_000 }, baselineHandler(responses))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => { server.off('error', reject); resolve() })
  })
  return server
}

/* c8 ignore start */
if (require.main === module) {
  const file = process.argv[2]
  if (file === undefined) {
    process.stderr.write('usage: node dist/bench/baseline-server.js RESPONSES.json\n')
    process.exit(2)
  }
  const responses = JSON.parse(readFileSync(file, 'utf8')) as CannedResponse[]
  startBaseline(responses, Number(process.env.PORT ?? 0)).then((server) => {
    process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`)
    const stop = (): void => { server.close(); server.closeAllConnections() }
    process.on('SIGTERM', stop)
    process.on('SIGINT', stop)
  }).catch((err: unknown) => {
    process.stderr.write(`baseline failed to start: ${String(err)}\n`)
    process.exit(1)
  })
}
/* c8 ignore stop */
