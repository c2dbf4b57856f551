import t, { type Test } from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { ConfigError, trustProxySetting } from '../src/config'
import { configVariableNames, loadConfig } from '../src/load-config'
import { buildTestApp } from './helpers/app'
import { ServerProcess } from './helpers/server-process'

t.test('defaults apply when nothing is set', async (t) => {
  const config = loadConfig({})
  t.match(config, {
    NODE_ENV: 'production',
    PORT: 3000,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    DATABASE_URL: 'file:./data/service.db',
    SQLITE_SYNCHRONOUS: 'FULL',
    BODY_LIMIT: 64 * 1024,
    RATE_LIMIT_MAX: 600,
    RATE_LIMIT_WINDOW_MS: 60_000,
    TRUST_PROXY: 'false',
    SHUTDOWN_GRACE_MS: 10_000
  })
  t.equal(config.REDIS_URL, undefined)
})

t.test('values are coerced from strings, empty strings count as unset, unknown variables are ignored', async (t) => {
  const config = loadConfig({ PORT: '8080', BODY_LIMIT: '2048', LOG_LEVEL: 'debug', HOST: '', SOMETHING_ELSE: 'x' })
  t.equal(config.PORT, 8080)
  t.equal(config.BODY_LIMIT, 2048)
  t.equal(config.LOG_LEVEL, 'debug')
  t.equal(config.HOST, '127.0.0.1')
  t.notOk('SOMETHING_ELSE' in config)
})

t.test('loadConfig reads only the source it is given', async (t) => {
  const before = process.env.PORT
  process.env.PORT = 'not-a-port'
  t.teardown(() => { if (before === undefined) delete process.env.PORT; else process.env.PORT = before })
  t.equal(loadConfig({ PORT: '1234' }).PORT, 1234)
  t.equal(loadConfig({}).PORT, 3000)
})

const invalid: Array<[string, Record<string, string>, RegExp]> = [
  ['PORT=abc', { PORT: 'abc' }, /^invalid configuration: PORT must be integer \(got "abc"\)$/],
  ['PORT=70000', { PORT: '70000' }, /^invalid configuration: PORT must be <= 65535/],
  ['BODY_LIMIT=-1', { BODY_LIMIT: '-1' }, /^invalid configuration: BODY_LIMIT must be >= 1024 \(got "-1"\)$/],
  ['LOG_LEVEL=loud', { LOG_LEVEL: 'loud' }, /^invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)$/],
  ['DATABASE_URL=mysql://x', { DATABASE_URL: 'mysql://x' }, /^invalid configuration: DATABASE_URL /],
  ['RATE_LIMIT_MAX=0', { RATE_LIMIT_MAX: '0' }, /^invalid configuration: RATE_LIMIT_MAX must be >= 1/],
  ['TRUST_PROXY=yes', { TRUST_PROXY: 'yes' }, /^invalid configuration: TRUST_PROXY must be .* \(got "yes"\)$/],
  ['TRUST_PROXY=1.2.3.4/33', { TRUST_PROXY: '1.2.3.4/33' }, /^invalid configuration: TRUST_PROXY /],
  ['TRUST_PROXY=,', { TRUST_PROXY: ',' }, /^invalid configuration: TRUST_PROXY /]
]

for (const [name, env, message] of invalid) {
  t.test(`${name} is a ConfigError naming the variable`, async (t) => {
    const error = t.throws(() => loadConfig(env)) as Error
    t.type(error, ConfigError)
    t.equal(error.name, 'ConfigError')
    t.match(error.message, message)
    t.notMatch(error.message, /\n/, 'one line')
  })
}

t.test('TRUST_PROXY: true, false, a hop count or a list', async (t) => {
  t.equal(trustProxySetting('true'), true)
  t.equal(trustProxySetting('false'), false)
  const hops = trustProxySetting('2')
  t.type(hops, 'function')
  if (typeof hops === 'function') {
    t.same([0, 1, 2, 3].map((hop) => hops('10.0.0.1', hop)), [true, true, false, false], 'the first two hops are trusted')
  }
  t.same(trustProxySetting('10.0.0.1, 10.1.0.0/16,loopback'), ['10.0.0.1', '10.1.0.0/16', 'loopback'])
  for (const valid of ['true', 'false', '0', '3', '10.0.0.1', '10.0.0.0/8, ::1', 'fd00::/8', '10.0.0.0/255.0.0.0', 'loopback,uniquelocal']) {
    t.equal(loadConfig({ TRUST_PROXY: valid }).TRUST_PROXY, valid, `${valid} is accepted`)
  }
})

