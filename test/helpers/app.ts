import type { Test } from 'tap'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp, type App, type AppOverrides } from '../../src/app'
import type { Database } from '../../src/store/types'
import { loadConfig, type Config } from '../../src/config'
import { openApiValidator, printable } from './openapi-validator'

/** A config for tests: in-memory SQLite, no logging, background workers off. */
export function testConfig (env: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: 'file::memory:',
    LOG_LEVEL: 'silent',
    REAPER_INTERVAL_MS: '0',
    RECOVERY_INTERVAL_MS: '0',
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
}

export async function buildTestApp (t: Test, env: Record<string, string> = {}, overrides: AppOverrides = {}, options: TestAppOptions = {}): Promise<App> {
  const app = await buildApp(testConfig(env), { logger: false, ...overrides })
  t.teardown(async () => { await app.close() })
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
