/**
 * The table of who may call which route (docs/security.md, "Roles"), generated from the routes' own
 * declarations (`config.auth`, `config.roles`); test/routes/roles.test.ts checks the document holds it.
 *
 *   npm run roles-table          # prints the table
 */
import type { FastifyInstance } from 'fastify'
import { MERCHANT_ROLES, ROLE_SETS, type RoleSet } from '../src/domain/users'
import { buildApp } from '../app/app'
import { loadConfig } from '../src/load-config'
import { OPENAPI_ENV } from './openapi-document'

type RouteAccess = ReturnType<FastifyInstance['routeAccess']>[number]

const HEADER = ['Route', 'operator', ...MERCHANT_ROLES.map((role) => role === 'api_key' ? 'API key' : role)]

function cells (route: RouteAccess): string[] {
  const operator = route.auth === 'admin' || route.auth === 'admin-or-own-merchant'
  const allowed: readonly string[] = route.roles === undefined ? [] : ROLE_SETS[route.roles as RoleSet]
  return [operator ? '✓' : '', ...MERCHANT_ROLES.map((role) => allowed.includes(role) ? '✓' : '')]
}

/** One row per route that needs a credential, in path order. */
export function rolesTable (routes: readonly RouteAccess[]): string {
  const rows = routes
    .filter((route) => route.auth !== 'public' && route.method !== 'HEAD' && !route.url.startsWith('/docs'))
    .map((route) => ({ name: `\`${route.method} ${route.url.replace(/:([A-Za-z]+)/g, '{$1}')}\``, cells: cells(route) }))
    .sort((a, b) => a.name.localeCompare(b.name))
  const line = (values: readonly string[]): string => `| ${values.join(' | ')} |`
  return [line(HEADER), line(HEADER.map(() => '---')), ...rows.map((row) => line([row.name, ...row.cells]))].join('\n') + '\n'
}

/* c8 ignore start */
async function main (): Promise<void> {
  const app = await buildApp(loadConfig(OPENAPI_ENV), { logger: false })
  await app.ready()
  process.stdout.write(rolesTable(app.routeAccess()))
  await app.close()
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`roles-table: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
    process.exit(1)
  })
}
/* c8 ignore stop */
