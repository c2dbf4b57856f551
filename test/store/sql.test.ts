import t from 'tap'
import { raw, sql } from '../../src/store/sql'

t.test('a statement is compiled once into each dialect\'s placeholders; a call lists its values in their order', async (t) => {
  const statement = sql<{ id: string, at: string }>('test-record-use')`
    UPDATE api_keys SET last_used_at = ${'at'} WHERE id = ${'id'} AND (last_used_at IS NULL OR last_used_at < ${'at'})`
  t.equal(statement.name, 'test-record-use')
  t.match(statement.text.sqlite, /SET last_used_at = \? WHERE id = \? AND \(last_used_at IS NULL OR last_used_at < \?\)$/)
  t.match(statement.text.postgres, /SET last_used_at = \$1 WHERE id = \$2 AND \(last_used_at IS NULL OR last_used_at < \$1\)$/, 'a name used twice is one $n')
  const params = { id: 'k1', at: '2026-01-01T00:00:00.000Z' }
  t.same(statement.values(params, 'sqlite'), [params.at, params.id, params.at])
  t.same(statement.values(params, 'postgres'), [params.at, params.id])
})

t.test('raw text is spliced in as it is, never as a value', async (t) => {
  const statement = sql<{ id: string }>('test-raw')`SELECT ${raw('id, name')} FROM products WHERE id = ${'id'}`
  t.equal(statement.text.sqlite, 'SELECT id, name FROM products WHERE id = ?')
  t.equal(statement.text.postgres, 'SELECT id, name FROM products WHERE id = $1')
  t.same(statement.values({ id: 'p1' }, 'postgres'), ['p1'])
})

t.test('a statement without parameters has no values', async (t) => {
  const statement = sql('test-count')`SELECT count(*) AS count FROM products`
  t.equal(statement.text.postgres, 'SELECT count(*) AS count FROM products')
  t.same(statement.values({}, 'sqlite'), [])
})

t.test('two statements under one name are refused (PostgreSQL prepares each name with one text)', async (t) => {
  sql('test-twice')`SELECT 1`
  t.throws(() => sql('test-twice')`SELECT 2`, { message: 'two SQL statements are named test-twice' })
})
