import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { buildTestApp, merchantWithKey } from '../helpers/app'
import { declarationProblem } from '../../plugins/auth'
import { userWithRole } from '../helpers/users'
import { ROLE_SETS, MERCHANT_ROLES, type MerchantRole } from '../../src/domain/users'
import { rolesTable } from '../../scripts/roles-table'

/**
 * Every route × every merchant role, generated from the routes' own declarations (`config.roles`): an allowed cell is
 * anything but 401/403, a refused one is a 403 problem (and a denied entry in the audit log for a write). A route a
 * merchant can reach without `config.roles` does not start (the auth plugin's onReady check), so it fails here first.
 */
t.test('each role may call exactly the routes its role set names', async (t) => {
  const app = await buildTestApp(t)
  const merchant = await merchantWithKey(app)
  const headersOf: Record<MerchantRole, Record<string, string | undefined>> = {
    api_key: merchant.auth,
    owner: (await userWithRole(app, merchant.merchantId, 'owner')).headers,
    developer: (await userWithRole(app, merchant.merchantId, 'developer')).headers,
    support: (await userWithRole(app, merchant.merchantId, 'support')).headers,
    viewer: (await userWithRole(app, merchant.merchantId, 'viewer')).headers
  }
  const routes = app.routeAccess().filter((route) => route.roles !== undefined && route.method !== 'HEAD')
  t.ok(routes.length > 40, `${routes.length} routes a merchant may call`)
  for (const route of routes) {
    const url = route.url.replace(/:id\b/, route.auth === 'admin-or-own-merchant' ? merchant.merchantId : randomUUID()).replace(/:[A-Za-z]+/g, () => randomUUID())
    for (const role of MERCHANT_ROLES) {
      const allowed = (ROLE_SETS[route.roles as keyof typeof ROLE_SETS] as readonly string[]).includes(role)
      const res = await app.inject({ method: route.method as 'GET', url, headers: headersOf[role] })
      if (allowed) {
        t.notOk([401, 403].includes(res.statusCode), `${role} may ${route.method} ${route.url} (${res.statusCode})`)
      } else {
        t.equal(res.statusCode, 403, `${role} may not ${route.method} ${route.url}`)
        t.match(res.headers['content-type'], /application\/problem\+json/)
      }
    }
  }
  const denied = await app.auditLog.list({ limit: 100 }, merchant.merchantId)
  t.ok(denied.data.some((entry) => entry.outcome === 'denied' && entry.actor.type === 'user'), 'refused writes are in the audit log')
})

t.test('start-up fails for a route a merchant can reach without config.roles, a write without config.audit, or roles on an operator route', async (t) => {
  const route = { method: 'GET', url: '/api/x', auth: 'merchant' as const, roles: 'read' as const, audit: undefined }
  t.equal(declarationProblem([route]), undefined)
  t.match(declarationProblem([{ ...route, roles: undefined }]), /need config.roles/)
  t.match(declarationProblem([{ ...route, auth: 'admin' }]), /and only they/)
  t.match(declarationProblem([{ ...route, method: 'POST' }]), /need config.audit/)
  t.equal(declarationProblem([{ ...route, method: 'POST', audit: false }]), undefined)
  t.match(declarationProblem([{ ...route, auth: undefined }]), /without a valid config.auth/)
})

t.test('docs/security.md holds the role table the routes declare (regenerate with `npm run roles-table`)', async (t) => {
  const app = await buildTestApp(t)
  const docs = readFileSync(join(__dirname, '../../docs/security.md'), 'utf8')
  const table = rolesTable(app.routeAccess())
  t.ok(docs.includes(table), 'the table in docs/security.md is the generated one')
})
