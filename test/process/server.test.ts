import t from 'tap'
import { existsSync } from 'node:fs'
import { request as httpRequest, Agent, type ClientRequest, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import { loadConfig } from '../../src/load-config'
import { openDatabase } from '../../src/store'
import { ServerProcess } from '../helpers/server-process'
import { ADMIN_AUTH, TEST_ADMIN_KEY } from '../helpers/app'
import { readFileSync } from 'node:fs'
import { hashSecret } from '../../src/domain/api-keys'

interface Reply { status: number, headers: IncomingMessage['headers'], body: string }

function collect (req: ClientRequest): Promise<Reply> {
  return new Promise((resolve, reject) => {
    req.on('error', reject)
    req.on('response', (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body }) })
    })
  })
}

function get (url: string, agent?: Agent): Promise<Reply> {
  const req = httpRequest(url, { agent })
  req.end()
  return collect(req)
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function serverEnv (dir: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_API_KEY: TEST_ADMIN_KEY,
    LOG_LEVEL: 'info',
    DATABASE_URL: `file:${join(dir, 'service.db')}`,
    REAPER_INTERVAL_MS: '0',
    RECOVERY_INTERVAL_MS: '0',
    ...env
  }
}

t.test('SIGTERM drains an in-flight request, closes the database cleanly and exits 0', async (t) => {
  const dir = t.testdir()
  const dbFile = join(dir, 'service.db')
  // debug: the request is logged when it arrives ("incoming request"), not only when it completes.
  const server = new ServerProcess(t, serverEnv(dir, { LOG_LEVEL: 'debug' }))
  const base = await server.listening()
  t.equal((await get(`${base}/health/ready`)).status, 200)
  t.ok(existsSync(`${dbFile}-wal`), 'the database runs in WAL mode while open')

  // A PUT whose body is only half sent: the server has routed it but cannot answer yet.
  const body = JSON.stringify({ name: 'Drained', price: 9.5 })
  const put = httpRequest(`${base}/products/drain`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': 'in-flight', ...ADMIN_AUTH }
  })
  const response = collect(put)
  put.write(body.slice(0, 10))
  await server.waitForLog((line) => line.requestId === 'in-flight' && line.msg === 'incoming request')

  server.child.kill('SIGTERM')
  const shutdown = await server.waitForLog((line) => line.msg === 'shutting down')
  t.equal(shutdown.signal, 'SIGTERM', 'the signal is logged')

  await sleep(300)
  t.equal(server.child.exitCode, null, 'the process waits for the in-flight request')
  const newcomer = await get(`${base}/health/live`).then((reply) => reply.status, (err: NodeJS.ErrnoException) => err.code)
  t.ok(newcomer === 'ECONNREFUSED' || newcomer === 503, `new requests are not served while draining (${newcomer})`)

  put.end(body.slice(10))
  const reply = await response
  t.equal(reply.status, 200, 'the in-flight request completes')
  t.same(JSON.parse(reply.body), { id: 'drain', name: 'Drained', price: 9.5 })
  t.equal(reply.headers['x-request-id'], 'in-flight')
  t.equal(reply.headers.connection, 'close', 'and tells the client the connection ends')

  const started = Date.now()
  const { code, signal } = await server.exited
  t.equal(code, 0, 'exit code 0')
  t.equal(signal, null)
  t.ok(Date.now() - started < 5000, 'exits promptly once drained')
  const completed = server.logs.find((line) => line.requestId === 'in-flight' && line.msg === 'request completed')
  t.match(completed, { method: 'PUT', route: '/products/:id', statusCode: 200, responseTime: Number }, 'the request is logged as completed, in one access-log line')
  t.equal(server.stderr, '', 'nothing on stderr')

  t.notOk(existsSync(`${dbFile}-wal`), 'the WAL was checkpointed and removed: the database was closed')
  const db = await openDatabase(loadConfig({ DATABASE_URL: `file:${dbFile}`, ADMIN_API_KEY: TEST_ADMIN_KEY }))
  t.teardown(() => db.close())
  t.same(await db.products.get('drain'), { id: 'drain', name: 'Drained', price: 9.5 }, 'the drained write is durable')
})

// SIGTERM with a busy connection is above; SIGINT (Ctrl-C) here, with an idle one.
for (const signal of ['SIGINT'] as const) {
  t.test(`${signal} with only idle keep-alive connections exits 0 at once`, async (t) => {
    const dir = t.testdir()
    const server = new ServerProcess(t, serverEnv(dir))
    const base = await server.listening()
    const agent = new Agent({ keepAlive: true })
    t.teardown(() => agent.destroy())
    const first = await get(`${base}/health/live`, agent)
    t.equal(first.status, 200)
    t.equal(first.headers.connection, 'keep-alive', 'the connection stays open')

    const started = Date.now()
    server.child.kill(signal)
    const { code } = await server.exited
    t.equal(code, 0)
    t.ok(Date.now() - started < 3000, `exited in ${Date.now() - started} ms, well before the keep-alive timeout`)
    t.ok(server.logs.some((line) => line.msg === 'shutting down' && line.signal === signal), 'logs shutting down')
    t.notOk(existsSync(join(dir, 'service.db-wal')), 'database closed')
  })
}

