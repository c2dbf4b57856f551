import { api, type Payment, type PaymentList } from '../api'
import { ExportCsv, Field, LoadState, Notice, useLoad } from '../components'
import { dateTime, money, statusLabel } from '../format'
import { href, navigate, type Route } from '../router'

const STATUSES = ['pending', 'requires_action', 'requires_capture', 'succeeded', 'declined', 'failed', 'canceled', 'partially_refunded', 'refunded']
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** A currency sign or code around digits: `$35`, `35.00 EUR`, `1,250.50`, `.50` (the sign never a `.`, or `.50` would read 50). */
const AMOUNT = /^[^\d\s.,-]{0,3}\s?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)\s?(?:[A-Za-z]{3})?$/
const PAGE_SIZE = 20
// The list API's limits on its filters: a search beyond them is explained here instead of being answered 400.
const AMOUNT_MAX_LENGTH = 20
const CUSTOMER_EMAIL_MAX_LENGTH = 254
const METADATA_KEY_MAX_LENGTH = 40
const METADATA_VALUE_MAX_LENGTH = 500
const SEARCH_HELP = 'Type a payment id, a customer email (jane@example.com), an amount (35.00), the last 4 digits of a card (4242), ' +
  'or a metadata entry as key=value (order_id=1234).'

/** Day inputs are UTC days; the API takes instants: [from 00:00, the day after `to` 00:00). */
export function dayStart (day: string | null): string | undefined {
  return day === null || day === '' ? undefined : `${day}T00:00:00Z`
}
export function dayAfter (day: string | null): string | undefined {
  return day === null || day === '' ? undefined : new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString()
}

/** What the one search box understood, as the list API's filters (or, for an id, the payment to open). */
export type Search =
  | { kind: 'none' }
  | { kind: 'id', id: string }
  | { kind: 'email', customerEmail: string }
  | { kind: 'last4', last4: string }
  | { kind: 'amount', amount: string }
  | { kind: 'metadata', key: string, value: string }
  /** Text the search cannot send as typed; `why` says what to change, when the search can tell. */
  | { kind: 'unknown', text: string, why?: string }

/** An amount as the API writes decimals: no grouping commas, no leading zeros (`035` is 35, `.5` is 0.5). */
export function decimalOf (written: string): string {
  const [whole = '', fraction] = written.replace(/,/g, '').split('.')
  const units = whole.replace(/^0+/, '') === '' ? '0' : whole.replace(/^0+/, '')
  return fraction === undefined ? units : `${units}.${fraction}`
}

function amountSearch (text: string, written: string): Search {
  const amount = decimalOf(written)
  if (!(Number(amount) > 0)) return { kind: 'unknown', text, why: 'An amount to search for is greater than 0.' }
  if (amount.length > AMOUNT_MAX_LENGTH) return { kind: 'unknown', text, why: `An amount has at most ${AMOUNT_MAX_LENGTH} characters.` }
  return { kind: 'amount', amount }
}

function metadataSearch (text: string, key: string, value: string): Search {
  if (value === '') return { kind: 'unknown', text, why: 'A metadata search needs the value after “=”.' }
  if (key.length > METADATA_KEY_MAX_LENGTH) return { kind: 'unknown', text, why: `A metadata key has at most ${METADATA_KEY_MAX_LENGTH} characters.` }
  if (value.length > METADATA_VALUE_MAX_LENGTH) return { kind: 'unknown', text, why: `A metadata value has at most ${METADATA_VALUE_MAX_LENGTH} characters.` }
  return { kind: 'metadata', key, value }
}

/**
 * What people type: a payment id, an email, the last 4 digits of a card (4 digits, or •••• 4242), an amount
 * ($35, 35.00, .50, 1,250.50 EUR) or a metadata entry as key=value. `amount:4242` and `last4:1234` say which when in doubt.
 * Whatever it returns the list API accepts: text it would refuse is `unknown`, with the reason when there is one.
 */
