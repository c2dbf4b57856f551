import { ValidationError, type FieldErrors } from './errors'

/**
 * The Overview's daily figures (issue 30): per UTC day and currency, the payments that succeeded
 * and were declined (by the day they were created) and the refunds that succeeded (by the day they
 * succeeded). Amounts are integer minor units here; the API shows them as decimals.
 */
export const DEFAULT_SUMMARY_DAYS = 30
export const MAX_SUMMARY_DAYS = 366

const DAY_MS = 86_400_000
const DATE = /^\d{4}-\d{2}-\d{2}$/

export interface OutcomeFigures { count: number, amountMinor: number }

/** One group a store counted: a day (YYYY-MM-DD) and a currency. */
export interface DailyFigures extends OutcomeFigures { day: string, currency: string }

export interface SummaryFigures {
  succeeded: DailyFigures[]
  declined: DailyFigures[]
  refunded: DailyFigures[]
}

export type SummaryOutcome = keyof SummaryFigures
const OUTCOMES: readonly SummaryOutcome[] = ['succeeded', 'declined', 'refunded']

export interface DaySummary extends Record<SummaryOutcome, OutcomeFigures> { date: string }

export interface CurrencySummary {
  currency: string
  days: DaySummary[]
  totals: Record<SummaryOutcome, OutcomeFigures> & { successRate: number | null }
}

export interface PaymentSummary { from: string, to: string, currencies: CurrencySummary[] }

/** A validated range of whole UTC days, `to` included. */
export interface SummaryRange {
  from: string
  to: string
  /** ISO instants: created_at >= createdGte and < createdLt. */
  createdGte: string
  createdLt: string
}

function dayOf (ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

/** Epoch ms of a calendar date's midnight UTC; undefined when it is not a real date (2026-02-30). */
function midnightOf (date: string): number | undefined {
  if (!DATE.test(date)) return undefined
  const ms = Date.parse(`${date}T00:00:00.000Z`)
  return Number.isNaN(ms) || dayOf(ms) !== date ? undefined : ms
}

/**
 * The range asked for: `to` defaults to today (UTC, by `now`), `from` to the 30 days ending on `to`.
 * Not a date, `from` after `to` or more than 366 days: ValidationError.
 */
export function summaryRange (query: { from?: string, to?: string }, now: number): SummaryRange {
  const errors: FieldErrors = {}
  const toMs = query.to === undefined ? Date.parse(`${dayOf(now)}T00:00:00.000Z`) : midnightOf(query.to)
  if (toMs === undefined) errors.to = ['The to parameter must be a calendar date, YYYY-MM-DD.']
  const fromMs = query.from === undefined
    ? (toMs === undefined ? undefined : toMs - (DEFAULT_SUMMARY_DAYS - 1) * DAY_MS)
    : midnightOf(query.from)
  if (fromMs === undefined && query.from !== undefined) errors.from = ['The from parameter must be a calendar date, YYYY-MM-DD.']
  if (fromMs !== undefined && toMs !== undefined) {
    if (fromMs > toMs) errors.from = ['The from date must not be after the to date.']
    else if ((toMs - fromMs) / DAY_MS + 1 > MAX_SUMMARY_DAYS) errors.from = [`A summary covers at most ${MAX_SUMMARY_DAYS} days.`]
  }
  if (Object.keys(errors).length > 0 || fromMs === undefined || toMs === undefined) throw new ValidationError(errors)
  return {
    from: dayOf(fromMs),
    to: dayOf(toMs),
    createdGte: new Date(fromMs).toISOString(),
    createdLt: new Date(toMs + DAY_MS).toISOString()
  }
}

function zero (): OutcomeFigures {
  return { count: 0, amountMinor: 0 }
}

/** Every day of the range for every currency that has figures, zeros included; currencies in code order. */
export function summarize (range: SummaryRange, figures: SummaryFigures): PaymentSummary {
  const days: string[] = []
  for (let ms = Date.parse(range.createdGte); ms < Date.parse(range.createdLt); ms += DAY_MS) days.push(dayOf(ms))
  const currencies = [...new Set(OUTCOMES.flatMap((outcome) => figures[outcome].map((row) => row.currency)))].sort()
  return {
    from: range.from,
    to: range.to,
    currencies: currencies.map((currency) => {
      const byDay = new Map(days.map((date): [string, DaySummary] => [date, { date, succeeded: zero(), declined: zero(), refunded: zero() }]))
      const totals = { succeeded: zero(), declined: zero(), refunded: zero() }
      for (const outcome of OUTCOMES) {
        for (const row of figures[outcome]) {
          const day = byDay.get(row.day)
          if (row.currency !== currency || day === undefined) continue
          day[outcome].count += row.count
          day[outcome].amountMinor += row.amountMinor
          totals[outcome].count += row.count
          totals[outcome].amountMinor += row.amountMinor
        }
      }
      const decided = totals.succeeded.count + totals.declined.count
      return { currency, days: [...byDay.values()], totals: { ...totals, successRate: decided === 0 ? null : totals.succeeded.count / decided } }
    })
  }
}
