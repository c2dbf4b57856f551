import type { SqlDialect } from './sql'

/** What SQLite and PostgreSQL spell differently in the DDL; everything else is written once. */
export interface Dialect {
  /** Which database, for the few changes that are procedures rather than spellings (SQLite cannot alter a CHECK). */
  kind: SqlDialect
  /** 64-bit integers: money in minor units, epoch-millisecond times. */
  bigint: string
  /** Floating-point numbers (product prices). */
  double: string
  /** After a table's column list: SQLite's STRICT typing. */
  table: string
}

export const dialects = {
  sqlite: { kind: 'sqlite', bigint: 'INTEGER', double: 'REAL', table: ' STRICT' },
  postgres: { kind: 'postgres', bigint: 'BIGINT', double: 'DOUBLE PRECISION', table: '' }
} satisfies Record<SqlDialect, Dialect>

/** One schema change, written once for both dialects. Never edit a released one: add a new version. */
export interface SchemaChange {
  version: number
  name: string
  ddl: (d: Dialect) => string
}
