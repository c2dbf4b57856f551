import { StoreUnavailableError } from '../domain/errors'

type Reason = StoreUnavailableError['reason']

/** Seconds a client should wait before retrying, by what went wrong. */
export const STORE_RETRY_AFTER_SECONDS: Record<Reason, number> = {
  unreachable: 2,
  timeout: 2,
  busy: 1,
  io: 5,
  full: 30
}

const DETAILS: Record<Reason, string> = {
  unreachable: 'The database is unreachable right now.',
  timeout: 'The database did not answer in time.',
  busy: 'The database is busy.',
  io: 'The database could not read or write its files.',
  full: 'The database is out of storage space.'
}

/** Node socket errors: the server is down, restarting or unreachable. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED'])

/** node-postgres and pg-pool failures that carry no SQLSTATE. */
const PG_CONNECTION_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/

/** PostgreSQL SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html) that mean "retry later". */
function postgresReason (code: string): Reason | undefined {
  if (code.startsWith('08')) return 'unreachable' // connection exception
  if (code === '57P01' || code === '57P02' || code === '57P03') return 'unreachable' // admin/crash shutdown, cannot connect now
  if (code === '57014' || code === '25P03') return 'timeout' // statement_timeout, idle-in-transaction time-out
  if (code === '53100') return 'full' // disk_full
  if (code.startsWith('53') || code === '40001' || code === '40P01' || code === '55P03') return 'busy' // resources, serialization, deadlock, lock time-out
  if (code.startsWith('58')) return 'io' // system error (I/O)
  return undefined
}

function sqliteReason (code: string): Reason | undefined {
  if (code === 'SQLITE_FULL') return 'full'
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code === 'SQLITE_NOMEM') return 'busy'
  if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY')) return 'io'
  return undefined
}

/** Why `error` means the database cannot serve right now, or undefined for any other error (a bug: a 500). */
export function unavailableReason (error: unknown): Reason | undefined {
  if (error instanceof StoreUnavailableError) return error.reason
  if (!(error instanceof Error)) return undefined
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code)) return 'unreachable'
    if (code.startsWith('SQLITE_')) return sqliteReason(code)
    if (/^[0-9A-Z]{5}$/.test(code)) return postgresReason(code)
  }
  if (error.message === 'Query read timeout') return 'timeout'
  if (PG_CONNECTION_MESSAGE.test(error.message)) return 'unreachable'
  return undefined
}

/** The domain error for a database failure that a retry can cure; any other error unchanged. */
export function toStoreError (error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error
  const reason = unavailableReason(error)
  if (reason === undefined) return error
  const retryAfter = STORE_RETRY_AFTER_SECONDS[reason]
  return new StoreUnavailableError(
    `${DETAILS[reason]} Nothing was lost; retry after ${retryAfter} seconds (with the same Idempotency-Key, if you sent one).`,
    reason, retryAfter, { cause: error })
}

const rethrowMapped = (err: unknown): never => { throw toStoreError(err) }

/** Wraps every (async) method of `store` so that database failures surface as StoreUnavailableError. */
export function guardStore<T extends object> (store: T): T {
  const guarded: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(store)) {
    guarded[name] = typeof member !== 'function'
      ? member
      // No extra async frame on the hot path: only a rejection handler.
      : (...args: unknown[]) => (member as (...a: unknown[]) => Promise<unknown>).apply(store, args).catch(rethrowMapped)
  }
  return guarded as T
}
