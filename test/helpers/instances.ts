import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { buildTestApp, type TestAppOptions } from './app'
import type { App, AppOverrides } from '../../app/app'

/** A SQLite database file two apps can share (removed after the test). */
export function sharedDatabase (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'instances-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return `file:${join(dir, 'service.db')}`
}

/** Two apps on one database, as two instances behind a load balancer. */
export async function twoInstances (t: Test, env: Record<string, string>, overrides: AppOverrides = {}, options: TestAppOptions = {}): Promise<[App, App]> {
  const shared = { DATABASE_URL: sharedDatabase(t), ...env }
  const a = await buildTestApp(t, shared, overrides, options)
  const b = await buildTestApp(t, shared, overrides, options)
  return [a, b]
}
