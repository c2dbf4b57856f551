import t, { type Test } from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { ConfigSchema } from '../../src/config'

// The commands the README gives operators, run as an operator would: built output, a process group of their own,
// an environment without the test runner's loaders (so what runs is exactly `npm start` / `node dist/...`).
const ROOT = resolve(__dirname, '..', '..')
const GRACE_MS = 5000

function operatorEnv (env: Record<string, string>): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(NODE_OPTIONS|NODE_V8_COVERAGE|TAP|_TAP|npm_)/i.test(key) || key in ConfigSchema.properties) continue
    clean[key] = value
  }
  return { ...clean, ...env }
}

function isAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

function portIsFree (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.once('error', () => { resolve(false) })
    probe.listen(port, '127.0.0.1', () => { probe.close(() => { resolve(true) }) })
  })
}

function getStatus (url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, (res) => { res.resume(); resolve(res.statusCode ?? 0) }).on('error', reject).end()
  })
}

interface Started {
  pid: number
  serverPid: number
  port: number
  logs: Array<Record<string, unknown>>
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
}

async function start (t: Test, command: string[], dir: string): Promise<Started> {
  const child = spawn(command[0], command.slice(1), {
    cwd: ROOT,
    detached: true, // its own process group: what is left of it afterwards is visible
    stdio: ['ignore', 'pipe', 'pipe'],
    env: operatorEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATABASE_URL: `file:${join(dir, 'service.db')}`,
      SHUTDOWN_GRACE_MS: String(GRACE_MS)
    })
  })
  const pid = child.pid as number
  t.teardown(() => { if (isAlive(-pid)) process.kill(-pid, 'SIGKILL') })
  const logs: Array<Record<string, unknown>> = []
  let output = ''
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => { resolve({ code, signal }) })
  })
  const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
    let pending = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) {
        if (!line.startsWith('{')) continue // npm's own banner
        const entry = JSON.parse(line) as Record<string, unknown>
        logs.push(entry)
        if (typeof entry.msg === 'string' && entry.msg.startsWith('Server listening at ')) resolve(entry)
      }
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    exited.then(({ code }) => { reject(new Error(`exited with ${code} before listening: ${output}`)) }, reject)
  })
  const line = await listening
  return { pid, serverPid: line.pid as number, port: Number(new URL((line.msg as string).slice(20)).port), logs, exited }
}

const COMMANDS = [
  { name: 'node dist/src/server.js', command: ['node', 'dist/src/server.js'] },
  { name: 'npm start', command: ['npm', 'start'] }
]

t.before(() => {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, env: operatorEnv({}), encoding: 'utf8' })
  if (build.status !== 0) throw new Error(`npm run build failed: ${build.stdout}${build.stderr}`)
})

for (const { name, command } of COMMANDS) {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    t.test(`${signal} to the PID of \`${name}\` stops the server gracefully and leaves nothing behind`, async (t) => {
      const dir = t.testdir()
      const server = await start(t, command, dir)
      t.equal(await getStatus(`http://127.0.0.1:${server.port}/health/ready`), 200, 'serves')
      if (name === 'npm start') t.not(server.serverPid, server.pid, 'npm runs the server as its child')

      const sent = Date.now()
      process.kill(server.pid, signal)
      const { code, signal: killedBy } = await server.exited
      const took = Date.now() - sent
      t.equal(code, 0, 'exit code 0')
      t.equal(killedBy, null, 'not killed by the signal')
      t.ok(took < GRACE_MS, `exited in ${took} ms, within SHUTDOWN_GRACE_MS`)
      t.ok(server.logs.some((line) => line.msg === 'shutting down' && line.signal === signal), 'the server itself received the signal')
      t.notOk(isAlive(server.serverPid), 'the server process is gone')
      t.notOk(isAlive(-server.pid), 'no process of the group is left')
      t.ok(await portIsFree(server.port), 'the port is free')
      t.notOk(existsSync(join(dir, 'service.db-wal')), 'the database was closed (WAL checkpointed and removed)')
    })
  }
}
