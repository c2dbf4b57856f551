import t from 'tap'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildTestApp } from '../helpers/app'
import { buildDirectoryFor, DASHBOARD_CSP, IMMUTABLE, REVALIDATE } from '../../plugins/dashboard'

const INDEX = '<!doctype html><html lang="en"><head><title>Dashboard</title><script type="module" src="/dashboard/assets/index-Ab12Cd34.js"></script></head><body><div id="app"></div></body></html>'
const SCRIPT = 'console.log("dashboard")\n'

/** A stand-in for `vite build`'s output (the real one is exercised by test-browser/dashboard.browser.mjs). */
function fakeBuild (): string {
  const root = t.testdir()
  mkdirSync(join(root, 'assets'))
  writeFileSync(join(root, 'index.html'), INDEX)
  writeFileSync(join(root, 'assets', 'index-Ab12Cd34.js'), SCRIPT)
  return root
}

// The dashboard's files are not part of the API document: responses are not checked against it.
const notInTheDocument = { validateResponses: false }

t.test('index.html: revalidated on every load, under the dashboard CSP', async (t) => {
  const app = await buildTestApp(t, {}, { dashboard: { root: fakeBuild() } }, notInTheDocument)
  for (const url of ['/dashboard/', '/dashboard/index.html']) {
    const res = await app.inject({ method: 'GET', url, headers: { authorization: undefined } })
    t.equal(res.statusCode, 200, url)
    t.match(res.headers['content-type'], /^text\/html/, url)
    t.equal(res.body, INDEX, url)
    t.equal(res.headers['cache-control'], REVALIDATE, `${url}: no-cache`)
    t.equal(res.headers['content-security-policy'], DASHBOARD_CSP, `${url}: the dashboard's own CSP`)
    t.ok(res.headers.etag, `${url}: an ETag to revalidate against`)
  }
  const csp = DASHBOARD_CSP.split('; ')
  for (const directive of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
    "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"]) {
    t.ok(csp.includes(directive), `CSP has ${directive}`)
  }
  t.notMatch(DASHBOARD_CSP, /unsafe-inline|unsafe-eval/, 'nothing inline, nothing evaluated')
})

t.test('hashed assets are cached for a year; /dashboard redirects to /dashboard/', async (t) => {
  const app = await buildTestApp(t, {}, { dashboard: { root: fakeBuild() } }, notInTheDocument)
  const asset = await app.inject({ method: 'GET', url: '/dashboard/assets/index-Ab12Cd34.js' })
  t.equal(asset.statusCode, 200)
  t.match(asset.headers['content-type'], /javascript/)
  t.equal(asset.body, SCRIPT)
  t.equal(asset.headers['cache-control'], IMMUTABLE)
  t.equal(asset.headers['content-security-policy'], DASHBOARD_CSP)

  const head = await app.inject({ method: 'HEAD', url: '/dashboard/assets/index-Ab12Cd34.js' })
  t.equal(head.statusCode, 200, 'HEAD is served too')
  t.equal(head.headers['cache-control'], IMMUTABLE)

  const missing = await app.inject({ method: 'GET', url: '/dashboard/assets/index-gone.js' })
  t.equal(missing.statusCode, 404, 'an asset of an older build is 404')
  t.not(missing.headers['cache-control'], IMMUTABLE, 'and the 404 is not cached for a year')

  const bare = await app.inject({ method: 'GET', url: '/dashboard' })
  t.equal(bare.statusCode, 301)
  t.equal(bare.headers.location, '/dashboard/')

  const outside = await app.inject({ method: 'GET', url: '/dashboard/../package.json' })
  t.not(outside.statusCode, 200, 'nothing outside the build is served')
})

t.test('the API keeps its own CSP and Cache-Control', async (t) => {
  const app = await buildTestApp(t, {}, { dashboard: { root: fakeBuild() } })
  const res = await app.inject({ method: 'GET', url: '/health/live' })
  t.equal(res.statusCode, 200)
  t.not(res.headers['content-security-policy'], DASHBOARD_CSP)
  t.equal(res.headers['cache-control'], 'no-store')
})

t.test('without a build, /dashboard/ answers 503 saying how to build it', async (t) => {
  const app = await buildTestApp(t, {}, { dashboard: { root: join(t.testdir(), 'absent') } }, notInTheDocument)
  for (const url of ['/dashboard', '/dashboard/', '/dashboard/assets/index-Ab12Cd34.js']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 503, url)
    t.match(res.body, /npm run build/, url)
    t.equal(res.headers['content-security-policy'], DASHBOARD_CSP, url)
  }
})

t.test('the dashboard\'s static files are not part of the OpenAPI document (its session and account API is)', async (t) => {
  const app = await buildTestApp(t, {}, { dashboard: { root: fakeBuild() } })
  const document = (await app.inject({ method: 'GET', url: '/docs/json' })).json() as { paths: Record<string, unknown> }
  t.same(Object.keys(document.paths).filter((path) => path.startsWith('/dashboard')).sort(),
    ['/dashboard/invite', '/dashboard/password', '/dashboard/session', '/dashboard/totp', '/dashboard/totp/confirm'])
})

t.test('by default the build is read from dist/dashboard of the repository', async (t) => {
  t.equal(buildDirectoryFor(join('/srv', 'service', 'dist', 'plugins')), join('/srv', 'service', 'dist', 'dashboard'), 'compiled: dist/plugins')
  t.equal(buildDirectoryFor(join('/srv', 'service', 'plugins')), join('/srv', 'service', 'dist', 'dashboard'), 'from source (tests)')
  const built = existsSync(join(__dirname, '..', '..', 'dist', 'dashboard', 'index.html'))
  const app = await buildTestApp(t, {}, {}, notInTheDocument)
  const res = await app.inject({ method: 'GET', url: '/dashboard/' })
  t.equal(res.statusCode, built ? 200 : 503, built ? 'this checkout is built: served' : 'not built: 503')
})
