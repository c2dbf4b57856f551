import t, { type Test } from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { configVariableNames } from '../../src/load-config'
import { ServerProcess } from '../helpers/server-process'
import { ADMIN_AUTH, TEST_ADMIN_KEY, TEST_ENCRYPTION_KEYS } from '../helpers/app'

// The commands docs/operations.md gives operators, run as an operator would: built output, a process group of their own,
// an environment without the test runner's loaders (so what runs is exactly `npm start` / `node dist/...`).
const ROOT = resolve(__dirname, '..', '..')
const GRACE_MS = 5000

function operatorEnv (env: Record<string, string>): NodeJS.ProcessEnv {
  const serviceVariables = new Set(configVariableNames())
  const clean: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(NODE_OPTIONS|NODE_V8_COVERAGE|TAP|_TAP|npm_)/i.test(key) || serviceVariables.has(key)) continue
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

interface Member { pid: number, state: string, command: string }

/**
 * The processes of a group, with their state (`Z`: exited, waiting for its parent, or PID 1 once orphaned, to reap
 * it). Linux: /proc; elsewhere: ps.
 */
function membersOf (pgid: number): Member[] {
  if (existsSync('/proc/self/stat')) {
    const members: Member[] = []
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue
      let stat: string
      try { stat = readFileSync(`/proc/${entry}/stat`, 'utf8') } catch { continue } // gone meanwhile
      // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so split after its last ')'.
      const close = stat.lastIndexOf(')')
      const [state = '?', , pgrp] = stat.slice(close + 2).split(' ')
      if (Number(pgrp) === pgid) members.push({ pid: Number(entry), state, command: stat.slice(stat.indexOf('(') + 1, close) })
    }
    return members
  }
  const ps = spawnSync('ps', ['-A', '-o', 'pid=,pgid=,stat=,comm='], { encoding: 'utf8' })
  return ps.stdout.split('\n').map((line) => line.trim().split(/\s+/)).filter((fields) => Number(fields[1]) === pgid)
    .map(([pid, , state = '?', ...command]) => ({ pid: Number(pid), state: state.slice(0, 1), command: command.join(' ') }))
}

/**
 * What is left running of a process group: its members that have not exited. A member that has exited but is not
 * reaped yet (a zombie: no memory, no socket, no file) is not left running. `npm start` builds first, and the build's
 * esbuild, orphaned when vite exits, stays a zombie of the group until PID 1 reaps it, which takes as long as PID 1
 * takes on this machine. A running member may still be on its way out when its parent has just closed: waited for,
 * up to a limit only a process that does not stop reaches.
 */
