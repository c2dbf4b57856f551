import { api, type Dispute, type DisputeStatus, type DisputeList } from '../api'
import { Field, LoadState, useLoad } from '../components'
import { dateTime, money, statusLabel } from '../format'
import { href, navigate, type Route } from '../router'

const STATUSES: DisputeStatus[] = ['needs_response', 'under_review', 'won', 'lost', 'accepted']
const PAGE_SIZE = 20
const DAY_MS = 86_400_000
/** A dispute that still needs a response is marked once its evidence is due within this many days (or overdue). */
export const URGENT_DAYS = 7

/**
 * The warning for a dispute's evidence due date, or undefined when there is none to give: only a dispute that still
 * needs a response, due within URGENT_DAYS or already past. In words, not only in colour.
 */
export function evidenceWarning (dispute: Dispute, now: number): string | undefined {
  if (dispute.status !== 'needs_response' || dispute.evidenceDueBy === undefined) return undefined
  const left = Date.parse(dispute.evidenceDueBy) - now
  if (Number.isNaN(left) || left > URGENT_DAYS * DAY_MS) return undefined
  if (left <= 0) return 'Overdue: the time to respond has passed'
  if (left < DAY_MS) return 'Respond soon: due in less than a day'
  const days = Math.floor(left / DAY_MS)
  return `Respond soon: due in ${days} day${days === 1 ? '' : 's'}`
}

/** The evidence due date, with its warning (icon, bold text, border) when the response is urgent. */
export function EvidenceDue ({ dispute, now }: { dispute: Dispute, now: number }) {
  if (dispute.evidenceDueBy === undefined) return <span class='muted'>—</span>
  const warning = evidenceWarning(dispute, now)
  if (warning === undefined) return <time dateTime={dispute.evidenceDueBy}>{dateTime(dispute.evidenceDueBy)}</time>
  return (
    <span class='due-urgent' data-testid='due-urgent'>
      <strong><span aria-hidden='true'>⚠ </span>{warning}</strong>
      <br />
      <time dateTime={dispute.evidenceDueBy}>{dateTime(dispute.evidenceDueBy)}</time>
    </span>
  )
}

export function DisputeStatusBadge ({ status }: { status: DisputeStatus }) {
  return <span class={`badge dispute-${status}`}>{statusLabel(status)}</span>
}

export function fundsText (dispute: Dispute): string {
  return dispute.fundsWithdrawn ? `Yes: ${money(dispute.amount, dispute.currency)} held back` : 'No'
}

/** GET /api/disputes (the disputes the PSPs reported on the merchant's payments) with its status filter and cursors as the URL's query. */
export function Disputes ({ route }: { route: Route }) {
  const q = route.query
  const status = q.get('status') ?? ''
  const after = q.get('after') ?? undefined
  const before = q.get('before') ?? undefined
  const list = useLoad(() => api<DisputeList>('/api/disputes', { query: { limit: PAGE_SIZE, status, startingAfter: after, endingBefore: before } }), [q.toString()])
  const apply = (event: Event): void => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    navigate('/disputes', { status: String(form.get('status') ?? '') })
  }
  const rows = list.data?.data ?? []
  const first = rows[0]
  const last = rows[rows.length - 1]
  const olderExist = before !== undefined || list.data?.hasMore === true
  const newerExist = after !== undefined || (before !== undefined && list.data?.hasMore === true)
  const filtered = status !== '' || after !== undefined || before !== undefined
  const now = Date.now()
  return (
    <>
      <h1 tabIndex={-1}>Disputes</h1>
      <p>
        A cardholder disputed these payments at their bank and the PSP reported it. Respond (send your evidence) in the PSP’s
        dashboard before the evidence due date: a dispute left unanswered is lost. Due dates of disputes that still need a response
        are marked when they are {URGENT_DAYS} days away or less.
      </p>
      <form key={q.toString()} class='filters' onSubmit={apply} aria-label='Filter disputes'>
        <Field label='Status'>
          <select name='status'>
            <option value='' selected={status === ''}>any</option>
            {STATUSES.map((option) => <option key={option} value={option} selected={option === status}>{statusLabel(option)}</option>)}
          </select>
        </Field>
        <button type='submit' class='primary'>Apply</button>
      </form>
      <LoadState loading={list.loading} error={list.error} />
      {list.data !== undefined && rows.length === 0 && (
        <p data-testid='no-disputes'>
          {filtered ? 'No disputes match.' : 'No disputes. When a cardholder disputes one of your payments, the PSP reports it and it is listed here.'}
        </p>
      )}
      {rows.length > 0 && (
        <table class='list' data-testid='dispute-list'>
          <caption class='visually-hidden'>Disputes, newest first</caption>
          <thead>
            <tr>
              <th scope='col'>Created</th><th scope='col'>Payment</th><th scope='col'>Amount</th><th scope='col'>Reason</th>
              <th scope='col'>Status</th><th scope='col'>Funds withdrawn</th><th scope='col'>Evidence due by</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((dispute) => (
              <tr key={dispute.id} data-dispute={dispute.id}>
                <td>{dateTime(dispute.createdAt)}</td>
                <td><a href={href(`/payments/${dispute.paymentId}`)}><code>{dispute.paymentId}</code></a></td>
                <td class='number'>{money(dispute.amount, dispute.currency)}</td>
                <td>{dispute.reason ?? <span class='muted'>not given</span>}</td>
                <td><DisputeStatusBadge status={dispute.status} /></td>
                <td>{fundsText(dispute)}</td>
                <td><EvidenceDue dispute={dispute} now={now} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav aria-label='Pages' class='pager'>
        {newerExist && first !== undefined && <a href={href('/disputes', { ...Object.fromEntries(q), after: undefined, before: first.id })}>← Newer</a>}
        {olderExist && last !== undefined && <a href={href('/disputes', { ...Object.fromEntries(q), before: undefined, after: last.id })}>Older →</a>}
      </nav>
    </>
  )
}
