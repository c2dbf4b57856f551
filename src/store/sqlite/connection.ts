import BetterSqlite3 from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { migrate, type Migration, type MigrationRunner } from '../migrations'

export type SqliteHandle = BetterSqlite3.Database

/**
 * Checkpoint the WAL into the database file every this many pages (16 MiB of 4 KiB pages) instead of
 * SQLite's 1000: a hot index page rewritten by many commits is copied back once per checkpoint, so fewer,
 * larger checkpoints write (and fsync) less. The price is disk headroom: the WAL grows to about 16 MiB
 * before its first checkpoint, and a WAL that fills the disk on its way there cannot be checkpointed
 * (that writes into the database file) until space is freed elsewhere.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 4000

export interface SqliteOptions {
  synchronous: 'FULL' | 'NORMAL'
  /** DATABASE_SETTLE_MS (see guard.ts). */
  settleMs?: number
}

/** `file:./data/service.db` → `./data/service.db`; `file::memory:` → `:memory:`. */
export function sqlitePathFromUrl (url: string): string {
  const path = url.replace(/^file:/, '')
  if (path === '') throw new Error('DATABASE_URL file: needs a path')
  return path
}

export function openSqlite (url: string, options: SqliteOptions): SqliteHandle {
  const path = sqlitePathFromUrl(url)
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  return configured(new BetterSqlite3(path), options)
}

/** An in-memory database holding a copy of `image` (a serialized database): what it starts with, not a file. */
export function openSqliteImage (image: Buffer, options: SqliteOptions): SqliteHandle {
  return configured(new BetterSqlite3(image), options)
}

function configured (db: SqliteHandle, options: SqliteOptions): SqliteHandle {
  db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${options.synchronous}`)
  db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`)
  // After a checkpoint the WAL file is truncated back to at most 64 MiB.
  db.pragma('journal_size_limit = 67108864')
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  // Group commit runs each write of several statements in a savepoint; SQLite keeps what a savepoint may have to undo in a
  // sub-journal, which it spills to a temporary file past 64 KiB: one pwrite per page image, ~20 per
  // payment under load (measured with strace). In memory it costs a few pages per batch and no system
  // call. Durability is the WAL's alone: a sub-journal only serves a rollback inside a live transaction.
  db.pragma('temp_store = MEMORY')
  return db
}

/** Applies the pending migrations (the one loop in ../migrations.ts) on this handle. */
export async function migrateSqlite (db: SqliteHandle, migrations: readonly Migration[]): Promise<number[]> {
  return await migrate(sqliteMigrationRunner(db), migrations)
}

/**
 * SQLite's steps: each migration in a BEGIN IMMEDIATE transaction, which takes the database's
 * write lock at once, so a second process opening the same file waits (busy_timeout) instead of
 * interleaving its DDL. There is no lock beyond that: one process serves a SQLite file.
 */
function sqliteMigrationRunner (db: SqliteHandle): MigrationRunner {
  return {
    dialect: 'sqlite',
    exec: async (sql) => { db.exec(sql) },
    query: async <R>(sql: string, params: unknown[] = []) => {
      const statement = db.prepare(sql)
      if (statement.reader) return statement.all(...params) as R[]
      statement.run(...params)
      return []
    },
    exclusively: async (run) => await run(),
    transaction: async (work) => {
      db.exec('BEGIN IMMEDIATE')
      try {
        await work()
        db.exec('COMMIT')
      } catch (err) {
        if (db.inTransaction) db.exec('ROLLBACK')
        throw err
      }
    }
  }
}
