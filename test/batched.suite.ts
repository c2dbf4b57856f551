import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/*
 * The small test files — the domain's, the services', each PSP folder's own, secrets', schemas', the store's that need
 * no PostgreSQL, and the quick ones of plugins, routes and checks — run batched in one test process: each file's own
 * process (tap's loaders, TypeScript, imports) costs about 2 s of CPU on this 2-core machine, more than their tests.
 * .taprc runs this suite instead of them (it excludes them); any one still runs alone, e.g.
 * `npx tap test/domain/amounts.test.ts`. test/batched-suite.test.ts checks that the two lists agree. A file that needs
 * a process of its own (PostgreSQL's slot, process-wide state, module mocks, what is loaded at start) stays out.
 */

/** Folders (every `*.test.ts` in them and their subfolders) and single files, relative to test/. */
export const BATCHED_TESTS = [
  'domain', 'services', 'gateway/adyen', 'gateway/simulated', 'gateway/stripe', 'schemas', 'secrets', 'store/sqlite', 'docs',
  'gateway/registry.test.ts', 'import-graph.test.ts',
  'plugins/job-log.test.ts', 'plugins/http/conditional.test.ts', 'plugins/http/lazy-schemas.test.ts', 'plugins/http/errors/classify-error.test.ts',
  'store/health.test.ts', 'store/migrations.test.ts', 'store/sql.test.ts', 'store/sql-once.test.ts', 'store/unavailable.test.ts',
  'plugins/idempotency.test.ts', 'plugins/secrets.test.ts', 'plugins/connectors-stripe-url.test.ts', 'plugins/request-id.test.ts',
  'plugins/http/dependencies.test.ts', 'plugins/http/access-log.test.ts',
  'routes/record-ids.test.ts', 'routes/payments/events-filter.test.ts', 'routes/payments/commits.test.ts',
  'openapi-open-responses.test.ts', 'openapi-validator.test.ts', 'psp-names.test.ts'
]

/** The test files of the suite, in a stable order. */
export function batchedTestFiles (): string[] {
  return BATCHED_TESTS.flatMap((entry) => entry.endsWith('.test.ts')
    ? [join(__dirname, entry)]
    // Recursive, as .taprc's `<folder>/**` is: a test in a subfolder is excluded there and run here.
    : readdirSync(join(__dirname, entry), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.test.ts'))
      .sort()
      .map((name) => join(__dirname, entry, name)))
}

// Run as tap's entry point (not when the check imports the lists): each file's top-level tests join this root.
if (process.argv[1]?.endsWith('batched.suite.ts') === true) {
  for (const file of batchedTestFiles()) require(file)
}
