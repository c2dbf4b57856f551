import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root: sdk/dist/test/ → ../../.. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
export const ADMIN_API_KEY = 'sdk-test-admin-key-0123456789abcdefghijklmnop'

export interface Service {
  baseUrl: string
  stop: () => Promise<void>
}

/**
 * Starts the built service (`npm run build` at the root first) on a free port, in-memory SQLite, with
 * `PUBLIC_BASE_URL` set to its own address: customer-present payments (`returnUrl`) then work with the simulated
 * gateway, whose bank page (`nextAction.url`) and return address are on the service. The port is picked first (the
 * address must be known before the service starts); if another process takes it meanwhile, another is tried.
 */
export async function startService (): Promise<Service> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServiceOn(await freePort())
    } catch (error) {
      if (attempt >= 3 || !(error instanceof Error) || !error.message.includes('EADDRINUSE')) throw error
    }
  }
}

/** A port no one listens on now (the OS picks it; the listener is closed again). */
async function freePort (): Promise<number> {
  const probe = createServer()
  probe.listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const { port } = probe.address() as AddressInfo
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}

async function startServiceOn (port: number): Promise<Service> {
  const env = {
    PATH: process.env.PATH,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'info',
    DATABASE_URL: 'file::memory:',
    ADMIN_API_KEY,
    GATEWAY: 'simulated',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '100'
  }
  const server = spawn(process.execPath, [join(ROOT, 'dist', 'app', 'server.js')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start:\n${output}`)), 20_000)
    server.on('exit', (code) => { clearTimeout(timer); reject(new Error(`the service exited with ${code}:\n${output}`)) })
    server.stderr?.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    server.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk
      const match = /"msg":"Server listening at (http:\/\/[^"]+)"/.exec(output)
      if (match?.[1] !== undefined) { clearTimeout(timer); resolve(match[1]) }
    })
  }).catch(async (error: unknown) => { await stopProcess(server); throw error })
  return { baseUrl, stop: () => stopProcess(server) }
}

async function stopProcess (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
}

export interface ReceivedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

export interface LocalServer {
  url: string
  received: ReceivedRequest[]
  close: () => Promise<void>
}

/** An HTTP server on 127.0.0.1 recording each request; `answer` writes the response. */
export async function listen (answer: (request: ReceivedRequest) => Promise<Response> | Response): Promise<LocalServer> {
  const received: ReceivedRequest[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const request = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
      received.push(request)
      Promise.resolve(answer(request)).then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers))
        res.end(Buffer.from(await response.arrayBuffer()))
      }).catch((error: unknown) => { res.writeHead(502).end(String(error)) })
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/**
 * A proxy in front of `target`: it answers with `canned` responses first (in order), then passes every
 * request through, so a test sees what the client sent on each attempt.
 */
export async function proxy (target: string, canned: Array<() => Response>): Promise<LocalServer> {
  return listen(async (request) => {
    const next = canned.shift()
    if (next !== undefined) return next()
    const headers = Object.entries(request.headers).flatMap(([name, value]) =>
      value === undefined || name === 'host' || name === 'content-length' || name === 'connection' ? [] : [[name, String(value)] as [string, string]])
    const response = await fetch(new URL(request.url, target), {
      method: request.method,
      headers,
      body: request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body
    })
    const passed = new Headers(response.headers)
    passed.delete('content-encoding')
    passed.delete('content-length')
    passed.delete('transfer-encoding')
    passed.delete('connection')
    passed.delete('keep-alive')
    return new Response(await response.arrayBuffer(), { status: response.status, headers: passed })
  })
}

/** A problem document answer, as the service would send it. */
export function problemResponse (status: number, type: string, retryAfterSeconds: number): Response {
  return new Response(JSON.stringify({ type, title: 'canned', status, instance: '/api/payments', traceId: 'proxy' }), {
    status,
    headers: { 'content-type': 'application/problem+json', 'retry-after': String(retryAfterSeconds) }
  })
}

/** Polls `check` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function eventually<T> (check: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
