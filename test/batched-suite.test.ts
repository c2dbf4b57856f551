import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { BATCHED_TESTS, batchedTestFiles } from './batched.suite'

// .taprc runs test/batched.suite.ts instead of its files: what the suite runs must be excluded there (or it would run
// twice), and what is excluded there must be in the suite (or it would never run).
t.test('the batched suite runs exactly the folders and files .taprc leaves to it', async (t) => {
  const taprc = parse(readFileSync(join(__dirname, '..', '.taprc'), 'utf8')) as { include: string[], exclude: string[] }
  t.ok(taprc.include.includes('test/batched.suite.ts'), 'npm test runs the suite')
  t.same(taprc.exclude.map((pattern) => pattern.replace(/^test\//, '').replace(/\/\*\*$/, '')).sort(), [...BATCHED_TESTS].sort())
  const files = batchedTestFiles()
  t.ok(files.length >= 50, `${files.length} files in the suite`)
  t.ok(files.every((file) => file.endsWith('.test.ts')))
})
