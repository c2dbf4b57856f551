import type { Test } from 'tap'
import { buildApp, type App, type AppOverrides } from '../../src/app'
import { loadConfig, type Config } from '../../src/config'

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

export async function buildTestApp (t: Test, env: Record<string, string> = {}, overrides: AppOverrides = {}): Promise<App> {
  const app = await buildApp(testConfig(env), { logger: false, ...overrides })
  t.teardown(async () => { await app.close() })
  return app
}
