import t from 'tap'
import { migrate, migrationsFor, type Migration, type MigrationRunner } from '../../src/store/migrations'
import { itemAt } from '../helpers/items'

/** A runner that records the steps the one loop takes, over an in-memory schema_migrations table. */
function recordingRunner (applied: number[] = [], failOn?: string) {
  const steps: string[] = []
  const recorded = [...applied]
  let open: number[] | undefined
  const runner: MigrationRunner = {
    dialect: 'postgres',
    exec: async (sql) => {
      if (sql === failOn) throw new Error('syntax error')
      steps.push(sql.startsWith('CREATE TABLE IF NOT EXISTS schema_migrations') ? 'bookkeeping' : `exec ${sql}`)
    },
    query: async <R>(sql: string, params: unknown[] = []) => {
      if (sql.startsWith('SELECT')) return recorded.map((version) => ({ version })) as R[]
      steps.push(`record ${String(params[0])} ${String(params[1])}`)
      open?.push(params[0] as number)
      return []
    },
    exclusively: async (run) => {
      steps.push('lock')
      try { return await run() } finally { steps.push('unlock') }
    },
    transaction: async (work) => {
      steps.push('begin')
      open = []
      try {
        await work()
        recorded.push(...open)
        steps.push('commit')
      } catch (err) {
        steps.push('rollback')
        throw err
      } finally {
        open = undefined
      }
    }
  }
  return { runner, steps, recorded }
}

const m = (version: number, sql = `v${version}`): Migration => ({ version, name: `m${version}`, sql })

t.test('one loop: under the dialect\'s lock, the pending migrations in version order, each with its record in one transaction', async (t) => {
  const { runner, steps } = recordingRunner([1])
  t.same(await migrate(runner, [m(3), m(1), m(2)]), [2, 3])
  t.same(steps, [
    'lock', 'bookkeeping',
    'begin', 'exec v2', 'record 2 m2', 'commit',
    'begin', 'exec v3', 'record 3 m3', 'commit',
    'unlock'
  ])
})

t.test('a failing migration is rolled back and names itself; those before it stay applied; the lock is released', async (t) => {
  const { runner, steps, recorded } = recordingRunner([], 'v2')
  await t.rejects(migrate(runner, [m(1), m(2), m(3)]), { message: 'PostgreSQL migration 2 (m2) failed: syntax error' })
  t.same(recorded, [1])
  t.same(steps, ['lock', 'bookkeeping', 'begin', 'exec v1', 'record 1 m1', 'commit', 'begin', 'rollback', 'unlock'])
})

t.test('two migrations with one version are refused before anything runs', async (t) => {
  const { runner, steps } = recordingRunner()
  await t.rejects(migrate(runner, [m(1), m(2), m(2, 'another v2')]), { message: 'migration version 2 is used twice' })
  t.same(steps, [])
})

t.test('the schema is written once: both dialects have the same versions and names, spelled apart only where they differ', async (t) => {
  const sqlite = migrationsFor('sqlite')
  const postgres = migrationsFor('postgres')
  t.same(sqlite.map(({ version, name }) => ({ version, name })), postgres.map(({ version, name }) => ({ version, name })))
  t.same(sqlite.map((x) => x.version), [...sqlite.map((x) => x.version)].sort((a, b) => a - b), 'in version order')
  t.match(itemAt(sqlite, 0).sql, /STRICT/)
  t.notMatch(itemAt(postgres, 0).sql, /STRICT/)
})
