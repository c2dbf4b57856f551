import { api, type AuditEntry, type AuditLog as AuditLogList } from '../api'
import { Field, LoadState, useLoad } from '../components'
import { dateTime } from '../format'
import { href, navigate, type Route } from '../router'
import { dayAfter, dayStart } from './payments'

/** Suggestions for the action filter; the API takes any action name. */
const ACTIONS = ['payment.create', 'payment.capture', 'payment.refund', 'payment.cancel', 'dispute.accept', 'user.invite', 'user.update', 'user.delete',
  'user.accept_invite', 'user.password_change', 'user.totp_start', 'user.totp_enable', 'session.create', 'session.delete', 'api_key.create',
  'api_key.revoke', 'webhook_endpoint.create', 'webhook_endpoint.update', 'webhook_endpoint.delete', 'webhook_endpoint.rotate_secret',
  'webhook_endpoint.retry_delivery', 'webhook_endpoint.test', 'webhook_endpoint.replay', 'connector.create', 'connector.update', 'connector.delete',
  'merchant.update']
const PAGE_SIZE = 20

const ACTOR_TYPES: Record<AuditEntry['actor']['type'], string> = { api_key: 'API key', user: 'user', operator: 'operator', system: 'system' }

/**
 * Who did what (GET /api/audit-log, or the operator's GET /merchants/{id}/audit-log), newest first, with its filters
 * and cursor as the URL's query. `here` is this page's own path, for its links; the operator cannot open payments.
 */
export function AuditLog ({ path, here, route, operator = false }: { path: string, here: string, route: Route, operator?: boolean }) {
  const q = route.query
  const filters = {
    action: q.get('action') ?? '',
    actor: q.get('actor') ?? '',
    resourceType: q.get('resourceType') ?? '',
    resourceId: q.get('resourceId') ?? '',
    from: q.get('from') ?? '',
    to: q.get('to') ?? ''
  }
  const after = q.get('after') ?? undefined
  const list = useLoad(() => api<AuditLogList>(path, {
    query: {
      limit: PAGE_SIZE,
      action: filters.action,
      actorId: filters.actor,
      resourceType: filters.resourceType,
      resourceId: filters.resourceId,
      createdGte: dayStart(filters.from),
      createdLt: dayAfter(filters.to),
      startingAfter: after
    }
  }), [path, q.toString()])
  const apply = (event: Event): void => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    navigate(here, Object.fromEntries(Object.keys(filters).map((name) => [name, String(form.get(name) ?? '').trim()])))
  }
  const rows = list.data?.data ?? []
  const last = rows[rows.length - 1]
  return (
    <>
      <h1 tabIndex={-1}>Audit log</h1>
      <form key={q.toString()} class='filters' onSubmit={apply} aria-label='Filter the audit log'>
        <Field label='Action'>
          <input type='text' name='action' list='audit-actions' defaultValue={filters.action} placeholder='payment.refund' />
        </Field>
        <datalist id='audit-actions'>{ACTIONS.map((action) => <option key={action} value={action} />)}</datalist>
        <Field label='Actor id'><input type='text' name='actor' defaultValue={filters.actor} size={38} /></Field>
        <Field label='Resource type'><input type='text' name='resourceType' defaultValue={filters.resourceType} placeholder='payment' /></Field>
        <Field label='Resource id'><input type='text' name='resourceId' defaultValue={filters.resourceId} size={38} /></Field>
        <Field label='From (UTC day)'><input type='date' name='from' defaultValue={filters.from} /></Field>
        <Field label='To (UTC day, inclusive)'><input type='date' name='to' defaultValue={filters.to} /></Field>
        <button type='submit' class='primary'>Apply</button>
      </form>
      <LoadState loading={list.loading} error={list.error} />
      {list.data !== undefined && rows.length === 0 && <p>No entries match.</p>}
      {rows.length > 0 && <AuditEntries entries={rows} here={here} linkPayments={!operator} testId='audit-log' />}
      <nav aria-label='Pages' class='pager'>
        {after !== undefined && <a href={href(here, { ...Object.fromEntries(q), after: undefined })}>← Newest</a>}
        {list.data?.hasMore === true && last !== undefined && <a href={href(here, { ...Object.fromEntries(q), after: last.id })}>Older →</a>}
      </nav>
    </>
  )
}

function Actor ({ actor, here }: { actor: AuditEntry['actor'], here: string | undefined }) {
  return (
    <>
      {here === undefined ? actor.label : <a href={href(here, { actor: actor.id })}>{actor.label}</a>}
      {' '}<span class='muted'>({ACTOR_TYPES[actor.type]})</span>
    </>
  )
}

function Resource ({ resource, linkPayments }: { resource: AuditEntry['resource'], linkPayments: boolean }) {
  if (resource.id === null) return <>{resource.type}</>
  const id = linkPayments && resource.type === 'payment' ? <a href={href(`/payments/${resource.id}`)}><code>{resource.id}</code></a> : <code>{resource.id}</code>
  return <>{resource.type} {id}</>
}

/**
 * Audit entries as a table. With `here`, an actor links to the entries of that actor on the page at `here`; without
 * `resource`, the column is left out (a payment's own Activity).
 */
export function AuditEntries ({ entries, here, testId, resource = true, linkPayments = false }: {
  entries: AuditEntry[]
  here?: string
  testId: string
  resource?: boolean
  linkPayments?: boolean
}) {
  return (
    <table class='list' data-testid={testId}>
      <caption class='visually-hidden'>Audit entries, newest first</caption>
      <thead>
        <tr>
          <th scope='col'>Time</th><th scope='col'>Actor</th><th scope='col'>Action</th>
          {resource && <th scope='col'>Resource</th>}
          <th scope='col'>Outcome</th><th scope='col'>IP address</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry) => (
          <tr key={entry.id} data-entry={entry.id}>
            <td>{dateTime(entry.at)}</td>
            <td data-testid='actor'><Actor actor={entry.actor} here={here} /></td>
            <td><code class='api-name'>{entry.action}</code></td>
            {resource && <td><Resource resource={entry.resource} linkPayments={linkPayments} /></td>}
            <td><span class={`badge outcome-${entry.outcome}`}>{entry.outcome}</span></td>
            <td>{entry.ip ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
