import { StoreUnavailableError } from '../domain/errors'
import type { DatabaseHealth, HealthChange, UnavailableReason } from './types'
import { STORE_RETRY_AFTER_SECONDS, unavailableReason } from './unavailable'

/** How long the database must answer without failure before it counts as back (DATABASE_SETTLE_MS). */
export const DEFAULT_SETTLE_MS = 2_000

/** node-postgres and pg-pool failures that mean no answer came at all (as opposed to an error the server sent). */
const NO_ANSWER_MESSAGE = /^(Query read timeout|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed)/

/** True when `error` means the database did not answer (down, unreachable, paused): new calls need not wait for the same. */
function noAnswer (error: unknown, reason: UnavailableReason): boolean {
  if (reason === 'unreachable') return true
  const cause = error instanceof StoreUnavailableError ? error.cause : error
  return reason === 'timeout' && cause instanceof Error && NO_ANSWER_MESSAGE.test(cause.message)
}

export interface HealthTracker extends DatabaseHealth {
  /** A call failed; `error` is what it threw. */
  failed: (error: unknown) => void
  /** A call was answered. */
  answered: () => void
}

/**
 * What the database's answers said lately. The state leaves 'ok' on the first failure that says the
 * database cannot serve (busy is left out: contention on one row or a serialization failure says
 * nothing about the others) and returns only after `settleMs` of answers without failure, so that a
 * disk that is nearly full, or a server coming back, does not flip the state with every call.
 */
export function databaseHealth (settleMs = DEFAULT_SETTLE_MS, clock: () => number = Date.now): HealthTracker {
  const listeners: Array<(change: HealthChange) => void> = []
  const failures: Record<UnavailableReason, number> = { unreachable: 0, timeout: 0, busy: 0, full: 0, io: 0 }
  let state: 'ok' | UnavailableReason = 'ok'
  let away = false
  let lastFailureAt = 0
  let leftOkAt = 0
  let failuresSinceOk = 0
  const emit = (change: HealthChange): void => { for (const listener of listeners) listener(change) }
  return {
    get state () { return state },
    get away () { return away },
    failures,
    onChange (listener) { listeners.push(listener) },
    failed (error) {
      const reason = unavailableReason(error)
      if (reason === undefined) return
      failures[reason]++
      if (reason === 'busy') return
      lastFailureAt = clock()
      failuresSinceOk++
      // An error the server sent is an answer: only silence makes the next calls fail at once.
      away = noAnswer(error, reason)
      if (state === 'ok') {
        state = reason
        leftOkAt = lastFailureAt
        failuresSinceOk = 1
        emit({ state, previous: 'ok', error, failures: 1, downMs: 0 })
      } else {
        // Still unavailable; readiness names the latest reason, nobody is told again.
        state = reason
      }
    },
    answered () {
      away = false
      if (state === 'ok' || clock() - lastFailureAt < settleMs) return
      const previous = state
      state = 'ok'
      emit({ state, previous, failures: failuresSinceOk, downMs: clock() - leftOkAt })
    }
  }
}

/** The error a call refused while the database is away answers with (503, the reason's Retry-After). */
function awayError (health: DatabaseHealth): StoreUnavailableError {
  const reason = health.state === 'ok' ? 'unreachable' : health.state
  const retryAfter = STORE_RETRY_AFTER_SECONDS[reason]
  return new StoreUnavailableError(
    `The database is unreachable right now. Nothing was lost; retry after ${retryAfter} seconds (with the same Idempotency-Key, if you sent one).`,
    reason, retryAfter)
}

/**
 * Reports every (async) call of `store` to `health`; with `failFast`, refuses calls at once while the
 * database is away instead of letting each wait for its own connection time-out.
 */
export function observed<T extends object> (store: T, health: HealthTracker, options: { failFast: boolean }): T {
  const wrapped: Record<string, unknown> = {}
  const onAnswer = <R>(value: R): R => { health.answered(); return value }
  const onFailure = (err: unknown): never => { health.failed(err); throw err }
  for (const [name, member] of Object.entries(store)) {
    wrapped[name] = typeof member !== 'function'
      ? member
      : (...args: unknown[]) => options.failFast && health.away
          ? Promise.reject(awayError(health))
          : (member as (...a: unknown[]) => Promise<unknown>).apply(store, args).then(onAnswer, onFailure)
  }
  return wrapped as T
}
