import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp, type App, type AppOverrides } from '../../app/app'
import type { Database } from '../../src/store/types'
import type { Config } from '../../src/config'
import { loadConfig } from '../../src/load-config'
import { LATEST_API_VERSION, type ApiVersion } from '../../src/domain/api-versions'
import { openApiValidator, printable } from './openapi-validator'

/** The operator key of test apps (ADMIN_API_KEY). */
export const TEST_ADMIN_KEY = 'test-admin-key-0123456789abcdefghijklmnopqrstuvwxyz'
export const ADMIN_AUTH = { authorization: `Bearer ${TEST_ADMIN_KEY}` }
/** The ENCRYPTION_KEYS of test servers (PostgreSQL requires them). */
export const TEST_ENCRYPTION_KEYS = 'test:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8='

/** A config for tests: in-memory SQLite, no logging, background workers off, heartbeats rare. */
export function testConfig (env: Record<string, string> = {}): Config {
  return loadConfig({
    ADMIN_API_KEY: TEST_ADMIN_KEY,
    DATABASE_URL: 'file::memory:',
    LOG_LEVEL: 'silent',
    REAPER_INTERVAL_MS: '0',
    RECOVERY_INTERVAL_MS: '0',
    // A heartbeat write a minute, not a second: tests that count commits see only their own (it still probes every 250 ms while the database is away).
    INSTANCE_HEARTBEAT_MS: '60000',
    INSTANCE_DEAD_AFTER_MS: '180000',
    // Users' passwords hashed at scrypt's lowest accepted cost (the default takes ~0.1 s a hash).
    PASSWORD_HASH_COST: '10',
    // PostgreSQL requires them (SQLite generates its own).
    ...(env.DATABASE_URL?.startsWith('postgres') === true ? { ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS } : {}),
    ...env
  })
}

export interface TestAppOptions {
  /**
   * Check every `app.inject` response against openapi.yaml (status, content type, body schema) and
   * fail the test on a mismatch. On by default; switch it off only for a test that deliberately
   * provokes an undocumented answer, and say why.
   */
  validateResponses?: boolean
  /**
   * How requests that carry no Authorization header are sent:
   * - 'default' (the default): as the client that owns the route would send them — payment routes
   *   (/api/…) with the key of a merchant created for the test (`defaultMerchantOf(app)`), every
   *   other route with the admin key. A test states another credential by setting the header itself.
   * - 'none': as sent. Authentication tests use this.
   * Either way `headers: { authorization: undefined }` sends a request without credentials.
   */
  credentials?: 'default' | 'none'
}

export interface MerchantCredentials {
  merchantId: string
  keyId: string
  secret: string
  /** `{ authorization: 'Bearer sk_…' }`, to spread into inject headers. */
  auth: { authorization: string }
}

let merchantCounter = 0

/** Creates a merchant and one API key for it through the services (as an operator would). */
export async function merchantWithKey (app: App, fields: { status?: 'active' | 'suspended', name?: string, apiVersion?: ApiVersion } = {}): Promise<MerchantCredentials> {
  merchantCounter++
  const now = new Date().toISOString()
  const merchant = await app.db.merchants.create({
    id: randomUUID(),
    name: fields.name ?? `Test merchant ${merchantCounter}`,
    email: `test-merchant-${process.pid}-${merchantCounter}-${randomUUID()}@auth.example`,
    country: null,
    defaultCurrency: null,
    metadata: {},
    status: fields.status ?? 'active',
    apiVersion: fields.apiVersion ?? LATEST_API_VERSION,
    version: 1,
    createdAt: now,
    updatedAt: now
  })
  const { key, secret } = await app.apiKeys.create(merchant.id, { name: 'test' })
  return { merchantId: merchant.id, keyId: key.id, secret, auth: { authorization: `Bearer ${secret}` } }
}

const defaultMerchants = new WeakMap<App, Promise<MerchantCredentials>>()