export function parseSearch (input: string): Search {
  const text = input.trim()
  if (text === '') return { kind: 'none' }
  if (UUID.test(text)) return { kind: 'id', id: text.toLowerCase() }
  const prefixed = /^(amount|last4|email|id):\s*(.*)$/i.exec(text)
  if (prefixed !== null) {
    const [, which = '', rest = ''] = prefixed
    const inner = parseSearch(rest)
    const wanted = which.toLowerCase()
    if (wanted === 'amount' && inner.kind === 'last4') return amountSearch(text, inner.last4)
    if (inner.kind === 'unknown' && inner.why !== undefined) return { ...inner, text }
    if (wanted === 'last4' && /^\d{4}$/.test(rest.trim())) return { kind: 'last4', last4: rest.trim() }
    if (wanted === inner.kind) return inner
    return { kind: 'unknown', text }
  }
  if (/^[^\s=@]+@[^\s=@]+$/.test(text)) {
    return text.length > CUSTOMER_EMAIL_MAX_LENGTH
      ? { kind: 'unknown', text, why: `A customer email has at most ${CUSTOMER_EMAIL_MAX_LENGTH} characters.` }
      : { kind: 'email', customerEmail: text }
  }
  const card = /^(?:[•*·.x]+\s*)?(\d{4})$/i.exec(text)
  if (card !== null) return { kind: 'last4', last4: card[1] ?? '' }
  const amount = AMOUNT.exec(text)
  if (amount !== null) return amountSearch(text, amount[1] ?? '')
  const equals = text.indexOf('=')
  if (equals > 0) return metadataSearch(text, text.slice(0, equals).trim(), text.slice(equals + 1).trim())
  return { kind: 'unknown', text }
}

function searchFilters (search: Search): Record<string, string | undefined> {
  switch (search.kind) {
    case 'email': return { customerEmail: search.customerEmail }
    case 'last4': return { last4: search.last4 }
    case 'amount': return { amount: search.amount }
    case 'metadata': return { metadataKey: search.key, metadataValue: search.value }
    default: return {}
  }
}

function understood (search: Search): string | undefined {
  switch (search.kind) {
    case 'email': return `customer email ${search.customerEmail}`
    case 'last4': return `card ending in ${search.last4}`
    case 'amount': return `amount ${search.amount} (in each payment's currency)`
    case 'metadata': return `metadata ${search.key} = ${search.value}`
    default: return undefined
  }
}

export function cardText (payment: Payment): string {
  const card = payment.paymentMethodDetails?.card
  return card === undefined ? (payment.paymentMethodDetails?.type ?? '') : `${card.brand} •••• ${card.last4}`
}

/**
 * GET /api/payments with its filters and cursors, as the URL's query (so a page can be linked and reloaded):
 * `q` is the search box's text, `after`/`before` the API's startingAfter/endingBefore.
 */