/** The access-log line's remoteAddress is request.ip, i.e. what the proxy setting made of the request. */
async function clientIp (t: Test, trustProxy: string, forwardedFor: string, remoteAddress = '127.0.0.1'): Promise<unknown> {
  const logs: string[] = []
  const app = await buildTestApp(t, { TRUST_PROXY: trustProxy }, { logger: { level: 'info', stream: { write: (line: string) => { logs.push(line) } } } })
  await app.inject({ method: 'GET', url: '/health/live', remoteAddress, headers: { 'x-forwarded-for': forwardedFor } })
  const completed = logs.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'request completed')
  return completed.remoteAddress
}

t.test('TRUST_PROXY decides which address is the client', async (t) => {
  t.equal(await clientIp(t, 'false', '203.0.113.9'), '127.0.0.1', 'false: X-Forwarded-For is ignored')
  t.equal(await clientIp(t, 'true', '203.0.113.9, 198.51.100.1'), '203.0.113.9', 'true: the left-most address')
  t.equal(await clientIp(t, '1', '203.0.113.9, 198.51.100.1'), '198.51.100.1', '1: one hop is trusted')
  t.equal(await clientIp(t, '2', '203.0.113.9, 198.51.100.1'), '203.0.113.9', '2: two hops are trusted')
  t.equal(await clientIp(t, '127.0.0.1', '203.0.113.9'), '203.0.113.9', 'a listed proxy is trusted')
  t.equal(await clientIp(t, '10.0.0.0/8', '203.0.113.9'), '127.0.0.1', 'an unlisted peer is not')
  t.equal(await clientIp(t, '10.0.0.0/8', '203.0.113.9', '10.1.2.3'), '203.0.113.9', 'a peer in a listed CIDR is trusted')
})

t.test('with TRUST_PROXY=true the rate limit keys on X-Forwarded-For', async (t) => {
  const app = await buildTestApp(t, { TRUST_PROXY: 'true', RATE_LIMIT_MAX: '1' }, {}, { credentials: 'none' })
  const from = (ip: string) => app.inject({ method: 'GET', url: '/products/p', headers: { 'x-forwarded-for': ip } })
  t.equal((await from('203.0.113.1')).statusCode, 404)
  t.equal((await from('203.0.113.1')).statusCode, 429, 'the same client is limited')
  t.equal((await from('203.0.113.2')).statusCode, 404, 'another client behind the same proxy is not')
})

t.test('with TRUST_PROXY=false X-Forwarded-For does not escape the rate limit', async (t) => {
  const app = await buildTestApp(t, { TRUST_PROXY: 'false', RATE_LIMIT_MAX: '1' }, {}, { credentials: 'none' })
  const from = (ip: string) => app.inject({ method: 'GET', url: '/products/p', headers: { 'x-forwarded-for': ip } })
  t.equal((await from('203.0.113.1')).statusCode, 404)
  t.equal((await from('203.0.113.2')).statusCode, 429, 'a forged header is not a new client')
})

for (const [variable, value] of [['PORT', 'abc']] as const) {
  t.test(`the server started with ${variable}=${value} exits 1 with one line on stderr`, async (t) => {
    const server = new ServerProcess(t, { [variable]: value, DATABASE_URL: 'file::memory:' })
    const { code } = await server.exited
    t.equal(code, 1)
    const lines = server.stderr.split('\n').filter((line) => line !== '')
    t.equal(lines.length, 1, 'exactly one line')
    t.match(lines[0], new RegExp(`^invalid configuration: ${variable} .*"${value}"`))
    t.notMatch(server.stderr, /\bat .*\.(ts|js):\d+/, 'no stack trace')
    t.equal(server.stdout, '', 'nothing on stdout')
  })
}

t.test('only src/load-config.ts reads process.env', async (t) => {
  const root = resolve(__dirname, '..')
  const offenders: string[] = []
  function scan (dir: string): void {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) scan(path)
      else if (/\.[cm]?[jt]s$/.test(name) && /process\.env\b/.test(readFileSync(path, 'utf8'))) offenders.push(path.slice(root.length + 1))
    }
  }
  for (const dir of ['app', 'src', 'plugins', 'routes', 'schemas', 'scripts']) scan(join(root, dir))
  t.same(offenders, ['src/load-config.ts'])
})

