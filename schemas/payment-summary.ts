import { Type, type Static } from '@sinclair/typebox'
import { MAX_SUMMARY_DAYS, type OutcomeFigures, type PaymentSummary as DomainSummary } from '../src/domain/payment-summary'
import { exponentOf } from '../src/domain/currencies'
import { fromMinorUnits } from '../src/domain/money'

const Figures = (description: string) => Type.Object({
  count: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, format: 'int64', description: 'How many.' }),
  amount: Type.Number({ minimum: 0, description: 'Their total in the currency\'s major units (like every amount of the API).' })
}, { description, additionalProperties: false })

const outcomes = {
  succeeded: Figures('Payments created that day that were charged (`succeeded`, `partially_refunded` or `refunded`); the amount is what was captured.'),
  declined: Figures('Payments created that day that the gateway declined; the amount is what was asked.'),
  refunded: Figures('Refunds that succeeded that day (by the day they succeeded, whatever day their payment was made).')
}

const date = (description: string, example: string) =>
  Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', minLength: 10, maxLength: 10, description, examples: [example] })

export const PaymentSummaryQuery = Type.Object({
  from: Type.Optional(date('First UTC day (YYYY-MM-DD), included. Default: 29 days before `to`.', '2026-11-01')),
  to: Type.Optional(date('Last UTC day (YYYY-MM-DD), included. Default: today (UTC).', '2026-11-25'))
}, { additionalProperties: false })

const day = { date: '2026-11-24', succeeded: { count: 3, amount: 30.5 }, declined: { count: 1, amount: 5 }, refunded: { count: 1, amount: 2.5 } }
const quietDay = { date: '2026-11-25', succeeded: { count: 0, amount: 0 }, declined: { count: 0, amount: 0 }, refunded: { count: 0, amount: 0 } }

export const PaymentSummary = Type.Object({
  from: date('First day of the range (included).', '2026-11-24'),
  to: date('Last day of the range (included).', '2026-11-25'),
  currencies: Type.Array(Type.Object({
    currency: Type.String({ pattern: '^[A-Z]{3}$', minLength: 3, maxLength: 3, description: 'ISO 4217 code; amounts in one currency are never added to another\'s.' }),
    days: Type.Array(Type.Object({ date: date('The UTC day.', '2026-11-24'), ...outcomes }, { additionalProperties: false }), {
      maxItems: MAX_SUMMARY_DAYS, description: 'Every day of the range, oldest first, zeros included.'
    }),
    totals: Type.Object({
      ...outcomes,
      successRate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
        description: 'succeeded / (succeeded + declined) by count over the range; null when both are 0.'
      })
    }, { additionalProperties: false, description: 'The range\'s sums.' })
  }, { additionalProperties: false }), {
    maxItems: 200, description: 'One entry per currency with any figure in the range, by code; empty when there is none.'
  })
}, {
  $id: 'PaymentSummary',
  title: 'Payment summary',
  additionalProperties: false,
  examples: [{
    from: '2026-11-24',
    to: '2026-11-25',
    currencies: [{
      currency: 'EUR',
      days: [day, quietDay],
      totals: { succeeded: day.succeeded, declined: day.declined, refunded: day.refunded, successRate: 0.75 }
    }]
  }]
})
export type PaymentSummaryType = Static<typeof PaymentSummary>

/** The summary as the API shows it: amounts in major units. */
export function toPublicSummary (summary: DomainSummary): PaymentSummaryType {
  return {
    from: summary.from,
    to: summary.to,
    currencies: summary.currencies.map(({ currency, days, totals }) => {
      const exponent = exponentOf(currency)
      const shown = ({ count, amountMinor }: OutcomeFigures) => ({ count, amount: fromMinorUnits(amountMinor, exponent) })
      return {
        currency,
        days: days.map((d) => ({ date: d.date, succeeded: shown(d.succeeded), declined: shown(d.declined), refunded: shown(d.refunded) })),
        totals: { succeeded: shown(totals.succeeded), declined: shown(totals.declined), refunded: shown(totals.refunded), successRate: totals.successRate }
      }
    })
  }
}
