import { api, type ApiEvent, type EventList } from '../api'
import { Field, LoadState, useLoad } from '../components'
import { dateTime } from '../format'
import { href, navigate, type Route } from '../router'

/** The API's event types (GET /api/events `type`). */
const EVENT_TYPES = ['payment.authorized', 'payment.succeeded', 'payment.declined', 'payment.pending', 'payment.requires_action', 'payment.failed', 'payment.canceled', 'payment.capture_failed',
  'refund.succeeded', 'refund.failed', 'dispute.created', 'dispute.updated', 'dispute.closed', 'merchant.updated', 'webhook_endpoint.disabled', 'webhook_endpoint.test'] satisfies Array<ApiEvent['type']>
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const PAGE_SIZE = 20

/** GET /api/events by type and by payment (the URL's query), each event with its JSON. */
export function Events ({ route }: { route: Route }) {
  const q = route.query
  const type = q.get('type') ?? ''
  const payment = (q.get('payment') ?? '').trim()
  const paymentValid = payment === '' || UUID.test(payment)
  const after = q.get('after') ?? undefined
  const before = q.get('before') ?? undefined
  const list = useLoad(async () => !paymentValid
    ? undefined
    : await api<EventList>('/api/events', { query: { limit: PAGE_SIZE, type, paymentId: payment, startingAfter: after, endingBefore: before } }), [q.toString()])
  const apply = (event: Event): void => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    navigate('/events', { type: String(form.get('type') ?? ''), payment: String(form.get('payment') ?? '').trim() })
  }
  const rows = list.data?.data ?? []
  const first = rows[0]
  const last = rows[rows.length - 1]
  const olderExist = before !== undefined || list.data?.hasMore === true
  const newerExist = after !== undefined || (before !== undefined && list.data?.hasMore === true)
  return (
    <>
      <h1 tabIndex={-1}>Events</h1>
      <form key={q.toString()} class='filters' onSubmit={apply} aria-label='Filter events'>
        <Field label='Type'>
          <select name='type'>
            <option value='' selected={type === ''}>any</option>
            {EVENT_TYPES.map((name) => <option key={name} value={name} selected={name === type}>{name}</option>)}
          </select>
        </Field>
        <Field label='Payment id' hint='Its events and its refunds’.'><input type='text' name='payment' defaultValue={payment} size={38} /></Field>
        <button type='submit' class='primary'>Apply</button>
      </form>
      {!paymentValid && <p role='alert' class='notice notice-error'>“{payment}” is not a payment id (a GUID such as 019aa9f2-3c41-7e2b-9d5a-4f0c6b2e8a17).</p>}
      <LoadState loading={list.loading} error={list.error} />
      {list.data !== undefined && rows.length === 0 && <p>No events match (events are kept 30 days by default).</p>}
      {rows.length > 0 && (
        <ol class='events' data-testid='events'>
          {rows.map((event) => (
            <li key={event.id}>
              <details>
                <summary>
                  <time dateTime={event.createdAt}>{dateTime(event.createdAt)}</time> <strong>{event.type}</strong> {event.resource.type} <code>{event.resource.id}</code>
                </summary>
                {event.resource.type === 'payment' && <p><a href={href(`/payments/${event.resource.id}`)}>Open the payment</a></p>}
                <pre tabIndex={0} aria-label={`The JSON of event ${event.id}`}>{JSON.stringify(event, null, 2)}</pre>
              </details>
            </li>
          ))}
        </ol>
      )}
      <nav aria-label='Pages' class='pager'>
        {newerExist && first !== undefined && <a href={href('/events', { ...Object.fromEntries(q), after: undefined, before: first.id })}>← Newer</a>}
        {olderExist && last !== undefined && <a href={href('/events', { ...Object.fromEntries(q), before: undefined, after: last.id })}>Older →</a>}
      </nav>
    </>
  )
}
