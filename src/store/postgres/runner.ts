import type { SqlRunner, Statement } from '../sql'
import pg from 'pg'
import { inTransaction, type Queryable } from './connection'

/** A statement written once, as a named (prepared) query for `pg`. */
export function query<P, R> (statement: Statement<P, R>, params: P): { name: string, text: string, values: unknown[] } {
  return { name: statement.name, text: statement.text.postgres, values: statement.values(params, 'postgres') }
}

/** Every statement on its own: the pool's autocommit, or `db`'s transaction when it is a checked-out client. */
export function postgresRunner (db: Queryable): SqlRunner {
  return {
    dialect: 'postgres',
    get: async <P, R>(statement: Statement<P, R>, params: P) => (await db.query<R & object>(query(statement, params))).rows[0],
    all: async <P, R>(statement: Statement<P, R>, params: P) => (await db.query<R & object>(query(statement, params))).rows,
    write: async (statement, params) => (await db.query(query(statement, params))).rowCount ?? 0,
    writeThen: async (first, params, then) => {
      if (then.length === 0) return (await db.query(query(first, params))).rowCount ?? 0
      const together = async (client: Queryable): Promise<number> => {
        const changed = (await client.query(query(first, params))).rowCount ?? 0
        if (changed > 0) for (const next of then) await client.query(query(next.statement, next.params as never))
        return changed
      }
      // A pool gives the statements one connection and one transaction; a checked-out client is already inside one.
      return db instanceof pg.Pool ? await inTransaction(db, 'READ COMMITTED', together) : await together(db)
    },
    query: async <R>(text: string, values: unknown[]) => (await db.query<R & object>(text, values)).rows
  }
}
