// What the browser test files share: the built service on a port the OS picks, Chromium's launch settings, the API
// client, the watch for problems on a page, axe, and the dashboard's sign-in.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
export const SCREENSHOTS = join(ROOT, 'test-browser', 'screenshots')
export const ADMIN_API_KEY = 'browser-test-admin-key-0123456789abcdefghijkl'
export const ADMIN = { authorization: `Bearer ${ADMIN_API_KEY}` }
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run']

export async function launchChromium () {
  return await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true })
}

/**
 * Starts `node dist/app/server.js` (in-memory SQLite, the browser tests' admin key, plus `env`) and resolves with
 * `{ url, stop }` once it listens; `stop` ends it with SIGTERM and waits for its exit.
 */
export function startService (env = {}) {
  const server = spawn(process.execPath, [join(ROOT, 'dist', 'app', 'server.js')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DATABASE_URL: 'file::memory:', ADMIN_API_KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  async function stop () {
    if (server.exitCode !== null) return
    const exited = new Promise((resolve) => server.once('exit', resolve))
    server.kill('SIGTERM')
    await exited
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 20_000)
    server.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited with ${code}:\n${output}`)) })
    server.stderr.setEncoding('utf8').on('data', (chunk) => { output += chunk })
    server.stdout.setEncoding('utf8').on('data', (chunk) => {
      output += chunk
      const match = /"msg":"Server listening at (http:\/\/[^"]+)"/.exec(output)
      if (match !== null) { clearTimeout(timer); resolve({ url: match[1], stop }) }
    })
  })
}

/** A loopback port the OS has just handed out (and that is free again), for a service that must know its own URL. */
export async function freePort () {
  const probe = createServer()
  await new Promise((resolve, reject) => probe.once('error', reject).listen(0, '127.0.0.1', resolve))
  const { port } = probe.address()
  await new Promise((resolve) => probe.close(resolve))
  return port
}

/**
 * Starts the service on a known loopback port with PUBLIC_BASE_URL set to its own URL, as customer-present payments
 * need (the PSP, here the simulated bank, sends the shopper back to it). The port is free when picked; should
 * another process take it before the service binds, the start is tried again on a new one.
 */
export async function startServiceWithPublicUrl (env = {}) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    try {
      const service = await startService({ ...env, PORT: String(port), PUBLIC_BASE_URL: url })
      if (service.url !== url) throw new Error(`the service listens at ${service.url}, not at ${url}`)
      return service
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE/.test(String(err?.message))) throw err
    }
  }
}

/**
 * `call(method, path, headers, body)`: one JSON request to the service at `baseOf()` (read at each call: the service
 * starts in `before`), resolving with `{ status, body }` (body parsed, undefined when empty).
 */
export function apiClient (baseOf) {
  return async function call (method, path, headers, body) {
    const response = await fetch(`${baseOf()}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await response.text()
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) }
  }
}

/** Ends a loopback HTTP server a test started (a webhook receiver, a shop, a PSP stand-in), open connections included. */
export function closeHttp (http) {
  http?.closeAllConnections()
  http?.close()
}

/**
 * Records everything on the page that means "something was refused, blocked or broke": a CSP violation (reported from
 * the page before any of its scripts, so the page's CSP cannot hide it), a page error, a console error, a failed
 * request, an answer of 400 or more. `expected` lists the error answers a test provokes on purpose
 * ({ path: RegExp, status }); Chromium's console line for each of those ("Failed to load resource") is expected too.
 * Chromium asks each origin for /favicon.ico by itself (no page asks for it): its 404 is not the page's problem.
 */
