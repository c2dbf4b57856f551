/**
 * SQL written once for both databases. A statement's text names its parameters, checked against the
 * parameter type `P`; it is compiled once, when it is defined, into each dialect's placeholders
 * (SQLite `?`, PostgreSQL `$n`; a name used twice is one `$n`), so a call only lists its values in
 * order. No query builder runs per call (see docs/architecture.md, "SQL written once").
 *
 *     const get = sql<{ id: string }, ProductRow>('product-get')`SELECT * FROM products WHERE id = ${'id'}`
 *
 * A fragment of SQL text (a column list) goes in as `${raw(COLUMNS)}`.
 */
export type SqlDialect = 'sqlite' | 'postgres'

export interface Statement<P, R = unknown> {
  /** PostgreSQL's prepared-statement name: unique per text. */
  readonly name: string
  readonly text: Readonly<Record<SqlDialect, string>>
  /** The values of one call, in each dialect's placeholder order. */
  readonly values: (params: P, dialect: SqlDialect) => unknown[]
  /** Only carries the row type. */
  readonly row?: R
}

/** SQL text to splice into a statement as it is (never a value). */
export interface RawSql { readonly raw: string }

export function raw (text: string): RawSql {
  return { raw: text }
}

const names = new Set<string>()

export function sql<P = Record<string, never>, R = unknown> (name: string) {
  if (names.has(name)) throw new Error(`two SQL statements are named ${name}`)
  names.add(name)
  return (strings: TemplateStringsArray, ...parts: Array<(keyof P & string) | RawSql>): Statement<P, R> => {
    const parameters = parts.filter((part): part is keyof P & string => typeof part === 'string')
    const distinct = [...new Set(parameters)]
    const text = (placeholder: (parameter: keyof P & string) => string): string =>
      strings.reduce((built, next, i) => {
        const part = parts[i - 1]
        if (part === undefined) return built + next
        return built + (typeof part === 'string' ? placeholder(part) : part.raw) + next
      })
    return {
      name,
      text: { sqlite: text(() => '?'), postgres: text((parameter) => `$${distinct.indexOf(parameter) + 1}`) },
      values: (params, dialect) => (dialect === 'sqlite' ? parameters : distinct).map((parameter) => params[parameter])
    }
  }
}

/**
 * Runs statements written once, for the parts of the stores that are the same on both databases.
 * Reads run on their own (SQLite: on the connection, WAL readers never wait; PostgreSQL: one pooled
 * query); a write is one statement, atomic and committed when it resolves (SQLite: in the group
 * commit; PostgreSQL: autocommit). What must run inside a transaction with other statements stays in
 * the dialect's own code (sqlite/, postgres/), which uses the same statements.
 */
export interface SqlRunner {
  readonly dialect: SqlDialect
  /** The first row, if any. */
  get: <P, R>(statement: Statement<P, R>, params: P) => Promise<R | undefined>
  all: <P, R>(statement: Statement<P, R>, params: P) => Promise<R[]>
  /** Runs one write statement; how many rows it changed. */
  write: <P>(statement: Statement<P>, params: P) => Promise<number>
  /** A read whose text is built per call, with the dialect's placeholders (listing.ts). */
  query: <R>(text: string, values: unknown[]) => Promise<R[]>
}