export function Payments ({ route }: { route: Route }) {
  const q = route.query
  const filters = { status: q.get('status') ?? '', from: q.get('from') ?? '', to: q.get('to') ?? '', q: q.get('q') ?? '' }
  const search = parseSearch(filters.q)
  const after = q.get('after') ?? undefined
  const before = q.get('before') ?? undefined
  const query = {
    status: filters.status,
    createdGte: dayStart(filters.from),
    createdLt: dayAfter(filters.to),
    ...searchFilters(search)
  }
  const list = useLoad(async () => search.kind === 'unknown'
    ? undefined
    : await api<PaymentList>('/api/payments', { query: { limit: PAGE_SIZE, ...query, startingAfter: after, endingBefore: before } }), [q.toString()])

  const apply = (event: Event): void => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    const text = String(form.get('search') ?? '').trim()
    const parsed = parseSearch(text)
    if (parsed.kind === 'id') { navigate(`/payments/${parsed.id}`); return }
    navigate('/payments', {
      status: String(form.get('status') ?? ''),
      from: String(form.get('from') ?? ''),
      to: String(form.get('to') ?? ''),
      q: text
    })
  }

  const rows = list.data?.data ?? []
  const first = rows[0]
  const last = rows[rows.length - 1]
  // hasMore counts in the direction the page was asked for: after a cursor, older ones; before it, newer ones.
  const olderExist = before !== undefined || list.data?.hasMore === true
  const newerExist = after !== undefined || (before !== undefined && list.data?.hasMore === true)
  const meaning = understood(search)
  const amountInstead = search.kind === 'last4' ? amountSearch(filters.q, search.last4) : undefined
  return (
    <>
      <h1 tabIndex={-1}>Payments</h1>
      <form key={q.toString()} class='filters' onSubmit={apply} aria-label='Filter payments'>
        <Field label='Search' hint='A payment id, a customer email, an amount, a card’s last 4 digits, or metadata as key=value'>
          <input type='search' name='search' defaultValue={filters.q} placeholder='jane@example.com, 35.00, 4242, order_id=1234' />
        </Field>
        <Field label='Status'>
          {/* The chosen option from the URL: Preact sets no defaultValue on a select, an option's `selected` it does. */}
          <select name='status'>
            <option value='' selected={filters.status === ''}>any</option>
            {STATUSES.map((status) => <option key={status} value={status} selected={status === filters.status}>{statusLabel(status)}</option>)}
          </select>
        </Field>
        <Field label='Created from (UTC day)'><input type='date' name='from' defaultValue={filters.from} /></Field>
        <Field label='Created to (UTC day, inclusive)'><input type='date' name='to' defaultValue={filters.to} /></Field>
        <button type='submit' class='primary'>Apply</button>
      </form>
      {meaning !== undefined && (
        <p class='muted' data-testid='search-meaning'>
          Searching for the {meaning}.
          {amountInstead?.kind === 'amount' && (
            <> Meant an amount? <a href={href('/payments', { ...Object.fromEntries(q), after: undefined, before: undefined, q: `amount:${amountInstead.amount}` })}>Search the amount {amountInstead.amount}</a>.</>
          )}
        </p>
      )}
      {search.kind === 'unknown' && (
        <Notice kind='info'>
          {search.why === undefined ? `“${search.text}” is not something the search understands. ${SEARCH_HELP}` : `${search.why} ${SEARCH_HELP}`}
        </Notice>
      )}
      <LoadState loading={list.loading} error={list.error} />
      {list.data !== undefined && rows.length === 0 && <p>No payments match.</p>}
      {rows.length > 0 && (
        <table class='list'>
          <caption class='visually-hidden'>Payments, newest first</caption>
          <thead>
            <tr>
              <th scope='col'>Payment</th><th scope='col'>Amount</th><th scope='col'>Status</th><th scope='col'>Customer</th><th scope='col'>Card</th>
              <th scope='col'>Refunded</th><th scope='col'>Created</th><th scope='col'>Metadata</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((payment) => (
              <tr key={payment.id}>
                <td><a href={href(`/payments/${payment.id}`)}><code>{payment.id}</code></a></td>
                <td class='number'>{money(payment.amount, payment.currency)}</td>
                <td><span class={`badge status-${payment.status}`}>{statusLabel(payment.status)}</span></td>
                <td>{payment.customer?.email ?? ''}</td>
                <td>{cardText(payment)}</td>
                <td class='number'>{payment.amountRefunded > 0 ? money(payment.amountRefunded, payment.currency) : ''}</td>
                <td>{dateTime(payment.createdAt)}</td>
                <td>{Object.entries(payment.metadata ?? {}).map(([k, v]) => `${k}=${v}`).join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {search.kind !== 'unknown' && (
        <ExportCsv key={q.toString()} path='/api/payments/export' query={query} fallbackName='payments.csv' rows='payment' />
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
