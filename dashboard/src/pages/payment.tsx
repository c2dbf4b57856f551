import { useState } from 'preact/hooks'
import { useCan } from '../access'
import { api, type ApiEvent, type CaptureRequest, type CreateRefundRequest, type Dispute, type DisputeList, type EventList, type Payment, type Refund, type RefundList } from '../api'
import { ActionButton, Field, LoadState, Notice, useLoad } from '../components'
import { dateTime, money, newKey, statusLabel } from '../format'
import { href } from '../router'
import { DisputeStatusBadge, EvidenceDue, fundsText } from './disputes'
import { PaymentActivity, usePaymentActivity } from './payment-activity'

const EVENT_PAGES = 10

/** The payment's timeline: its events and its refunds' (GET /api/events?paymentId), oldest first, up to 10 pages of 100. */
async function timelineOf (payment: Payment): Promise<{ events: ApiEvent[], truncated: boolean }> {
  const events: ApiEvent[] = []
  let startingAfter: string | undefined
  for (let page = 0; page < EVENT_PAGES; page++) {
    const batch = await api<EventList>('/api/events', { query: { limit: 100, paymentId: payment.id, startingAfter } })
    events.push(...batch.data)
    if (!batch.hasMore) return { events: events.reverse(), truncated: false }
    startingAfter = batch.data[batch.data.length - 1]?.id
  }
  return { events: events.reverse(), truncated: true }
}

function methodText (payment: Payment): string {
  const details = payment.paymentMethodDetails
  const card = details?.card
  if (card === undefined) return details?.type ?? ''
  const expiry = card.expMonth === undefined || card.expYear === undefined ? '' : ` · expires ${String(card.expMonth).padStart(2, '0')}/${card.expYear}`
  return `${card.brand} •••• ${card.last4}${expiry}${card.country === undefined ? '' : ` · ${card.country}`}`
}

