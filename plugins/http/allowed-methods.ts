import fp from 'fastify-plugin'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { MethodNotAllowedError } from '../../src/domain/errors'

declare module 'fastify' {
  interface FastifyInstance {
    /** The methods some route serves at this request path (OPTIONS included), or undefined when no route serves the path. */
    allowedMethods: (path: string) => string[] | undefined
  }
}

/** The order of `Allow` (RFC 9110 §10.2.1 does not prescribe one; this one is stable). */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/** `/merchants/:id/api-keys` → a regular expression for the paths it serves. */
function patternOf (url: string): RegExp {
  const source = url.split('/').map((segment) => segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('/')
  return new RegExp(`^${source}/?$`)
}

/**
 * Records every route as it is registered, so a request whose path some route serves but whose
 * method none does is answered 405 with `Allow` (RFC 9110 §15.5.6) instead of 404, and OPTIONS on
 * any known resource path is answered 204 with `Allow` (and `Accept-Patch` where PATCH is served).
 * Register before the routes. /docs (Swagger UI) is left to its plugin.
 */
export default fp(async (app) => {
  const routes = new Map<string, { pattern: RegExp, methods: Set<string> }>()
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs') || route.url.includes('*')) return
    const url = route.url.length > 1 ? route.url.replace(/\/$/, '') : route.url
    const entry = routes.get(url) ?? { pattern: patternOf(url), methods: new Set<string>() }
    for (const method of [route.method].flat()) entry.methods.add(method)
    routes.set(url, entry)
  })
  app.decorate('allowedMethods', (path: string): string[] | undefined => {
    const methods = new Set<string>()
    for (const { pattern, methods: served } of routes.values()) {
      if (pattern.test(path)) for (const method of served) methods.add(method)
    }
    if (methods.size === 0) return undefined
    methods.add('OPTIONS')
    return ORDER.filter((method) => methods.has(method))
  })
}, { name: 'allowed-methods', fastify: '5.x' })

export const ACCEPT_PATCH = 'application/merge-patch+json, application/json'

type ErrorRenderer = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply

/**
 * For a not-found handler: when the path is a known resource, answers OPTIONS (204, Allow) or any
 * other method (405 in the area's shape, rendered by `render`) and returns the reply; otherwise
 * undefined (a real 404).
 */
export function answerUnservedMethod (request: FastifyRequest, reply: FastifyReply, render: ErrorRenderer): FastifyReply | undefined {
  const [path = request.url] = request.url.split('?')
  const allowed = request.server.allowedMethods(path)
  if (allowed === undefined) return undefined
  if (request.method === 'OPTIONS') {
    reply.code(204).header('allow', allowed.join(', '))
    if (allowed.includes('PATCH')) reply.header('accept-patch', ACCEPT_PATCH)
    return reply.send()
  }
  return render(new MethodNotAllowedError(allowed) as unknown as FastifyError, request, reply)
}