t.test('CORS_ORIGINS: a comma-separated list of origins; anything else stops start-up naming the variable', async (t) => {
  t.equal(loadConfig({ DATABASE_URL: 'file::memory:' }).CORS_ORIGINS, '', 'default: none')
  t.equal(loadConfig({ DATABASE_URL: 'file::memory:', CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).CORS_ORIGINS,
    'https://a.example, http://localhost:5173')
  for (const bad of ['https://a.example/path', '*', 'a.example', 'ftp://a.example', 'https://a.example,null']) {
    t.throws(() => loadConfig({ DATABASE_URL: 'file::memory:', CORS_ORIGINS: bad }), { name: 'ConfigError', message: /CORS_ORIGINS must be a comma-separated list of origins/ }, bad)
  }
})

t.test('ENCRYPTION_KEYS: required with PostgreSQL, checked when set, never echoed', async (t) => {
  const admin = 'admin-key-0123456789abcdefghijklmnopqrstuvwxyz'
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://db/x', ADMIN_API_KEY: admin }), { name: 'ConfigError', message: /ENCRYPTION_KEYS is required with PostgreSQL/ })
  const key = Buffer.alloc(32, 9).toString('base64')
  t.equal(loadConfig({ DATABASE_URL: 'postgres://db/x', ADMIN_API_KEY: admin, ENCRYPTION_KEYS: `k1:${key}` }).ENCRYPTION_KEYS, `k1:${key}`)
  t.equal(loadConfig({}).ENCRYPTION_KEYS, undefined, 'optional on SQLite (a key is generated)')
  const short = Buffer.alloc(31, 9).toString('base64')
  try {
    loadConfig({ ENCRYPTION_KEYS: `k1:${key},k2:${short}` })
    t.fail('a 31-byte key is refused')
  } catch (err) {
    t.type(err, ConfigError)
    t.match((err as Error).message, /ENCRYPTION_KEYS key k2 must be 32 bytes/)
    t.notOk((err as Error).message.includes(short) || (err as Error).message.includes(key), 'no key in the message')
  }
})

t.test('INSTANCE_DEAD_AFTER_MS must cover at least three heartbeats', async (t) => {
  t.match(loadConfig({}), { INSTANCE_HEARTBEAT_MS: 1000, INSTANCE_DEAD_AFTER_MS: 5000, DATABASE_SETTLE_MS: 2000 })
  t.throws(() => loadConfig({ INSTANCE_HEARTBEAT_MS: '2000', INSTANCE_DEAD_AFTER_MS: '5000' }),
    { name: 'ConfigError', message: /INSTANCE_DEAD_AFTER_MS must be at least 3 × INSTANCE_HEARTBEAT_MS/ })
  t.match(loadConfig({ INSTANCE_HEARTBEAT_MS: '500', INSTANCE_DEAD_AFTER_MS: '1500' }), { INSTANCE_DEAD_AFTER_MS: 1500 })
})

t.test('STRIPE_API_URL: Stripe\'s by default; any http or https URL, loopback included; anything else stops start-up', async (t) => {
  t.equal(loadConfig({}).connectorUrls.STRIPE_API_URL, 'https://api.stripe.com')
  t.equal(loadConfig({ STRIPE_API_URL: 'http://127.0.0.1:12111' }).connectorUrls.STRIPE_API_URL, 'http://127.0.0.1:12111')
  t.throws(() => loadConfig({ STRIPE_API_URL: 'ftp://stripe.example' }), { name: 'ConfigError', message: /STRIPE_API_URL must be an http or https URL/ })
  t.throws(() => loadConfig({ STRIPE_API_URL: 'not a url' }), { name: 'ConfigError', message: /STRIPE_API_URL/ })
})

t.test('ADYEN_DISPUTES_URL: unset by default (each account\'s test or live endpoint); any http or https URL; anything else stops start-up', async (t) => {
  t.equal(loadConfig({}).connectorUrls.ADYEN_DISPUTES_URL, undefined)
  t.equal(loadConfig({ ADYEN_DISPUTES_URL: 'http://127.0.0.1:8081/ca/services/DisputeService/v30' }).connectorUrls.ADYEN_DISPUTES_URL, 'http://127.0.0.1:8081/ca/services/DisputeService/v30')
  t.throws(() => loadConfig({ ADYEN_DISPUTES_URL: 'ftp://adyen.example' }), { name: 'ConfigError', message: /ADYEN_DISPUTES_URL must be an http or https URL/ })
})

t.test('ADYEN_CHECKOUT_URL: unset by default (each account\'s test or live endpoint); any http or https URL; anything else stops start-up', async (t) => {
  t.equal(loadConfig({}).connectorUrls.ADYEN_CHECKOUT_URL, undefined)
  t.equal(loadConfig({ ADYEN_CHECKOUT_URL: 'http://127.0.0.1:8080' }).connectorUrls.ADYEN_CHECKOUT_URL, 'http://127.0.0.1:8080')
  t.throws(() => loadConfig({ ADYEN_CHECKOUT_URL: 'ftp://adyen.example' }), { name: 'ConfigError', message: /ADYEN_CHECKOUT_URL must be an http or https URL/ })
})

t.test('a connector module\'s URL settings are read and checked with the configuration, by the module\'s names', async (t) => {
  const acme = { urlSettings: [{ name: 'ACME_API_URL', default: 'https://api.acme.example' }, { name: 'ACME_FILES_URL' }] }
  t.same(loadConfig({}, [acme]).connectorUrls, { ACME_API_URL: 'https://api.acme.example' }, 'a default applies; a setting without one stays unset')
  t.same(loadConfig({ ACME_FILES_URL: 'http://127.0.0.1:9000', STRIPE_API_URL: 'http://127.0.0.1:1' }, [acme]).connectorUrls,
    { ACME_API_URL: 'https://api.acme.example', ACME_FILES_URL: 'http://127.0.0.1:9000' }, 'only the given modules\' settings are read')
  t.throws(() => loadConfig({ ACME_API_URL: 'file:///etc/passwd' }, [acme]), { name: 'ConfigError', message: /^invalid configuration: ACME_API_URL must be an http or https URL/ })
  t.ok(configVariableNames([acme]).includes('ACME_FILES_URL'), 'and named among the service\'s variables')
  t.ok(configVariableNames().includes('STRIPE_API_URL'))
})

t.test('API_VERSION_SUNSETS: supported, non-current versions with a date', async (t) => {
  t.equal(loadConfig({ DATABASE_URL: 'file::memory:', API_VERSION_SUNSETS: '2026-11-01=2027-11-25' }).API_VERSION_SUNSETS, '2026-11-01=2027-11-25')
  for (const bad of ['2026-11-25=2027-11-25', 'v1=2027-01-01', '2026-11-01']) {
    t.throws(() => loadConfig({ DATABASE_URL: 'file::memory:', API_VERSION_SUNSETS: bad }), { name: 'ConfigError', message: /API_VERSION_SUNSETS must be comma-separated version=YYYY-MM-DD pairs/ }, bad)
  }
})

t.test('PUBLIC_BASE_URL (optional; http or https, no query, fragment or credentials) and ACTION_TTL_SECONDS (default 3600, any value >= 1)', async (t) => {
  t.equal(loadConfig({}).PUBLIC_BASE_URL, undefined)
  t.equal(loadConfig({ PUBLIC_BASE_URL: 'https://pay.example.com/shop' }).PUBLIC_BASE_URL, 'https://pay.example.com/shop')
  t.equal(loadConfig({ PUBLIC_BASE_URL: 'http://127.0.0.1:3000' }).PUBLIC_BASE_URL, 'http://127.0.0.1:3000')
  for (const value of ['ftp://pay.example.com', 'pay.example.com', 'https://pay.example.com/?a=1', 'https://pay.example.com/#x', 'https://u:p@pay.example.com']) {
    t.throws(() => loadConfig({ PUBLIC_BASE_URL: value }), { name: 'ConfigError', message: /PUBLIC_BASE_URL must be an http or https URL/ }, value)
  }
  t.equal(loadConfig({}).ACTION_TTL_SECONDS, 3600)
  t.equal(loadConfig({ ACTION_TTL_SECONDS: '1' }).ACTION_TTL_SECONDS, 1)
  t.throws(() => loadConfig({ ACTION_TTL_SECONDS: '0' }), { name: 'ConfigError', message: /ACTION_TTL_SECONDS/ })
})
