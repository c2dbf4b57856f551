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
 * A statement assembled from a list of parts (text and parameter names) rather than written as a template:
 * for statements whose columns come from a list (`insertSql`, an UPDATE of every mutable column).
 */
export function sqlOf<P, R = unknown> (name: string, parts: ReadonlyArray<RawSql | (keyof P & string)>): Statement<P, R> {
  const strings = ['']
  const parameters: Array<keyof P & string> = []
  for (const part of parts) {
    if (typeof part === 'string') {
      parameters.push(part)
      strings.push('')
    } else {
      strings[strings.length - 1] += part.raw
    }
  }
  return sql<P, R>(name)(Object.assign(strings, { raw: strings }), ...parameters)
}

/** Parts joined by `separator` (text). */
export function joined<T extends string> (parts: ReadonlyArray<RawSql | T>, separator: string): Array<RawSql | T> {
  return parts.flatMap((part, i) => (i === 0 ? [part] : [raw(separator), part]))
}

/** A row's values keyed by its columns (in the same order), the parameters of `insertSql`. */
export function columnParams<C extends string> (columns: readonly C[], values: readonly unknown[]): Record<C, unknown> {
  return Object.fromEntries(columns.map((column, i) => [column, values[i]])) as Record<C, unknown>
}

/** `INSERT INTO table (columns) VALUES (…)`, one parameter named after each column, then `suffix`. */
export function insertSql<C extends string> (name: string, table: string, columns: readonly C[], suffix = ''): Statement<Record<C, unknown>> {
  return sqlOf<Record<C, unknown>>(name, [raw(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (`), ...joined(columns, ', '), raw(`)${suffix}`)])
}

/**
 * The text of an INSERT built per call (a table and columns known only then: an idempotent creation's
 * rows), with the dialect's placeholders; PostgreSQL's are numbered from `from`.
 */
export function insertText (dialect: SqlDialect, table: string, columns: readonly string[], from = 1): string {
  const placeholders = columns.map((_, i) => (dialect === 'sqlite' ? '?' : `$${from + i}`))
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${placeholders.join(', ')})`
}

/**
 * Runs statements written once, for the parts of the stores that are the same on both databases.
 * Reads run on their own (SQLite: on the connection, WAL readers never wait; PostgreSQL: one pooled
 * query); a write is one statement, atomic and committed when it resolves (SQLite: in the group
 * commit; PostgreSQL: autocommit). What must run inside a transaction with other statements stays in
 * the dialect's own code (sqlite/, postgres/), which uses the same statements.
 */
/** One write statement with its parameters. */
export interface Write {
  statement: Statement<never>
  params: unknown
}

export function write<P> (statement: Statement<P>, params: P): Write {
  return { statement: statement as Statement<never>, params }
}

export interface SqlRunner {
  readonly dialect: SqlDialect
  /** The first row, if any. */
  get: <P, R>(statement: Statement<P, R>, params: P) => Promise<R | undefined>
  all: <P, R>(statement: Statement<P, R>, params: P) => Promise<R[]>
  /** Runs one write statement; how many rows it changed. */
  write: <P>(statement: Statement<P>, params: P) => Promise<number>
  /**
   * Runs `first` and, only when it changed a row, each of `then`, all in one transaction; how many rows
   * `first` changed. For a change and what must commit with it (its audit entry, the sessions it ends).
   */
  writeThen: <P>(first: Statement<P>, params: P, then: readonly Write[]) => Promise<number>
  /** A read whose text is built per call, with the dialect's placeholders (listing.ts). */
  query: <R>(text: string, values: unknown[]) => Promise<R[]>
}
