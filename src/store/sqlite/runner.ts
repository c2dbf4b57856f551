import type BetterSqlite3 from 'better-sqlite3'
import type { SqlRunner, Statement } from '../sql'
import type { SqliteHandle } from './connection'
import { immediateWrites, type WriteQueue } from './group-commit'

/** A statement written once, prepared on this connection: synchronous, for use inside a write. */
export interface Prepared<P, R> {
  get: (params: P) => R | undefined
  all: (params: P) => R[]
  /** Rows changed. */
  run: (params: P) => number
}

export function prepare<P, R> (db: SqliteHandle, statement: Statement<P, R>): Prepared<P, R> {
  const prepared = db.prepare<unknown[], R>(statement.text.sqlite)
  return {
    get: (params) => prepared.get(...statement.values(params, 'sqlite')),
    all: (params) => prepared.all(...statement.values(params, 'sqlite')),
    run: (params) => prepared.run(...statement.values(params, 'sqlite')).changes
  }
}

/** Each statement is prepared on first use and kept; writes go through `writes` (the group commit). */
export function sqliteRunner (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): SqlRunner {
  const statements = new Map<Statement<never>, unknown>()
  const texts = new Map<string, BetterSqlite3.Statement<unknown[]>>()
  const prepared = <P, R>(statement: Statement<P, R>): Prepared<P, R> => {
    let found = statements.get(statement) as Prepared<P, R> | undefined
    if (found === undefined) statements.set(statement, found = prepare(db, statement))
    return found
  }
  return {
    dialect: 'sqlite',
    get: async (statement, params) => prepared(statement).get(params),
    all: async (statement, params) => prepared(statement).all(params),
    write: async (statement, params) => await writes.runStatement(() => prepared(statement).run(params)),
    writeThen: async (first, params, then) => {
      if (then.length === 0) return await writes.runStatement(() => prepared(first).run(params))
      return await writes.run(() => {
        const changed = prepared(first).run(params)
        if (changed > 0) for (const next of then) prepared(next.statement).run(next.params as never)
        return changed
      })
    },
    query: async <R>(text: string, values: unknown[]) => {
      let found = texts.get(text)
      if (found === undefined) texts.set(text, found = db.prepare<unknown[]>(text))
      return found.all(...values) as R[]
    }
  }
}
