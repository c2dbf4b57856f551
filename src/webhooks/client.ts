import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import type { Agent } from 'undici'
import { isPrivateAddress, privateMessage } from './addresses'
import { RESPONSE_BODY_KEPT, RESPONSE_BODY_READ_LIMIT } from '../domain/webhooks'

export interface WebhookResponse {
  /** null: no response (time-out, connection error, refused address). */
  statusCode: number | null
  retryAfter: string | undefined
  body: string | null
  error: string | null
  durationMs: number
}

export interface WebhookClient {
  /** `signal`: aborts the attempt (shutdown); the response then says `aborted`. */
  post: (url: string, headers: Record<string, string>, body: string, signal?: AbortSignal) => Promise<WebhookResponse>
  close: () => Promise<void>
}

export class PrivateAddressError extends Error {
  override name = 'PrivateAddressError'
  readonly code = 'EPRIVATEADDRESS'
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `lookup` for net/tls.connect that refuses private addresses after resolution: the check
 * runs on the addresses the socket will actually connect to, so DNS rebinding cannot slip
 * a private address in between a check and the connection.
 */
export function guardedLookup (hostname: string, options: { all?: boolean, family?: number }, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err !== null) {
      callback(err, [])
      return
    }
    const refused = addresses.find((entry) => isPrivateAddress(entry.address))
    const [first] = addresses
    if (refused !== undefined || first === undefined) {
      // The resolved address stays out of the message: it is shown to the merchant in the delivery log.
      callback(new PrivateAddressError(`${privateMessage} (${hostname})`), [])
      return
    }
    if (options.all === true) callback(null, addresses)
    else callback(null, first.address, first.family)
  })
}

/**
 * The delivery client: undici, one connection pool per origin, no redirects followed
 * (undici's request never follows them), a time-out on the whole attempt, at most
 * RESPONSE_BODY_READ_LIMIT bytes of the answer read. Unless `allowPrivate`, every
 * connection goes through guardedLookup, and literal private IPs are refused before connecting.
 */
export function webhookClient (options: { timeoutMs: number, allowPrivate: boolean }): WebhookClient {
  // undici is loaded with the first delivery, not at start-up (~100 ms of start-up CPU for a service that may
  // have no webhook endpoint at all).
  let undici: { agent: Agent, request: typeof import('undici').request } | undefined
  const load = (): NonNullable<typeof undici> => {
    if (undici !== undefined) return undici
    const { Agent: UndiciAgent, request } = require('undici') as typeof import('undici')
    const agent = new UndiciAgent({
      connect: {
        timeout: options.timeoutMs,
        ...(options.allowPrivate ? {} : { lookup: guardedLookup as never })
      },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 4_000,
      connections: 16
    })
    undici = { agent, request }
    return undici
  }
  return {
    async post (url, headers, body, abort) {
      const started = performance.now()
      const elapsed = (): number => Math.round(performance.now() - started)
      if (!options.allowPrivate) {
        const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
        if (isIP(host) !== 0 && isPrivateAddress(host)) {
          return { statusCode: null, retryAfter: undefined, body: null, error: privateMessage, durationMs: elapsed() }
        }
      }
      const signal = abort === undefined ? AbortSignal.timeout(options.timeoutMs) : AbortSignal.any([abort, AbortSignal.timeout(options.timeoutMs)])
      try {
        const { agent, request } = load()
        const response = await request(url, { method: 'POST', headers, body, dispatcher: agent, signal })
        let kept = ''
        let read = 0
        try {
          for await (const chunk of response.body) {
            const buffer = chunk as Buffer
            if (kept.length < RESPONSE_BODY_KEPT) kept += buffer.subarray(0, RESPONSE_BODY_KEPT - kept.length).toString('utf8')
            read += buffer.length
            if (read >= RESPONSE_BODY_READ_LIMIT) break
          }
        } catch {
          // A body cut off or too slow: the status is what counts.
        } finally {
          if (read >= RESPONSE_BODY_READ_LIMIT) response.body.destroy()
        }
        const retryAfter = response.headers['retry-after']
        return {
          statusCode: response.statusCode,
          retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
          body: kept.slice(0, RESPONSE_BODY_KEPT),
          error: null,
          durationMs: elapsed()
        }
      } catch (err) {
        const error = abort?.aborted === true ? 'aborted' : describe(err, options.timeoutMs)
        return { statusCode: null, retryAfter: undefined, body: null, error, durationMs: elapsed() }
      }
    },
    async close () { await undici?.agent.close() }
  }
}

function describe (err: unknown, timeoutMs: number): string {
  const error = err as { name?: string, code?: string, message?: string, cause?: { code?: string, message?: string } }
  if (error.name === 'TimeoutError' || error.code === 'UND_ERR_HEADERS_TIMEOUT' || error.code === 'UND_ERR_BODY_TIMEOUT' ||
    error.code === 'UND_ERR_CONNECT_TIMEOUT') return `no answer within ${timeoutMs} ms`
  if (error.code === 'EPRIVATEADDRESS' || error.cause?.code === 'EPRIVATEADDRESS') return error.message ?? privateMessage
  const code = error.code ?? error.cause?.code
  return code === undefined ? `connection failed: ${error.message ?? 'unknown error'}` : `connection failed (${code})`
}
