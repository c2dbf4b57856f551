import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { resolve } from 'node:path'
import type { Test } from 'tap'
import { configVariableNames } from '../../src/load-config'

const ROOT = resolve(__dirname, '..', '..')

export interface LogLine { level?: number, msg?: string, [key: string]: unknown }

/**
 * The environment for a child server: the test runner's own (so tap can follow the
 * child for coverage) minus every service variable, plus `env`.
 */
export function childEnv (env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env }
  for (const key of configVariableNames()) delete base[key]
  return { ...base, ...env }
}

/**
 * `app/server.ts` as a real process. tap's TypeScript loader is in process.execArgv,
 * so the child runs the sources without a build.
 */
export class ServerProcess {
  readonly child: ChildProcess
  readonly logs: LogLine[] = []
  stdout = ''
  stderr = ''
  readonly exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  private closed = false
  private readonly waiters = new Set<() => void>()

  constructor (t: Test, env: Record<string, string>) {
    this.child = spawn(process.execPath, [...process.execArgv, 'app/server.ts'], {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let pending = ''
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) {
        try { this.logs.push(JSON.parse(line) as LogLine) } catch { this.logs.push({ msg: line }) }
      }
      this.notify()
    })
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { this.stderr += chunk; this.notify() })
    this.exited = new Promise((resolve) => {
      // 'close' rather than 'exit': by then all of stdout and stderr has been read.
      this.child.on('close', (code, signal) => { this.closed = true; this.notify(); resolve({ code, signal }) })
    })
    t.teardown(async () => {
      if (!this.closed) {
        this.child.kill('SIGKILL')
        await this.exited
      }
    })
  }

  /** Resolves with the first log line matching `predicate`; rejects on exit or after `timeoutMs`. */
  async waitForLog (predicate: (line: LogLine) => boolean, timeoutMs = 15_000): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = this.logs.find(predicate)
      if (found !== undefined) return found
      if (this.closed) {
        throw new Error(`server exited before the expected log line; stderr: ${this.stderr}`)
      }
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`timed out waiting for a log line; stdout: ${this.stdout} stderr: ${this.stderr}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left)
        function done (): void { clearTimeout(timer); resolve() }
        this.waiters.add(done)
      })
    }
  }

  /**
   * Waits for "Server listening at …" and returns the base URL. The child compiles the TypeScript
   * sources as it loads them: 18–23 s to listening was measured on a shared 2-core machine at load 17.
   */
  async listening (timeoutMs = 60_000): Promise<string> {
    const line = await this.waitForLog((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('Server listening at '), timeoutMs)
    return (line.msg as string).slice('Server listening at '.length)
  }

  private notify (): void {
    const waiters = [...this.waiters]
    this.waiters.clear()
    for (const wake of waiters) wake()
  }
}

/**
 * Creates a merchant and an API key on a running server, as an operator would (POST /merchants,
 * then POST /merchants/{id}/api-keys with the admin key). `headers` go with both requests.
 */
export async function provisionMerchant (base: string, adminKey: string, headers: Record<string, string> = {}):
Promise<{ merchantId: string, keyId: string, auth: { authorization: string } }> {
  const admin = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json', ...headers }
  const merchant = await fetch(`${base}/merchants`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: 'Process test merchant', email: `process-${randomUUID()}@example.com` })
  })
  if (merchant.status !== 201) throw new Error(`POST /merchants answered ${merchant.status}: ${await merchant.text()}`)
  const { id } = await merchant.json() as { id: string }
  const key = await fetch(`${base}/merchants/${id}/api-keys`, { method: 'POST', headers: admin, body: '{}' })
  if (key.status !== 201) throw new Error(`POST /merchants/{id}/api-keys answered ${key.status}: ${await key.text()}`)
  const { id: keyId, secret } = await key.json() as { id: string, secret: string }
  return { merchantId: id, keyId, auth: { authorization: `Bearer ${secret}` } }
}
