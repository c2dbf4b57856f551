import { api, type RefundList } from '../api'
import { ExportCsv, Field, LoadState, useLoad } from '../components'
import { dateTime, money, statusLabel } from '../format'
import { href, navigate, type Route } from '../router'
import { dayAfter, dayStart } from './payments'

const STATUSES = ['pending', 'succeeded', 'failed']
const PAGE_SIZE = 20

/** GET /api/refunds (every refund of the merchant's payments) with its filters and cursors as the URL's query, and its CSV export. */
export function Refunds ({ route }: { route: Route }) {
  const q = route.query
  const filters = { status: q.get('status') ?? '', from: q.get('from') ?? '', to: q.get('to') ?? '' }
  const after = q.get('after') ?? undefined
  const before = q.get('before') ?? undefined
  const query = { status: filters.status, createdGte: dayStart(filters.from), createdLt: dayAfter(filters.to) }
  const list = useLoad(() => api<RefundList>('/api/refunds', { query: { limit: PAGE_SIZE, ...query, startingAfter: after, endingBefore: before } }), [q.toString()])
  const apply = (event: Event): void => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    navigate('/refunds', { status: String(form.get('status') ?? ''), from: String(form.get('from') ?? ''), to: String(form.get('to') ?? '') })
  }
  const rows = list.data?.data ?? []
  const first = rows[0]
  const last = rows[rows.length - 1]
  const olderExist = before !== undefined || list.data?.hasMore === true
  const newerExist = after !== undefined || (before !== undefined && list.data?.hasMore === true)
  return (
    <>
      <h1 tabIndex={-1}>Refunds</h1>
      <form key={q.toString()} class='filters' onSubmit={apply} aria-label='Filter refunds'>
        <Field label='Status'>
          <select name='status'>
            <option value='' selected={filters.status === ''}>any</option>
            {STATUSES.map((status) => <option key={status} value={status} selected={status === filters.status}>{statusLabel(status)}</option>)}
          </select>
        </Field>
        <Field label='Created from (UTC day)'><input type='date' name='from' defaultValue={filters.from} /></Field>
        <Field label='Created to (UTC day, inclusive)'><input type='date' name='to' defaultValue={filters.to} /></Field>
        <button type='submit' class='primary'>Apply</button>
      </form>
      <LoadState loading={list.loading} error={list.error} />
      {list.data !== undefined && rows.length === 0 && <p>No refunds match.</p>}
      {rows.length > 0 && (
        <table class='list' data-testid='refund-list'>
          <caption class='visually-hidden'>Refunds, newest first</caption>
          <thead>
            <tr><th scope='col'>Refund</th><th scope='col'>Payment</th><th scope='col'>Amount</th><th scope='col'>Status</th><th scope='col'>Reason</th><th scope='col'>Created</th></tr>
          </thead>
          <tbody>
            {rows.map((refund) => (
              <tr key={refund.id}>
                <td><code>{refund.id}</code></td>
                <td><a href={href(`/payments/${refund.paymentId}`)}><code>{refund.paymentId}</code></a></td>
                <td class='number'>{money(refund.amount, refund.currency)}</td>
                <td>{statusLabel(refund.status)}{refund.failureCode === undefined ? '' : ` (${refund.failureCode})`}</td>
                <td>{refund.reason ?? ''}</td>
                <td>{dateTime(refund.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ExportCsv key={q.toString()} path='/api/refunds/export' query={query} fallbackName='refunds.csv' rows='refund' />
      <nav aria-label='Pages' class='pager'>
        {newerExist && first !== undefined && <a href={href('/refunds', { ...Object.fromEntries(q), after: undefined, before: first.id })}>← Newer</a>}
        {olderExist && last !== undefined && <a href={href('/refunds', { ...Object.fromEntries(q), before: undefined, after: last.id })}>Older →</a>}
      </nav>
    </>
  )
}