async function leftRunning (pgid: number, ms = 30_000): Promise<Member[]> {
  const deadline = Date.now() + ms
  for (;;) {
    const running = membersOf(pgid).filter((member) => member.state !== 'Z')
    if (running.length === 0 || Date.now() > deadline) return running
    await new Promise((resolve) => setTimeout(resolve, 100))
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

async function start (t: Test, command: string[], dir: string, logLevel = 'info'): Promise<Started> {
  const [program, ...args] = command
  if (program === undefined) throw new Error('start: an empty command')
  const child = spawn(program, args, {
    cwd: ROOT,
    detached: true, // its own process group: what is left of it afterwards is visible
    stdio: ['ignore', 'pipe', 'pipe'],
    env: operatorEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: logLevel,
      DATABASE_URL: `file:${join(dir, 'service.db')}`,
      ADMIN_API_KEY: TEST_ADMIN_KEY,
      ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
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
  { name: 'node dist/app/server.js', command: ['node', 'dist/app/server.js'] },
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

      process.kill(server.pid, signal)
      const { code, signal: killedBy } = await server.exited
      // close-with-grace exits 1 past SHUTDOWN_GRACE_MS: 0 is a drain finished within it (app/server.ts).
      t.equal(code, 0, 'exit code 0: drained within SHUTDOWN_GRACE_MS')
      t.equal(killedBy, null, 'not killed by the signal')
      t.ok(server.logs.some((line) => line.msg === 'shutting down' && line.signal === signal), 'the server itself received the signal')
      t.notOk(isAlive(server.serverPid), 'the server process is gone')
      t.same(await leftRunning(server.pid), [], 'no process of the group is left running')
      t.ok(await portIsFree(server.port), 'the port is free')
      t.notOk(existsSync(join(dir, 'service.db-wal')), 'the database was closed (WAL checkpointed and removed)')
    })
  }
}

t.test('Ctrl-C on `npm start` (SIGINT to the whole process group: npm and node) drains the request in flight and exits 0', async (t) => {
  const dir = t.testdir()
  // The build ran above; --ignore-scripts skips only prestart, the start script is the same.
  // debug: a request is logged when it arrives ("incoming request"), not only when it completes.
  const server = await start(t, ['npm', 'start', '--ignore-scripts'], dir, 'debug')
  // A request in flight keeps the drain going while any forwarded copy of the signal arrives.
  const body = JSON.stringify({ name: 'Drained', price: 1 })
  const put = request(`http://127.0.0.1:${server.port}/products/drain`, {
    method: 'PUT', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': 'in-flight', ...ADMIN_AUTH }
  })
  const answered = new Promise<number>((resolve, reject) => {
    put.on('response', (res) => { res.resume(); resolve(res.statusCode ?? 0) }).on('error', reject)
  })
  put.write(body.slice(0, 5))
  while (!server.logs.some((line) => line.requestId === 'in-flight')) await new Promise((resolve) => setTimeout(resolve, 20))

  process.kill(-server.pid, 'SIGINT')
  await new Promise((resolve) => setTimeout(resolve, 500))
  put.end(body.slice(5))
  t.equal(await answered, 200, 'the request in flight is answered')
  const { code } = await server.exited
  t.equal(code, 0, 'exit code 0, not the "second signal" exit 1')
  t.equal(server.logs.filter((line) => line.msg === 'shutting down').length, 1, 'one shutdown')
  t.same(await leftRunning(server.pid), [], 'no process of the group is left running')
  t.ok(await portIsFree(server.port), 'the port is free')
})

t.test('a repeated stop signal within a second is the same stop; one later than that gives up draining: exit 1', async (t) => {
  const server = new ServerProcess(t, {
    PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'debug', DATABASE_URL: 'file::memory:', ADMIN_API_KEY: TEST_ADMIN_KEY, SHUTDOWN_GRACE_MS: '20000', REAPER_INTERVAL_MS: '0', RECOVERY_INTERVAL_MS: '0'
  })
  const base = await server.listening()
  // A request whose body never completes keeps the drain waiting.
  const stuck = request(`${base}/products/stuck`, { method: 'PUT', headers: { 'content-type': 'application/json', 'content-length': '100', 'x-request-id': 'stuck', ...ADMIN_AUTH } })
  stuck.on('error', () => {})
  stuck.write('{"na')
  await server.waitForLog((line) => line.requestId === 'stuck')
  server.child.kill('SIGTERM')
  await server.waitForLog((line) => line.msg === 'shutting down')
  server.child.kill('SIGTERM') // the same stop delivered again within a second (npm forwarding, a control group): ignored
  await new Promise((resolve) => setTimeout(resolve, 1300))
  t.equal(server.child.exitCode, null, 'still draining after the duplicate')
  server.child.kill('SIGINT')
  const { code } = await server.exited
  t.equal(code, 1, 'an operator insisting: exit 1 at once')
  // Said by the insisting path only: past SHUTDOWN_GRACE_MS close-with-grace exits 1 without it.
  t.match(server.stderr, /second SIGINT, exiting/, 'without waiting for SHUTDOWN_GRACE_MS')
  stuck.destroy()
})
