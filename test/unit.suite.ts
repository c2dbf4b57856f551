import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/*
 * The small unit test files — the domain, the services, each PSP folder's own, secrets, schemas, the store's that need
 * no PostgreSQL, a few plugins' and checks' — run in one test process: each file's own process (tap's loaders,
 * TypeScript, imports) cost more CPU than its tests, about 2 s each on this 2-core machine. .taprc runs this suite
 * instead of them (it excludes them); any one still runs alone, e.g. `npx tap test/domain/amounts.test.ts`.
 * test/unit-suite.test.ts checks that the two lists agree.
 */

/** Folders (every `*.test.ts` in them) and single files, relative to test/. */
export const UNIT_TESTS = [
  'domain', 'services', 'gateway/adyen', 'gateway/simulated', 'gateway/stripe', 'schemas', 'secrets', 'store/sqlite', 'docs',
  'gateway/registry.test.ts', 'import-graph.test.ts',
  'plugins/job-log.test.ts', 'plugins/http/conditional.test.ts', 'plugins/http/lazy-schemas.test.ts', 'plugins/http/errors/classify-error.test.ts',
  'store/health.test.ts', 'store/migrations.test.ts', 'store/sql.test.ts', 'store/sql-once.test.ts', 'store/unavailable.test.ts'
]

/** The test files of the suite, in a stable order. */
export function unitTestFiles (): string[] {
  return UNIT_TESTS.flatMap((entry) => entry.endsWith('.test.ts')
    ? [join(__dirname, entry)]
    : readdirSync(join(__dirname, entry))
      .filter((name) => name.endsWith('.test.ts'))
      .sort()
      .map((name) => join(__dirname, entry, name)))
}

// Run as tap's entry point (not when the check imports the lists): each file's top-level tests join this root.
if (process.argv[1]?.endsWith('unit.suite.ts') === true) {
  for (const file of unitTestFiles()) require(file)
}
