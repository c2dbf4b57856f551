import t from 'tap'
import { ValidationError } from '../../src/domain/errors'
import { summarize, summaryRange } from '../../src/domain/payment-summary'
import { itemAt } from '../helpers/items'

function fieldErrorsOf (query: { from?: string, to?: string }): Record<string, string[]> {
  try {
    summaryRange(query, NOW)
  } catch (error) {
    if (error instanceof ValidationError) return error.errors
    throw error
  }
  throw new Error('no ValidationError')
}

const NOW = Date.parse('2026-03-01T23:59:59.999Z')

t.test('summaryRange: defaults by the clock, whole UTC days, the end exclusive one day after `to`', async (t) => {
  t.same(summaryRange({}, NOW), { from: '2026-01-31', to: '2026-03-01', createdGte: '2026-01-31T00:00:00.000Z', createdLt: '2026-03-02T00:00:00.000Z' })
  t.same(summaryRange({ from: '2026-02-28' }, NOW).to, '2026-03-01', 'to stays today')
  t.match(fieldErrorsOf({ from: '2026-2-1' }), { from: [/calendar date/] }, 'the core checks the form too')
  t.match(fieldErrorsOf({ from: '2026-02-29' }), { from: [/calendar date/] }, 'not a leap year')
  t.same(fieldErrorsOf({ to: 'x', from: '2026-01-01' }), { to: ['The to parameter must be a calendar date, YYYY-MM-DD.'] })
})

t.test('summarize: ignores figures outside the range, adds rows of one day, rate by count', async (t) => {
  const range = summaryRange({ from: '2026-01-01', to: '2026-01-02' }, NOW)
  const summary = summarize(range, {
    succeeded: [{ day: '2026-01-01', currency: 'USD', count: 1, amountMinor: 100 }, { day: '2026-01-01', currency: 'USD', count: 2, amountMinor: 50 }],
    declined: [{ day: '2026-01-02', currency: 'USD', count: 1, amountMinor: 10 }, { day: '2025-12-31', currency: 'USD', count: 9, amountMinor: 9 }],
    refunded: []
  })
  t.same(itemAt(summary.currencies, 0).days.map((d) => [d.date, d.succeeded.count, d.declined.count]), [['2026-01-01', 3, 0], ['2026-01-02', 0, 1]])
  t.same(itemAt(summary.currencies, 0).totals, { succeeded: { count: 3, amountMinor: 150 }, declined: { count: 1, amountMinor: 10 }, refunded: { count: 0, amountMinor: 0 }, successRate: 0.75 })
})
