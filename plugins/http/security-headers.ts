import type { IncomingMessage, ServerResponse } from 'node:http'
import helmet, { type HelmetOptions } from 'helmet'

/**
 * Helmet's response headers for `options`, computed once. @fastify/helmet sets
 * them on every routed response; this list serves the answers the router gives
 * before any hook runs (undecodable URLs, oversized ids), so those carry the
 * same headers. Same helmet, same options, same headers.
 */
export function securityHeaders (options: Readonly<HelmetOptions>): Array<[string, string]> {
  const headers = new Map<string, [string, string]>()
  const recorder = {
    setHeader (name: string, value: string | number | readonly string[]) {
      headers.set(name.toLowerCase(), [name, String(value)])
      return this
    },
    removeHeader (name: string) { headers.delete(name.toLowerCase()) }
  }
  const request = { headers: {}, method: 'GET', url: '/' }
  helmet(options)(request as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    if (err !== undefined && err !== null) throw err
  })
  return [...headers.values()]
}