t.test('a request that never finishes cannot hold shutdown past SHUTDOWN_GRACE_MS', async (t) => {
  const dir = t.testdir()
  const server = new ServerProcess(t, serverEnv(dir, { SHUTDOWN_GRACE_MS: '500', LOG_LEVEL: 'debug' }))
  const base = await server.listening()
  const stuck = httpRequest(`${base}/products/stuck`, {
    method: 'PUT',
    // With the admin key: the request is accepted and waits for its body (without one it is answered 401 at once and,
    // since that answer refuses the body, the connection is closed after a bounded linger: nothing would be stuck).
    headers: { 'content-type': 'application/json', 'content-length': '100', 'x-request-id': 'stuck', ...ADMIN_AUTH }
  })
  stuck.on('error', () => {})
  stuck.write('{"na')
  await server.waitForLog((line) => line.requestId === 'stuck')

  const started = Date.now()
  server.child.kill('SIGTERM')
  const { code } = await server.exited
  const took = Date.now() - started
  t.equal(code, 1, 'a forced exit is a failure exit')
  t.ok(took >= 450 && took < 3000, `gave up after the grace period (${took} ms)`)
  t.match(server.stderr, /killed by timeout \(500ms\)/)
  stuck.destroy()
})

t.test('a port already in use fails startup with one line on stderr', async (t) => {
  const dir = t.testdir()
  const first = new ServerProcess(t, serverEnv(dir))
  const port = new URL(await first.listening()).port
  const second = new ServerProcess(t, serverEnv(dir, { PORT: port, DATABASE_URL: 'file::memory:' }))
  const { code } = await second.exited
  t.equal(code, 1)
  const lines = second.stderr.split('\n').filter((line) => line !== '')
  t.equal(lines.length, 1, `one line: ${second.stderr}`)
  t.match(lines[0], /^failed to start: .*EADDRINUSE/)
  first.child.kill('SIGTERM')
  t.equal((await first.exited).code, 0)
})

t.test('without ADMIN_API_KEY on SQLite: the first start generates the admin key, prints it once, stores only its hash', async (t) => {
  const dir = t.testdir()
  const { ADMIN_API_KEY: _configured, ...env } = serverEnv(dir)
  const first = new ServerProcess(t, env)
  const base = await first.listening()
  for (let i = 0; i < 50 && !/sk_/.test(first.stderr); i++) await sleep(100)
  const key = /^ {2}(sk_[A-Za-z0-9_-]{32})$/m.exec(first.stderr)?.[1] ?? ''
  t.match(key, /^sk_/, 'the generated key is printed on stderr')
  t.notOk(first.stdout.includes(key), 'and never in the log stream')
  const asAdmin = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const created = await fetch(`${base}/merchants`, { method: 'POST', headers: asAdmin, body: JSON.stringify({ name: 'Boot', email: 'boot@example.com' }) })
  t.equal(created.status, 201, 'it is the admin key')
  first.child.kill('SIGTERM')
  await first.exited
  const stored = readFileSync(join(dir, 'service.db'))
  t.notOk(stored.includes(key), 'the database file does not contain the key')
  t.ok(stored.includes(hashSecret(key)), 'only its SHA-256')

  const second = new ServerProcess(t, env)
  const again = await second.listening()
  t.notMatch(second.stderr, /sk_/, 'a restart prints no key')
  t.equal((await fetch(`${again}/merchants/${(await created.json() as { id: string }).id}`, { headers: asAdmin })).status, 200, 'the key still works')
  second.child.kill('SIGTERM')
  await second.exited

  const third = new ServerProcess(t, serverEnv(dir))
  const configured = await third.listening()
  t.equal((await fetch(`${configured}/merchants`, { method: 'POST', headers: asAdmin, body: '{}' })).status, 401, 'setting ADMIN_API_KEY retires the generated key')
  third.child.kill('SIGTERM')
  await third.exited
})

t.test('PostgreSQL without ADMIN_API_KEY: start-up fails with a clear config error', async (t) => {
  const server = new ServerProcess(t, { PORT: '0', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' })
  t.equal((await server.exited).code, 1)
  t.match(server.stderr, /ADMIN_API_KEY is required with PostgreSQL/)
})
