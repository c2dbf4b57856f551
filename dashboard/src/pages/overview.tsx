import { useMemo } from 'preact/hooks'
import { api, type PaymentSummary } from '../api'
import { DailyChart } from '../chart'
import { Field, LoadState, useLoad } from '../components'
import { money, utcDay } from '../format'
import { navigate, type Route } from '../router'

const OUTCOMES = [
  { key: 'succeeded', label: 'Succeeded', color: '#1a7f37' },
  { key: 'declined', label: 'Declined', color: '#b42318' },
  { key: 'refunded', label: 'Refunded', color: '#1d4ed8' }
] as const

type CurrencySummary = PaymentSummary['currencies'][number]

/** Payments in the range (every outcome): amounts in different currencies do not compare, counts do. */
function paymentsIn (c: CurrencySummary): number {
  return c.totals.succeeded.count + c.totals.declined.count
}

/** The currencies, the one with the most payments first (then the larger succeeded amount, then by code). */
function byVolume (currencies: CurrencySummary[]): CurrencySummary[] {
  return [...currencies].sort((a, b) => paymentsIn(b) - paymentsIn(a) || b.totals.succeeded.amount - a.totals.succeeded.amount ||
    a.currency.localeCompare(b.currency))
}

function rate (c: CurrencySummary): string {
  return c.totals.successRate === null ? 'no settled payments' : `${(c.totals.successRate * 100).toFixed(1)} %`
}

/**
 * Daily volume and counts by outcome from GET /api/payments/summary, and the success rate: every currency's totals,
 * and the chart of one (the URL's `currency`, else the one with the most payments; counts, or volume with `chart=volume`).
 */
export function Overview ({ route }: { route: Route }) {
  const from = route.query.get('from') ?? utcDay(29)
  const to = route.query.get('to') ?? utcDay(0)
  const currency = route.query.get('currency') ?? undefined
  // In the URL like the range and the currency: a reload or a shared link shows the same chart.
  const chart = route.query.get('chart') === 'volume' ? 'volume' : undefined
  const measure = chart === 'volume' ? 'amount' : 'count'
  const summary = useLoad(() => api<PaymentSummary>('/api/payments/summary', { query: { from, to } }), [from, to])
  const currencies = useMemo(() => byVolume(summary.data?.currencies ?? []), [summary.data])
  const shown = currencies.find((c) => c.currency === currency) ?? currencies[0]
  const days = useMemo(() => shown?.days.map((day) => day.date) ?? [], [shown])
  const series = useMemo(() => OUTCOMES.map((outcome) => ({
    label: outcome.label,
    color: outcome.color,
    values: shown?.days.map((day) => day[outcome.key][measure]) ?? []
  })), [shown, measure])

  const apply = (event: Event): void => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    navigate('/overview', { from: String(form.get('from')), to: String(form.get('to')), currency, chart })
  }
  return (
    <>
      <h1 tabIndex={-1}>Overview</h1>
      <form key={`${from}/${to}`} class='filters' onSubmit={apply} aria-label='Date range'>
        <Field label='From (UTC day)'><input type='date' name='from' defaultValue={from} required /></Field>
        <Field label='To (UTC day)'><input type='date' name='to' defaultValue={to} required /></Field>
        <button type='submit'>Show</button>
        <span class='presets'>
          {[7, 30, 90].map((n) => (
            <button key={n} type='button' onClick={() => { navigate('/overview', { from: utcDay(n - 1), to: utcDay(0), currency, chart }) }}>Last {n} days</button>
          ))}
        </span>
      </form>
      <LoadState loading={summary.loading} error={summary.error} />
      {summary.data !== undefined && shown === undefined && <p>No payments in this range.</p>}
      {shown !== undefined && (
        <section aria-labelledby='totals'>
          <h2 id='totals'>Totals {summary.data?.from} – {summary.data?.to}</h2>
          {currencies.length > 1 && (
            <table class='list' data-testid='currency-totals'>
              <caption>Every currency, the most payments first</caption>
              <thead>
                <tr><th scope='col'>Currency</th>{OUTCOMES.map((o) => <th key={o.key} scope='col'>{o.label}</th>)}<th scope='col'>Success rate</th></tr>
              </thead>
              <tbody>
                {currencies.map((c) => (
                  <tr key={c.currency}>
                    <th scope='row'>{c.currency}</th>
                    {OUTCOMES.map((o) => <td key={o.key} class='number'>{c.totals[o.key].count} · {money(c.totals[o.key].amount, c.currency)}</td>)}
                    <td class='number'>{rate(c)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {currencies.length > 1 && (
            <Field label='Currency shown below'>
              <select
                value={shown.currency}
                onChange={(event) => { navigate('/overview', { from, to, currency: event.currentTarget.value, chart }) }}
              >
                {currencies.map((c) => <option key={c.currency} value={c.currency}>{c.currency}</option>)}
              </select>
            </Field>
          )}
          <h3 data-testid='shown-currency'>In {shown.currency}</h3>
          <dl class='totals'>
            {OUTCOMES.map((outcome) => (
              <div key={outcome.key}>
                <dt>{outcome.label}</dt>
                <dd>{shown.totals[outcome.key].count} · {money(shown.totals[outcome.key].amount, shown.currency)}</dd>
              </div>
            ))}
            <div>
              <dt>Success rate</dt>
              <dd data-testid='success-rate'>{rate(shown)}</dd>
            </div>
          </dl>
          <h2>Per day ({shown.currency})</h2>
          <Field label='Chart shows'>
            <select value={measure} onChange={(event) => { navigate('/overview', { from, to, currency, chart: event.currentTarget.value === 'amount' ? 'volume' : undefined }) }}>
              <option value='count'>Number of payments</option>
              <option value='amount'>Volume ({shown.currency})</option>
            </select>
          </Field>
          <figure>
            <DailyChart days={days} series={series} label={measure === 'count' ? 'payments' : shown.currency} />
            <figcaption>
              <details>
                <summary>The chart's numbers as a table</summary>
                <table>
                  <caption>Per UTC day, {measure === 'count' ? 'number of payments' : `volume in ${shown.currency}`}</caption>
                  <thead><tr><th scope='col'>Day</th>{OUTCOMES.map((o) => <th key={o.key} scope='col'>{o.label}</th>)}</tr></thead>
                  <tbody>
                    {shown.days.map((day) => (
                      <tr key={day.date}><th scope='row'>{day.date}</th>{OUTCOMES.map((o) => <td key={o.key}>{day[o.key][measure]}</td>)}</tr>
                    ))}
                  </tbody>
                </table>
              </details>
            </figcaption>
          </figure>
        </section>
      )}
    </>
  )
}