/** The merchant whose key a 'default'-credentials test app sends on payment routes (created on first use). */
export async function defaultMerchantOf (app: App): Promise<MerchantCredentials> {
  let merchant = defaultMerchants.get(app)
  if (merchant === undefined) {
    merchant = merchantWithKey(app, { name: 'Default test merchant' })
    defaultMerchants.set(app, merchant)
  }
  return await merchant
}

/** The idempotency scope of the default merchant's keys (store-level assertions). */
export async function defaultMerchantScope (app: App): Promise<string> {
  return `merchant:${(await defaultMerchantOf(app)).merchantId}`
}

/** The Authorization header the route's owner would send: a merchant key on /api/…, the admin key elsewhere. */
export async function defaultAuthFor (app: App, url: string): Promise<{ authorization: string }> {
  return url.startsWith('/api/') ? (await defaultMerchantOf(app)).auth : ADMIN_AUTH
}

/** Wraps `app.inject` (promise form) so requests without an Authorization header get the route owner's key. */
function sendDefaultCredentials (app: App): void {
  const inject = app.inject.bind(app) as (opts: InjectOptions | string) => Promise<LightMyRequestResponse>
  const withCredentials = async (opts: InjectOptions | string): Promise<LightMyRequestResponse> => {
    const options: InjectOptions = typeof opts === 'string' ? { url: opts } : opts
    const headers = (options.headers ?? {}) as Record<string, unknown>
    const stated = Object.keys(headers).find((name) => name.toLowerCase() === 'authorization')
    if (stated !== undefined) {
      // `authorization: undefined` states "no credential": the header is left out.
      if (headers[stated] !== undefined) return await inject(options)
      const { [stated]: _omitted, ...anonymous } = headers
      return await inject({ ...options, headers: anonymous as NonNullable<InjectOptions['headers']> })
    }
    const url = typeof options.url === 'string' ? options.url : String(options.path ?? '/')
    return await inject({ ...options, headers: { ...headers, ...await defaultAuthFor(app, url) } })
  }
  app.inject = ((opts?: InjectOptions | string, callback?: unknown) => {
    if (opts === undefined || callback !== undefined) return (inject as (...args: unknown[]) => unknown)(opts, callback)
    return withCredentials(opts)
  }) as App['inject']
}

export async function buildTestApp (t: Test, env: Record<string, string> = {}, overrides: AppOverrides = {}, options: TestAppOptions = {}): Promise<App> {
  const app = await buildApp(testConfig(env), { logger: false, ...overrides })
  t.teardown(async () => { await app.close() })
  if (options.credentials !== 'none') sendDefaultCredentials(app)
  if (options.validateResponses !== false) checkResponsesAgainstOpenApi(t, app)
  return app
}

/** Wraps `app.inject` so that every response it returns is checked against openapi.yaml. */
export function checkResponsesAgainstOpenApi (t: Test, app: App): void {
  const validator = openApiValidator()
  const inject = app.inject.bind(app) as (opts: InjectOptions | string) => Promise<LightMyRequestResponse>
  const checked = async (opts: InjectOptions | string): Promise<LightMyRequestResponse> => {
    const res = await inject(opts)
    const { method = 'GET', url = '/' } = res.raw.req
    const { errors } = validator.check(method, url, res)
    if (errors.length > 0) {
      t.fail(`response does not match openapi.yaml: ${errors.join('; ')}`, {
        request: `${method} ${url}`,
        status: res.statusCode,
        contentType: res.headers['content-type'],
        body: printable(res.body.slice(0, 500))
      })
    }
    return res
  }
  // The promise form only; the chain and callback forms are left as they are (the suite does not use them).
  app.inject = ((opts?: InjectOptions | string, callback?: unknown) => {
    if (opts === undefined || callback !== undefined) return (inject as (...args: unknown[]) => unknown)(opts, callback)
    return checked(opts)
  }) as App['inject']
}

/** A database whose product store and ping fail with `error` (for 500 and readiness tests). */
export function failingDatabase (error: () => Error = () => new Error('boom')): Database {
  const fail = async (): Promise<never> => { throw error() }
  return { kind: 'sqlite', products: { get: fail, put: fail }, ping: fail, close: async () => {} } as unknown as Database
}