export async function watchForProblems (page, expected = []) {
  const problems = []
  const expectedStatuses = new Set()
  await page.exposeBinding('__reportCspViolation', (_source, violation) => {
    problems.push(`CSP violation on ${violation.documentURI}: ${violation.directive} blocked ${violation.blockedURI || '(inline)'} at ${violation.sourceFile}:${violation.line}`)
  })
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      window.__reportCspViolation({
        directive: event.effectiveDirective, blockedURI: event.blockedURI, documentURI: event.documentURI, sourceFile: event.sourceFile, line: event.lineNumber
      })
    })
  })
  page.on('console', (message) => {
    const text = message.text()
    const at = message.location().url ?? ''
    if (/Failed to load resource: .* 404/.test(text) && at !== '' && new URL(at).pathname === '/favicon.ico') return
    const loadFailure = /Failed to load resource: the server responded with a status of (\d+)/.exec(text)
    if (loadFailure !== null && expectedStatuses.has(Number(loadFailure[1]))) return
    if (message.type() === 'error' || /Content Security Policy|Refused to/i.test(text)) problems.push(`console ${message.type()}: ${text}${at === '' ? '' : ` (${at})`}`)
  })
  page.on('pageerror', (error) => { problems.push(`page error: ${error.message}`) })
  page.on('requestfailed', (request) => { problems.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText}`) })
  page.on('response', (response) => {
    if (response.status() < 400) return
    const path = new URL(response.url()).pathname
    if (expected.some((rule) => rule.path.test(path) && rule.status === response.status())) {
      expectedStatuses.add(response.status())
      return
    }
    problems.push(`HTTP ${response.status()} for ${response.request().method()} ${response.url()}`)
  })
  return problems
}

/**
 * Runs `body(page, context)` on a fresh page of `browser`, then fails on any problem the page reported
 * (watchForProblems; `options.expected`: the error answers the test provokes). `options.viewport`: 1280×900 unless said.
 */
export async function onPage (browser, body, options = {}) {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 900 } })
  const page = await context.newPage()
  const problems = await watchForProblems(page, options.expected ?? [])
  let failure
  try {
    await body(page, context)
    await page.waitForTimeout(250)
  } catch (err) {
    failure = err
  } finally {
    await context.close()
  }
  assert.deepEqual(problems, [], `the pages must work under their CSP, and ask nothing that is refused:\n${problems.join('\n')}` +
    (failure === undefined ? '' : `\n(then: ${failure.message})`))
  if (failure !== undefined) throw failure
}

/**
 * axe-core on the page as it is now: no violation of any impact (minor and moderate included), under every rule axe
 * runs by default (WCAG 2.0, 2.1 and 2.2 A and AA, and its best practices: landmarks, heading order, regions, …; only
 * its experimental and AAA rules are left out). No rule is disabled.
 */
export async function assertAccessible (page, name) {
  const results = await new AxeBuilder({ page }).analyze()
  assert.deepEqual(results.violations.map((violation) => `${violation.id} (${violation.impact}): ${violation.help} — ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`), [],
    `${name}: axe found violations`)
  assert.ok(results.passes.length > 0, `${name}: axe ran its checks`)
}

/**
 * Signs in to the dashboard of the service at `base` through its form with `apiKey`; resolves with the session the
 * server answered (its CSRF token included) once the dashboard shows Sign out.
 */
export async function signIn (page, base, apiKey) {
  const response = await page.goto(`${base}/dashboard/`, { waitUntil: 'load' })
  assert.equal(response.status(), 200)
  assert.match(response.headers()['content-security-policy'] ?? '', /style-src 'self';/, 'served under the dashboard CSP')
  await page.getByRole('heading', { name: 'Sign in to the payments dashboard' }).waitFor()
  await page.getByLabel('API key').fill(apiKey)
  const answered = page.waitForResponse((r) => r.url().endsWith('/dashboard/session') && r.request().method() === 'POST')
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  const answer = await answered
  assert.equal(answer.status(), 201)
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
  return answer.json()
}

/** Opens the dashboard page at `#hash` and waits for its level-1 heading. */
export async function openPage (page, base, hash, heading) {
  await page.goto(`${base}/dashboard/#${hash}`)
  await page.getByRole('heading', { level: 1, name: heading }).waitFor()
}
