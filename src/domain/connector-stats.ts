import { ValidationError, type FieldErrors } from './errors'
import type { ConnectorType } from './connectors'

/**
 * Issue 44 ("Dashboard II"): how the calls a merchant's payments made to its connectors went. Every charge asked of
 * a connector (a call to the PSP's charge endpoint) is recorded once, with the outcome of that call and how long the
 * PSP took to answer it (`connector_attempts`, written right after the call). What happens to the payment later (the
 * shopper's authentication, a lookup, the PSP's own webhook) changes that record in nothing: the figures are per call.
 */
export const CALL_OUTCOMES = ['succeeded', 'authorized', 'requires_action', 'declined', 'not_processed', 'unknown'] as const
export type CallOutcome = typeof CALL_OUTCOMES[number]

/** Outcomes the PSP answered (latency is measured over these); not_processed and unknown are failures of the call itself. */
export const ANSWERED_OUTCOMES: readonly CallOutcome[] = ['succeeded', 'authorized', 'requires_action', 'declined']

/** One charge call to a connector and its outcome. */
export interface ConnectorCall {
  id: string
  paymentId: string
  merchantId: string | null
  /** The connector account; null: the service's default gateway (a merchant without accounts). */
  connectorId: string | null
  connectorType: ConnectorType
  outcome: CallOutcome
  /** The decline code or the failure's code, else null. */
  code: string | null
  startedAt: string
  answeredAt: string
  /** answeredAt − startedAt, by the service's clock. */
  durationMs: number
}

/** What a store counted for one connector over a range. */
export interface ConnectorCallFigures {
  connectorId: string | null
  connectorType: ConnectorType
  counts: Record<CallOutcome, number>
  /** Nearest-rank percentiles of the answered calls' durations (ms); null when none was answered. */
  p50Ms: number | null
  p95Ms: number | null
}

export interface ConnectorStatsEntry extends ConnectorCallFigures {
  /** The account's description; null when it has none (and for the default gateway). */
  description: string | null
  /** True for an account deleted since (its calls in the range are still counted). */
  deleted: boolean
  attempts: number
  /** See successRate(). */
  successRate: number | null
}

export interface ConnectorStats {
  createdGte: string
  createdLt: string
  connectors: ConnectorStatsEntry[]
}

export const DEFAULT_STATS_DAYS = 30
export const MAX_STATS_DAYS = 366
const DAY_MS = 86_400_000

export interface StatsRange { createdGte: string, createdLt: string }

function instantOf (value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const ms = Date.parse(value)
  return Number.isNaN(ms) ? undefined : ms
}

/**
 * The range of call start times asked for: `createdLt` defaults to now (by the clock), `createdGte` to 30 days before
 * `createdLt`. Not an instant, `createdGte` not before `createdLt`, or more than 366 days: ValidationError.
 */
export function statsRange (query: { createdGte?: string, createdLt?: string }, now: number): StatsRange {
  const errors: FieldErrors = {}
  const lt = query.createdLt === undefined ? now : instantOf(query.createdLt)
  if (lt === undefined) errors.createdLt = ['The createdLt parameter must be an ISO 8601 instant.']
  const gte = query.createdGte === undefined ? (lt === undefined ? undefined : lt - DEFAULT_STATS_DAYS * DAY_MS) : instantOf(query.createdGte)
  if (gte === undefined && query.createdGte !== undefined) errors.createdGte = ['The createdGte parameter must be an ISO 8601 instant.']
  if (gte !== undefined && lt !== undefined) {
    if (gte >= lt) errors.createdGte = ['createdGte must be before createdLt.']
    else if (lt - gte > MAX_STATS_DAYS * DAY_MS) errors.createdGte = [`Connector statistics cover at most ${MAX_STATS_DAYS} days.`]
  }
  if (Object.keys(errors).length > 0 || gte === undefined || lt === undefined) throw new ValidationError(errors)
  return { createdGte: new Date(gte).toISOString(), createdLt: new Date(lt).toISOString() }
}

/**
 * succeeded + authorized over every finished call: succeeded, authorized, declined, not_processed and unknown.
 * Declines count against the connector like Stripe's and Hyperswitch's success rates count them (a refused payment is
 * a payment not taken), and so do the calls that failed (refused connection, PSP error, time-out): a connector that
 * does not answer is what the figure exists to show, and Hyperswitch's per-connector success rate counts its errors
 * too. Calls waiting for the shopper's authentication (requires_action) are left out: neither the connector nor
 * the issuer has decided yet (Hyperswitch leaves authentication_pending out likewise). Null when no call finished.
 */
export function successRate (counts: Record<CallOutcome, number>): number | null {
  const won = counts.succeeded + counts.authorized
  const finished = won + counts.declined + counts.not_processed + counts.unknown
  return finished === 0 ? null : won / finished
}

export function zeroCounts (): Record<CallOutcome, number> {
  return { succeeded: 0, authorized: 0, requires_action: 0, declined: 0, not_processed: 0, unknown: 0 }
}

/** The figures of one connector with its account's details and its rate. */
export function statsEntry (figures: ConnectorCallFigures, account: { description: string | null, deleted: boolean }): ConnectorStatsEntry {
  const attempts = CALL_OUTCOMES.reduce((sum, outcome) => sum + figures.counts[outcome], 0)
  return { ...figures, description: account.description, deleted: account.deleted, attempts, successRate: successRate(figures.counts) }
}
