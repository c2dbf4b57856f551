import fp from 'fastify-plugin'
import type { FastifyReply } from 'fastify'
import fastifyStatic from '@fastify/static'
import { existsSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'

export const DASHBOARD_PREFIX = '/dashboard/'
const ASSETS_PREFIX = `${DASHBOARD_PREFIX}assets/`

/**
 * The dashboard's own CSP, stricter than the API's (plugins/security.ts): no 'unsafe-inline' anywhere,
 * since the Vite build ships only files (styles changed at run time go through the CSSOM, which CSP allows).
 */
export const DASHBOARD_CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "object-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"
].join('; ')

/** Hashed file names change with their content, so a browser may keep them for a year; index.html must be revalidated. */
export const IMMUTABLE = 'public, max-age=31536000, immutable'
export const REVALIDATE = 'no-cache'

/** Where `npm run build` puts the dashboard: dist/dashboard of the repository, seen from dist/plugins or from plugins/ (tests). */
export function buildDirectoryFor (pluginDirectory: string): string {
  const parent = dirname(pluginDirectory)
  const repository = basename(parent) === 'dist' ? dirname(parent) : parent
  return join(repository, 'dist', 'dashboard')
}

export interface DashboardOptions {
  /** The Vite build output (default dist/dashboard). */
  root?: string
}

/**
 * Serves the dashboard's Vite build (dashboard/) under /dashboard/: index.html revalidated on every load,
 * hashed assets cached for a year, under the dashboard's CSP. The pages call the JSON API through the
 * dashboard session; they implement no rule of their own. Without a build (tests run before `npm run build`)
 * every dashboard path answers 503 saying so.
 */
export default fp<DashboardOptions>(async (app, options) => {
  const root = options.root ?? buildDirectoryFor(__dirname)
  await app.register(async (dashboard) => {
    // Static files are public: the pages hold no data; the data comes from the API, which asks for a session.
    // Not part of the API: hidden from the OpenAPI document.
    dashboard.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: 'public' }
      route.schema = { ...route.schema, hide: true }
    })
    dashboard.addHook('onSend', async (request, reply, payload) => {
      reply.header('content-security-policy', DASHBOARD_CSP)
      if (reply.statusCode < 400) {
        reply.header('cache-control', request.url.startsWith(ASSETS_PREFIX) ? IMMUTABLE : REVALIDATE)
      }
      return payload
    })
    if (!existsSync(join(root, 'index.html'))) {
      app.log.warn({ root }, 'the dashboard is not built (npm run build): /dashboard/ answers 503')
      const notBuilt = async (_request: unknown, reply: FastifyReply) =>
        reply.code(503).type('text/plain; charset=utf-8').send('The dashboard is not built on this server: run `npm run build`, then restart.\n')
      dashboard.get('/dashboard', notBuilt)
      dashboard.get(`${DASHBOARD_PREFIX}*`, notBuilt)
      return
    }
    // /dashboard → /dashboard/, where index.html is served.
    dashboard.get('/dashboard', async (_request, reply) => reply.redirect(DASHBOARD_PREFIX, 301))
    await dashboard.register(fastifyStatic, {
      root,
      prefix: DASHBOARD_PREFIX,
      index: 'index.html',
      // Cache-Control is set above, per file kind; ETag and Last-Modified stay for revalidation.
      cacheControl: false,
      decorateReply: false,
      dotfiles: 'deny'
    })
  })
}, { name: 'dashboard', dependencies: ['security'], fastify: '5.x' })
