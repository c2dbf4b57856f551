import type { IncomingMessage, ServerResponse } from 'node:http'
import helmet, { type HelmetOptions } from 'helmet'

/**
 * Helmet's response headers for `options`, computed once. @fastify/helmet calls
 * helmet(options) again for every request, re-validating and re-serialising the
 * whole configuration (CSP included) each time; with static options (no nonces,
 * no directive functions) the headers never depend on the request, so the
 * service sets this precomputed list instead. Same helmet, same headers.
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
