// What the browser test files share: the built service on a port the OS picks, and Chromium's launch settings.
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

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
