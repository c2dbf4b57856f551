import { UnknownCursorError, type CreatedRange, type Page, type PageRequest } from '../domain/pagination'
import type { SqlRunner } from './sql'

/**
 * Cursor pagination, written once for both dialects (they agree on row-value
 * comparisons and differ only in placeholders). Order: created_at DESC, id DESC
 * (ISO-8601 text compares in time order). A page is `limit + 1` rows of one
 * index range scan: the extra row only says whether there is more.
 */
export interface ListSpec {
  table: string
  /** Equality conditions that define the list (owner, parent); a cursor must lie inside them. */
  scope: Record<string, unknown>
  /** Further conditions: column = value; undefined values are skipped. */
  filters?: Record<string, unknown>
  /** Only rows created in this range. */
  created?: CreatedRange
  /** Only rows whose JSON `column` (an object of strings, stored as text) has `key` set to exactly `value`. */
  jsonEntry?: { column: string, key: string, value: string }
  /** Further conditions written by the caller, each given the function that adds a parameter and returns its placeholder. */
  conditions?: Array<(param: (value: unknown) => string) => string>
  page: PageRequest
}

export async function listPage<R extends { id: string, created_at: string }> (db: Pick<SqlRunner, 'dialect' | 'query'>, spec: ListSpec): Promise<Page<R>> {
  const { dialect } = db
  const values: unknown[] = []
  const param = (value: unknown): string => {
    values.push(value)
    return dialect === 'postgres' ? `$${values.length}` : '?'
  }
  const conditions: string[] = []
  for (const [column, value] of Object.entries(spec.scope)) {
    if (value !== undefined) conditions.push(`${column} = ${param(value)}`)
  }
  const scopeConditions = [...conditions]
  const scopeValues = [...values]

  const cursorId = spec.page.startingAfter ?? spec.page.endingBefore
  const newerFirst = spec.page.endingBefore === undefined
  if (cursorId !== undefined) {
    const cursorText = `SELECT id, created_at FROM ${spec.table} WHERE ${[...scopeConditions, `id = ${dialect === 'postgres' ? `$${scopeValues.length + 1}` : '?'}`].join(' AND ')}`
    const [cursor] = await db.query<R>(cursorText, [...scopeValues, cursorId])
    if (cursor === undefined) throw new UnknownCursorError(spec.page.startingAfter !== undefined ? 'startingAfter' : 'endingBefore', cursorId)
    conditions.push(`(created_at, id) ${newerFirst ? '<' : '>'} (${param(cursor.created_at)}, ${param(cursor.id)})`)
  }
  const filters: Array<[string, '=' | '>=' | '<', unknown]> = [
    ...Object.entries(spec.filters ?? {}).map(([column, value]): [string, '=', unknown] => [column, '=', value]),
    ['created_at', '>=', spec.created?.createdGte],
    ['created_at', '<', spec.created?.createdLt]
  ]
  for (const [column, operator, value] of filters) {
    if (value !== undefined) conditions.push(`${column} ${operator} ${param(value)}`)
  }
  if (spec.jsonEntry !== undefined) {
    const { column, key, value } = spec.jsonEntry
    // SQLite's JSON paths cannot quote every key (a `"` in it); json_each compares keys as they are.
    conditions.push(dialect === 'postgres'
      ? `(${column}::jsonb ->> ${param(key)}) = ${param(value)}`
      : `EXISTS (SELECT 1 FROM json_each(${spec.table}.${column}) AS entry WHERE entry.key = ${param(key)} AND entry.value = ${param(value)})`)
  }
  for (const condition of spec.conditions ?? []) conditions.push(condition(param))
  const direction = newerFirst ? 'DESC' : 'ASC'
  const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`
  const text = `SELECT * FROM ${spec.table} ${where} ORDER BY created_at ${direction}, id ${direction} LIMIT ${param(spec.page.limit + 1)}`
  const rows = await db.query<R>(text, values)
  const hasMore = rows.length > spec.page.limit
  const data = rows.slice(0, spec.page.limit)
  return { data: newerFirst ? data : data.reverse(), hasMore }
}
