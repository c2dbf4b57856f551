import { api, type Page, type Payment, type Principal } from '../api'
import { Field, LoadState, Notice, useLoad } from '../components'
import { dateTime, money, statusLabel } from '../format'
import { href, navigate, type Route } from '../router'

const STATUSES = ['pending', 'requires_capture', 'succeeded', 'declined', 'failed', 'canceled', 'partially_refunded', 'refunded']
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const PAGE_SIZE = 20

/** Day inputs are UTC days; the API takes instants: [from 00:00, the day after `to` 00:00). */
function dayStart (day: string | null): string | undefined {
  return day === null || day === '' ? undefined : `${day}T00:00:00Z`
}
function dayAfter (day: string | null): string | undefined {
  return day === null || day === '' ? undefined : new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString()
}

/**
 * GET /api/payments with its filters and cursors, as the URL's query (so a page can be linked and reloaded).
 * `after`/`before` are the API's startingAfter/endingBefore; `key`/`value` its metadataKey/metadataValue.
 */
export function Payments ({ route, principal }: { route: Route, principal: Principal }) {
  const q = route.query
  const filters = { status: q.get('status') ?? '', from: q.get('from') ?? '', to: q.get('to') ?? '', key: q.get('key') ?? '', value: q.get('value') ?? '' }
  const after = q.get('after') ?? undefined
  const before = q.get('before') ?? undefined
  const list = useLoad(() => api<Page<Payment>>('/api/payments', {
    query: {
      limit: PAGE_SIZE,
      status: filters.status,
      createdGte: dayStart(filters.from),
      createdLt: dayAfter(filters.to),
      metadataKey: filters.key,
      metadataValue: filters.key === '' ? undefined : filters.value,
      startingAfter: after,
      endingBefore: before
    }
  }), [q.toString()])

  const search = (event: Event): void => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    const text = String(form.get('search') ?? '').trim()
    if (UUID.test(text)) { navigate(`/payments/${text.toLowerCase()}`); return }
    const [key = '', ...rest] = text.split('=')
    navigate('/payments', {
      status: String(form.get('status') ?? ''),
      from: String(form.get('from') ?? ''),
      to: String(form.get('to') ?? ''),
      key: text === '' ? undefined : key.trim(),
      value: text === '' ? undefined : rest.join('=').trim()
    })
  }

  const rows = list.data?.data ?? []
  const first = rows[0]
  const last = rows[rows.length - 1]
  // hasMore counts in the direction the page was asked for: after a cursor, older ones; before it, newer ones.
  const olderExist = before !== undefined || list.data?.hasMore === true
  const newerExist = after !== undefined || (before !== undefined && list.data?.hasMore === true)
  const searchText = filters.key === '' ? '' : `${filters.key}=${filters.value}`

  return (
    <>
      <h1 tabIndex={-1}>Payments</h1>
      {principal.kind === 'admin' && (
        <Notice kind='info'>
          You are signed in with the admin key. The API lets only a merchant's own key read its payments, and the dashboard
          follows the API's rules unchanged: sign in with a merchant key to see payments (the API's answer is below).
        </Notice>
      )}
      <form key={q.toString()} class='filters' onSubmit={search} aria-label='Filter payments'>
        <Field label='Status'>
          <select name='status' defaultValue={filters.status}>
            <option value=''>any</option>
            {STATUSES.map((status) => <option key={status} value={status}>{statusLabel(status)}</option>)}
          </select>
        </Field>
        <Field label='Created from (UTC day)'><input type='date' name='from' defaultValue={filters.from} /></Field>
        <Field label='Created to (UTC day, inclusive)'><input type='date' name='to' defaultValue={filters.to} /></Field>
        <Field label='Search' hint='A payment id, or a metadata entry as key=value'>
          <input type='search' name='search' defaultValue={searchText} placeholder='order_id=1234' />
        </Field>
        <button type='submit' class='primary'>Apply</button>
      </form>
      <LoadState loading={list.loading} error={list.error} />
      {list.data !== undefined && rows.length === 0 && <p>No payments match.</p>}
      {rows.length > 0 && (
        <table class='list'>
          <caption class='visually-hidden'>Payments, newest first</caption>
          <thead>
            <tr><th scope='col'>Payment</th><th scope='col'>Amount</th><th scope='col'>Status</th><th scope='col'>Refunded</th><th scope='col'>Created</th><th scope='col'>Metadata</th></tr>
          </thead>
          <tbody>
            {rows.map((payment) => (
              <tr key={payment.id}>
                <td><a href={href(`/payments/${payment.id}`)}><code>{payment.id}</code></a></td>
                <td class='number'>{money(payment.amount, payment.currency)}</td>
                <td><span class={`badge status-${payment.status}`}>{statusLabel(payment.status)}</span></td>
                <td class='number'>{payment.amountRefunded > 0 ? money(payment.amountRefunded, payment.currency) : ''}</td>
                <td>{dateTime(payment.createdAt)}</td>
                <td>{Object.entries(payment.metadata ?? {}).map(([k, v]) => `${k}=${v}`).join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav aria-label='Pages' class='pager'>
        {newerExist && first !== undefined && (
          <a href={href('/payments', { ...Object.fromEntries(q), after: undefined, before: first.id })}>← Newer</a>
        )}
        {olderExist && last !== undefined && (
          <a href={href('/payments', { ...Object.fromEntries(q), before: undefined, after: last.id })}>Older →</a>
        )}
      </nav>
    </>
  )
}