export function PaymentPage ({ id }: { id: string }) {
  const payment = useLoad(() => api<Payment>(`/api/payments/${encodeURIComponent(id)}`), [id])
  const refunds = useLoad(() => api<RefundList>(`/api/payments/${encodeURIComponent(id)}/refunds`, { query: { limit: 100 } }), [id])
  const timeline = useLoad(async () => payment.data === undefined ? undefined : await timelineOf(payment.data), [payment.data])
  const disputes = useLoad(() => api<DisputeList>('/api/disputes', { query: { paymentId: id, limit: 100 } }), [id])
  const activity = usePaymentActivity(id)
  const reload = (): void => { payment.reload(); refunds.reload(); disputes.reload(); activity.reload() }
  const p = payment.data
  return (
    <>
      <p><a href={href('/payments')}>← Payments</a></p>
      <h1 tabIndex={-1}>Payment <code>{id}</code></h1>
      <LoadState loading={payment.loading && p === undefined} error={payment.error} />
      {p !== undefined && (
        <>
          <section aria-labelledby='summary'>
            <h2 id='summary'>Summary</h2>
            <dl class='facts'>
              <div>
                <dt>Status</dt>
                <dd>
                  <span class={`badge status-${p.status}`} data-testid='payment-status'>{statusLabel(p.status)}</span>
                  {statusLabel(p.status) !== p.status.replace(/_/g, ' ') && <> <code class='api-name'>{p.status}</code></>}
                </dd>
              </div>
              <div><dt>Amount</dt><dd>{money(p.amount, p.currency)}</dd></div>
              <div><dt>Captured</dt><dd>{money(p.amountCaptured, p.currency)}</dd></div>
              <div><dt>Refunded</dt><dd data-testid='amount-refunded'>{money(p.amountRefunded, p.currency)}</dd></div>
              {p.amountDisputed !== undefined && (
                <div><dt>Disputed (taken back by the PSP)</dt><dd data-testid='amount-disputed'>{money(p.amountDisputed, p.currency)}</dd></div>
              )}
              {p.amountCapturable > 0 && <div><dt>Capturable</dt><dd>{money(p.amountCapturable, p.currency)}</dd></div>}
              {p.declineCode !== undefined && <div><dt>Decline code</dt><dd>{p.declineCode}</dd></div>}
              {p.failureCode !== undefined && <div><dt>Failure code</dt><dd>{p.failureCode}</dd></div>}
              {p.cancellationReason !== undefined && <div><dt>Canceled because</dt><dd>{p.cancellationReason}</dd></div>}
              {p.customer !== undefined && (
                <div>
                  <dt>Customer</dt>
                  <dd data-testid='customer'>
                    {p.customer.email}{p.customer.name === undefined ? '' : ` · ${p.customer.name}`}{p.customer.reference === undefined ? '' : ` · ${p.customer.reference}`}
                  </dd>
                </div>
              )}
              {p.paymentMethodDetails !== undefined && <div><dt>Payment method</dt><dd data-testid='payment-method'>{methodText(p)}</dd></div>}
              {p.returnUrl !== undefined && <div><dt>Shopper returns to</dt><dd data-testid='return-url'><code>{p.returnUrl}</code></dd></div>}
              <div><dt>Connector</dt><dd>{p.connector.type}{p.connector.id === null ? ' (default gateway)' : ` · ${p.connector.id}`}</dd></div>
              {p.connectorReference !== undefined && <div><dt>Connector reference</dt><dd><code>{p.connectorReference}</code></dd></div>}
              <div><dt>Created</dt><dd>{dateTime(p.createdAt)}</dd></div>
              {Object.entries(p.metadata ?? {}).map(([key, value]) => <div key={key}><dt>metadata.{key}</dt><dd>{value}</dd></div>)}
            </dl>
          </section>
          {p.status === 'requires_action' && <AwaitingShopper payment={p} />}
          <Actions payment={p} disputed={disputes.data?.data.some((dispute) => dispute.status !== 'won') === true} onDone={reload} />
          <section aria-labelledby='attempts'>
            <h2 id='attempts'>Connector attempts</h2>
            {p.attempts.length === 0
              ? <p>No attempts recorded.</p>
              : (
                <table class='list'>
                  <thead><tr><th scope='col'>When</th><th scope='col'>Connector</th><th scope='col'>Outcome</th><th scope='col'>Code</th></tr></thead>
                  <tbody>
                    {p.attempts.map((attempt, index) => (
                      <tr key={index}><td>{dateTime(attempt.at)}</td><td>{attempt.connectorType}{attempt.connectorId === null ? '' : ` · ${attempt.connectorId}`}</td><td>{statusLabel(attempt.outcome)}</td><td>{attempt.code ?? ''}</td></tr>
                    ))}
                  </tbody>
                </table>
                )}
          </section>
        </>
      )}
      <section aria-labelledby='refunds'>
        <h2 id='refunds'>Refunds</h2>
        <LoadState loading={refunds.loading && refunds.data === undefined} error={refunds.error} />
        {refunds.data?.data.length === 0 && <p>No refunds.</p>}
        {(refunds.data?.data.length ?? 0) > 0 && (
          <table class='list' data-testid='refunds'>
            <thead><tr><th scope='col'>Refund</th><th scope='col'>Amount</th><th scope='col'>Status</th><th scope='col'>Reason</th><th scope='col'>Created</th></tr></thead>
            <tbody>
              {refunds.data?.data.map((refund) => (
                <tr key={refund.id}>
                  <td><code>{refund.id}</code></td>
                  <td class='number'>{money(refund.amount, refund.currency)}</td>
                  <td>{statusLabel(refund.status)}{refund.failureCode === undefined ? '' : ` (${refund.failureCode})`}</td>
                  <td>{refund.reason ?? ''}</td>
                  <td>{dateTime(refund.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <PaymentDisputes disputes={disputes} onDone={reload} />
      <PaymentActivity id={id} activity={activity} />
      <section aria-labelledby='timeline'>
        <h2 id='timeline'>Timeline</h2>
        <LoadState loading={timeline.loading && timeline.data === undefined} error={timeline.error} />
        {timeline.data !== undefined && (
          <ol class='timeline' data-testid='timeline'>
            {timeline.data.events.map((event) => (
              <li key={event.id}><time dateTime={event.createdAt}>{dateTime(event.createdAt)}</time> <strong>{event.type}</strong> <code>{event.resource.id}</code></li>
            ))}
          </ol>
        )}
        {timeline.data?.events.length === 0 && <p>No events for this payment (events are kept 30 days by default).</p>}
        {timeline.data?.truncated === true && <p>Only the newest 1,000 events of the payment are shown: <a href={href('/events', { payment: id })}>all its events</a>.</p>}
      </section>
    </>
  )
}

/** The payment's disputes (GET /api/disputes?paymentId), each open one with its Accept action. */
function PaymentDisputes ({ disputes, onDone }: { disputes: { data: DisputeList | undefined, error: string | undefined, loading: boolean }, onDone: () => void }) {
  // Shown here, not by the button: the button goes away once the dispute is accepted.
  const [done, setDone] = useState<string | undefined>()
  const mayAccept = useCan('moveMoney')
  const rows = disputes.data?.data ?? []
  const now = Date.now()
  return (
    <section aria-labelledby='disputes'>
      <h2 id='disputes'>Disputes</h2>
      <LoadState loading={disputes.loading && disputes.data === undefined} error={disputes.error} />
      {done !== undefined && <Notice kind='success'>{done}</Notice>}
      {disputes.data !== undefined && rows.length === 0 && <p>No disputes.</p>}
      {rows.length > 0 && (
        <table class='list' data-testid='payment-disputes'>
          <caption class='visually-hidden'>Disputes of this payment, newest first</caption>
          <thead>
            <tr>
              <th scope='col'>Created</th><th scope='col'>Amount</th><th scope='col'>Reason</th><th scope='col'>Status</th>
              <th scope='col'>Funds withdrawn</th><th scope='col'>Evidence due by</th><th scope='col'>Action</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((dispute) => (
              <tr key={dispute.id} data-dispute={dispute.id}>
                <td>{dateTime(dispute.createdAt)}</td>
                <td class='number'>{money(dispute.amount, dispute.currency)}</td>
                <td>{dispute.reason ?? <span class='muted'>not given</span>}</td>
                <td><DisputeStatusBadge status={dispute.status} /></td>
                <td>{fundsText(dispute)}</td>
                <td><EvidenceDue dispute={dispute} now={now} /></td>
                <td>
                  {dispute.status !== 'needs_response' && dispute.status !== 'under_review'
                    ? <span class='muted'>closed</span>
                    : mayAccept
                      ? <AcceptDispute dispute={dispute} onDone={(message) => { setDone(message); onDone() }} />
                      : <span class='muted'>open (your role cannot accept it)</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {disputes.data?.hasMore === true && <p>Only the newest 100 disputes of this payment are shown.</p>}
    </section>
  )
}

/** Concedes an open dispute at its PSP (POST /api/disputes/{id}/accept), after a confirmation that says what that means. */
function AcceptDispute ({ dispute, onDone }: { dispute: Dispute, onDone: (message: string) => void }) {
  // One Idempotency-Key per intended acceptance: a retry after a 503 resumes it instead of acting twice.
  const [key, setKey] = useState(newKey)
  const amount = money(dispute.amount, dispute.currency)
  return (
    <ActionButton
      label='Accept dispute' danger
      describe={
        <>
          <p>
            Concede this dispute at the PSP ({dispute.connector.type}): the cardholder keeps the disputed {amount}, and the money is not
            returned to you{dispute.fundsWithdrawn ? ' (the PSP has already taken it back)' : ''}.
          </p>
          <p>You can no longer send evidence for it, and the dispute stays accepted whatever the PSP reports later. This cannot be undone.</p>
        </>
      }
      action={async () => {
        const accepted = await api<Dispute>(`/api/disputes/${encodeURIComponent(dispute.id)}/accept`, { method: 'POST', idempotencyKey: key })
        setKey(newKey())
        return `Dispute ${accepted.id} accepted: it is conceded at the PSP and ${money(accepted.amount, accepted.currency)} is not returned.`
      }} onDone={onDone} showSuccess={false}
    />
  )
}

/**
 * A customer-present payment the PSP holds until the shopper authenticates (3-D Secure, a bank's page): where the
 * merchant's checkout sent them, shown as text (opening it would answer for the shopper), and what happens next.
 */
function AwaitingShopper ({ payment }: { payment: Payment }) {
  const action = payment.nextAction
  return (
    <section aria-labelledby='awaiting-shopper'>
      <h2 id='awaiting-shopper'>Waiting for the shopper</h2>
      <p class='notice' data-testid='awaiting-shopper'>
        The shopper has to authenticate this payment with their bank (3-D Secure or a redirect to the bank’s page) before it can
        succeed. Nothing is charged until then. The outcome is recorded when the shopper comes back, when the PSP’s notification
        arrives, or by the recovery worker, which cancels the payment if the shopper never finishes (after an hour by default).
      </p>
      {action !== undefined && (
        <dl class='facts'>
          <div>
            <dt>Authentication page</dt>
            <dd data-testid='next-action'><code>{action.method} {action.url}</code></dd>
          </div>
          {action.data !== undefined && Object.keys(action.data).length > 0 && (
            <div><dt>Form fields</dt><dd>{Object.keys(action.data).join(', ')}</dd></div>
          )}
        </dl>
      )}
    </section>
  )
}

/** `disputed`: a dispute of the payment is not won, so the API refuses a refund (409 payment-disputed): none is offered. */
function Actions ({ payment, disputed, onDone }: { payment: Payment, disputed: boolean, onDone: () => void }) {
  const mayMoveMoney = useCan('moveMoney')
  // What the PSP took back for disputes is not there to refund (refunded + disputed never exceed what was captured).
  const refundable = Math.max(0, Math.round((payment.amountCaptured - payment.amountRefunded - (payment.amountDisputed ?? 0)) * 1e6) / 1e6)
  const canCapture = payment.status === 'requires_capture'
  const settled = payment.status === 'succeeded' || payment.status === 'partially_refunded'
  const canRefund = settled && refundable > 0 && !disputed
  const refundNotice = settled && disputed && (
    <p data-testid='refund-disputed'>
      No refund while a dispute of this payment is not won: the PSP has taken the money back (or may still), and refuses a refund.
      See Disputes below.
    </p>
  )
  const canCancel = payment.status === 'requires_capture' || payment.status === 'pending' || payment.status === 'requires_action'
  // One Idempotency-Key per intended action: a retry after a 503 resumes it instead of acting twice.
  const [captureAmount, setCaptureAmount] = useState(String(payment.amountCapturable))
  const [captureKey, setCaptureKey] = useState(newKey)
  const [refundAmount, setRefundAmount] = useState('')
  const [refundReason, setRefundReason] = useState('')
  const [refundKey, setRefundKey] = useState(newKey)
  // Shown here, not by the button: the button goes away when the new state allows no more of its action.
  const [done, setDone] = useState<string | undefined>()
  const finished = (message: string): void => { setDone(message); onDone() }
  const doneNotice = done !== undefined && <Notice kind='success'>{done}</Notice>
  if (!canCapture && !canRefund && !canCancel) {
    return (
      <section aria-labelledby='actions'>
        <h2 id='actions'>Actions</h2>
        {doneNotice}
        {refundNotice !== false ? refundNotice : <p>No action is possible in the state {statusLabel(payment.status)}.</p>}
      </section>
    )
  }
  if (!mayMoveMoney) {
    return (
      <section aria-labelledby='actions'>
        <h2 id='actions'>Actions</h2>
        <p data-testid='actions-not-allowed'>Your role cannot capture, refund or cancel payments: an owner or a support user can.</p>
      </section>
    )
  }
  /** The amount typed, or none (all of it) when the field is empty. */
  const amountOf = (text: string): { amount?: number } => text.trim() === '' ? {} : { amount: Number(text) }
  return (
    <section aria-labelledby='actions'>
      <h2 id='actions'>Actions</h2>
      {doneNotice}
      {canCapture && (
        <div class='action-row'>
          <Field label={`Capture amount (${payment.currency})`}>
            <input
              type='number' inputMode='decimal' step='any' min='0' value={captureAmount}
              onInput={(event) => { setCaptureAmount(event.currentTarget.value); setCaptureKey(newKey()) }}
            />
          </Field>
          <ActionButton
            label='Capture' describe={<p>Capture {money(Number(captureAmount), payment.currency)}; the rest of the authorization is released.</p>}
            action={async () => {
              const captured = await api<Payment>(`/api/payments/${payment.id}/capture`, { method: 'POST', body: amountOf(captureAmount) satisfies CaptureRequest, idempotencyKey: captureKey })
              setCaptureKey(newKey())
              return `Captured: the payment is now ${statusLabel(captured.status)} (${money(captured.amountCaptured, captured.currency)} captured).`
            }} onDone={finished} showSuccess={false}
          />
        </div>
      )}
      {canRefund && (
        <div class='action-row'>
          <Field label={`Refund amount (${payment.currency})`} hint={`Up to ${money(refundable, payment.currency)}; empty refunds all of it.`}>
            <input
              type='number' name='refundAmount' inputMode='decimal' step='any' min='0' value={refundAmount}
              onInput={(event) => { setRefundAmount(event.currentTarget.value); setRefundKey(newKey()) }}
            />
          </Field>
          <Field label='Reason'>
            <input
              type='text' name='refundReason' maxLength={500} value={refundReason}
              onInput={(event) => { setRefundReason(event.currentTarget.value); setRefundKey(newKey()) }}
            />
          </Field>
          <ActionButton
            label='Refund' danger
            describe={<p>Give back {refundAmount === '' ? `all ${money(refundable, payment.currency)}` : money(Number(refundAmount), payment.currency)} to the customer{refundReason === '' ? '' : ` (reason: ${refundReason})`}.</p>}
            action={async () => {
              const refund = await api<Refund>(`/api/payments/${payment.id}/refunds`, {
                method: 'POST',
                body: { ...amountOf(refundAmount), ...(refundReason === '' ? {} : { reason: refundReason }) } satisfies CreateRefundRequest,
                idempotencyKey: refundKey
              })
              setRefundKey(newKey())
              setRefundAmount('')
              return `Refund ${refund.id}: ${statusLabel(refund.status)}, ${money(refund.amount, refund.currency)}.`
            }} onDone={finished} showSuccess={false}
          />
        </div>
      )}
      {canCancel && (
        <div class='action-row'>
          <ActionButton
            label='Cancel payment' danger
            describe={payment.status === 'requires_action'
              ? <p>Cancel it at the PSP while it waits for the shopper: they can no longer complete it, and nothing is charged.</p>
              : <p>Void the authorization (or, if the charge went through after all, refund it in full).</p>}
            action={async () => {
              const canceled = await api<Payment>(`/api/payments/${payment.id}/cancel`, { method: 'POST' })
              return `The payment is now ${statusLabel(canceled.status)}.`
            }} onDone={finished} showSuccess={false}
          />
        </div>
      )}
    </section>
  )
}
