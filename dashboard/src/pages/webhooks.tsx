import { useState } from 'preact/hooks'
import {
  api, messageOf, type ApiEvent, type CreateWebhookEndpointRequest, type Delivery, type DeliveryAttempt, type DeliveryList, type ReplayResult,
  type ReplayWebhookEventsRequest, type RotateWebhookSecretRequest, type UpdateWebhookEndpointRequest, type WebhookEndpoint,
  type WebhookEndpointCollection, type WebhookEndpointWithSecret
} from '../api'
import { ActionButton, Field, LoadState, Notice, OneTimeSecret, useLoad } from '../components'
import { dateTime } from '../format'
import { READ_ONLY, useCan } from '../access'

/** The API's event types (an endpoint's `enabledEvents`; `*` is all of them). */
const EVENT_TYPES = ['payment.authorized', 'payment.succeeded', 'payment.declined', 'payment.pending', 'payment.requires_action', 'payment.failed', 'payment.canceled', 'payment.capture_failed',
  'refund.succeeded', 'refund.failed', 'dispute.created', 'dispute.updated', 'dispute.closed', 'merchant.updated', 'webhook_endpoint.disabled'] satisfies WebhookEndpoint['enabledEvents']

/** A merchant's webhook endpoints (own key, or the operator for any merchant), each with its delivery log. */
export function Webhooks ({ merchantId, operator = false }: { merchantId: string, operator?: boolean }) {
  const mayConfigure = useCan('configure')
  const base = `/merchants/${encodeURIComponent(merchantId)}/webhook-endpoints`
  const endpoints = useLoad(() => api<WebhookEndpointCollection>(base), [base])
  const [created, setCreated] = useState<{ url: string, secret: string } | undefined>()
  const [error, setError] = useState<string | undefined>()
  const create = async (event: Event): Promise<void> => {
    event.preventDefault()
    const formElement = event.currentTarget as HTMLFormElement
    const form = new FormData(formElement)
    const ticked = form.getAll('events').map(String)
    const chosen = EVENT_TYPES.filter((type) => ticked.includes(type))
    setError(undefined)
    if (form.get('which') === 'some' && chosen.length === 0) { setError('Choose at least one event type, or all events.'); return }
    try {
      const endpoint = await api<WebhookEndpointWithSecret>(base, {
        method: 'POST',
        body: {
          url: String(form.get('url')),
          ...(String(form.get('description') ?? '') === '' ? {} : { description: String(form.get('description')) }),
          ...(form.get('which') === 'some' ? { enabledEvents: chosen } : {})
        } satisfies CreateWebhookEndpointRequest
      })
      setCreated({ url: endpoint.url, secret: endpoint.secret })
      formElement.reset()
      endpoints.reload()
    } catch (err) {
      setError(messageOf(err))
    }
  }
  return (
    <>
      <h1 tabIndex={-1}>Webhooks</h1>
      <p class='muted'>Merchant <code>{merchantId}</code></p>
      <LoadState loading={endpoints.loading && endpoints.data === undefined} error={endpoints.error} />
      {endpoints.data?.data.length === 0 && <p>No endpoints yet.</p>}
      {endpoints.data?.data.map((endpoint) => <Endpoint key={endpoint.id} base={base} endpoint={endpoint} operator={operator} onChange={() => { endpoints.reload() }} />)}
      {!mayConfigure && <Notice kind='info'>{READ_ONLY}</Notice>}
      {mayConfigure && (
        <section aria-labelledby='add-endpoint'>
          <h2 id='add-endpoint'>Add an endpoint</h2>
          <form class='stack' onSubmit={(event) => { create(event).catch(reportError) }}>
            <Field label='URL' hint='https and a public address; events are POSTed here, signed per Standard Webhooks. For local testing (http, 127.0.0.1) the operator sets WEBHOOK_ALLOW_PRIVATE_URLS=true.'><input type='url' name='url' required /></Field>
            <Field label='Description'><input type='text' name='description' maxLength={200} /></Field>
            <fieldset class='event-types'>
              <legend>Events to send</legend>
              <label><input type='radio' name='which' value='all' defaultChecked /> All events, present and future</label>
              <label><input type='radio' name='which' value='some' /> Only these:</label>
              <span class='choices'>
                {EVENT_TYPES.map((type) => <label key={type}><input type='checkbox' name='events' value={type} /> {type}</label>)}
              </span>
            </fieldset>
            <button type='submit' class='primary'>Add endpoint</button>
          </form>
          {error !== undefined && <Notice kind='error'>{error}</Notice>}
          {created !== undefined && <OneTimeSecret label={`Signing secret of ${created.url}`} secret={created.secret} />}
        </section>
      )}
    </>
  )
}

/** What a delivery sent: the event (GET /api/events/{id}), loaded when asked for. Events are the merchant's: the admin key cannot read them. */
function Payload ({ eventId, operator }: { eventId: string, operator: boolean }) {
  const [event, setEvent] = useState<{ text: string, ok: boolean } | undefined>()
  if (operator) return <p class='muted'>The payload is the event <code>{eventId}</code>; only the merchant's key can read events.</p>
  const load = async (): Promise<void> => {
    try {
      setEvent({ ok: true, text: JSON.stringify(await api<ApiEvent>(`/api/events/${encodeURIComponent(eventId)}`), null, 2) })
    } catch (error) {
      setEvent({ ok: false, text: messageOf(error) })
    }
  }
  return (
    <details onToggle={(toggle) => { if ((toggle.currentTarget as HTMLDetailsElement).open && event === undefined) load().catch(reportError) }}>
      <summary>Payload</summary>
      {event === undefined && <p class='muted'>Loading…</p>}
      {event?.ok === false && <Notice kind='error'>{event.text}</Notice>}
      {event?.ok === true && <pre tabIndex={0} aria-label={`The event ${eventId} as sent`}>{event.text}</pre>}
    </details>
  )
}

function Endpoint ({ base, endpoint, operator, onChange }: { base: string, endpoint: WebhookEndpoint, operator: boolean, onChange: () => void }) {
  const mayConfigure = useCan('configure')
  const path = `${base}/${endpoint.id}`
  const [secret, setSecret] = useState<string | undefined>()
  const [cursor, setCursor] = useState<string | undefined>()
  const deliveries = useLoad(() => api<DeliveryList>(`${path}/deliveries`, { query: { limit: 20, startingAfter: cursor } }), [path, cursor])
  const [replayFrom, setReplayFrom] = useState(new Date(Date.now() - 86_400_000).toISOString().slice(0, 16))
  const [replayTo, setReplayTo] = useState(new Date(Date.now() + 60_000).toISOString().slice(0, 16))
  const headingId = `endpoint-${endpoint.id}`
  return (
    <section class='card' aria-labelledby={headingId}>
      <h2 id={headingId}>{endpoint.description ?? endpoint.url}</h2>
      <dl class='facts'>
        <div><dt>URL</dt><dd><code>{endpoint.url}</code></dd></div>
        <div><dt>State</dt><dd>{endpoint.disabled ? `disabled (${endpoint.disabledReason ?? 'manual'})` : 'enabled'}</dd></div>
        <div><dt>Events</dt><dd>{endpoint.enabledEvents.join(', ')}</dd></div>
      </dl>
      {mayConfigure && (
        <>
          <div class='action-row'>
            <ActionButton
              label={endpoint.disabled ? 'Enable' : 'Disable'}
              describe={<p>{endpoint.disabled ? 'Deliveries start again for new events (replay the missed ones).' : 'Nothing is sent to this endpoint until it is enabled again.'}</p>}
              action={async () => {
                await api(path, { method: 'PATCH', body: { disabled: !endpoint.disabled } satisfies UpdateWebhookEndpointRequest })
                return endpoint.disabled ? 'Enabled.' : 'Disabled.'
              }} onDone={onChange}
            />
            <ActionButton
              label='Rotate secret' describe={<p>A new signing secret is made; the old one keeps signing for 24 hours.</p>}
              action={async () => {
                const rotated = await api<WebhookEndpointWithSecret>(`${path}/rotate-secret`, { method: 'POST', body: {} satisfies RotateWebhookSecretRequest })
                setSecret(rotated.secret)
                return 'Rotated.'
              }}
            />
          </div>
          {secret !== undefined && <OneTimeSecret label='New signing secret' secret={secret} />}
          <SendTest path={path} disabled={endpoint.disabled} onSent={() => { if (cursor === undefined) deliveries.reload(); else setCursor(undefined) }} />
          <div class='action-row'>
            <Field label='Replay from (UTC)'><input type='datetime-local' value={replayFrom} onInput={(event) => { setReplayFrom(event.currentTarget.value) }} /></Field>
            <Field label='Replay to (UTC)'><input type='datetime-local' value={replayTo} onInput={(event) => { setReplayTo(event.currentTarget.value) }} /></Field>
            <ActionButton
              label='Replay' describe={<p>Send this endpoint again every event from {replayFrom} to {replayTo} UTC.</p>}
              action={async () => {
                const result = await api<ReplayResult>(`${path}/replay`, {
                  method: 'POST',
                  body: { from: `${replayFrom}:00Z`, to: `${replayTo}:00Z` } satisfies ReplayWebhookEventsRequest
                })
                deliveries.reload()
                return `${result.replayed} deliveries scheduled${result.hasMore ? ' (more events remain: replay again from the last one)' : ''}.`
              }}
            />
          </div>
        </>
      )}
      <h3>Deliveries</h3>
      <LoadState loading={deliveries.loading && deliveries.data === undefined} error={deliveries.error} />
      {deliveries.data?.data.length === 0 && <p>No deliveries yet.</p>}
      {(deliveries.data?.data.length ?? 0) > 0 && (
        <table class='list' data-testid='deliveries'>
          <thead>
            <tr><th scope='col'>Event</th><th scope='col'>Status</th><th scope='col'>Attempts (receiver status · time)</th><th scope='col'>Next attempt</th><th scope='col'><span class='visually-hidden'>Actions</span></th></tr>
          </thead>
          <tbody>
            {deliveries.data?.data.map((delivery) => (
              <tr key={delivery.id}>
                <td>{delivery.eventType}<br /><code>{delivery.eventId}</code><Payload eventId={delivery.eventId} operator={operator} /></td>
                <td><span class={`badge delivery-${delivery.status}`}>{delivery.status}</span></td>
                <td>
                  <ol class='attempts'>
                    {delivery.attemptLog.map((attempt) => (
                      <li key={attempt.attempt}>
                        #{attempt.attempt} {dateTime(attempt.at)}: {attempt.statusCode === null ? 'no response' : `HTTP ${attempt.statusCode}`} · {attempt.durationMs} ms
                        {attempt.error === null ? '' : ` · ${attempt.error}`}
                        {attempt.responseBody !== undefined && attempt.responseBody !== null && attempt.responseBody !== '' && (
                          <> · answered <q>{attempt.responseBody}</q></>
                        )}
                      </li>
                    ))}
                  </ol>
                </td>
                <td>{dateTime(delivery.nextAttemptAt)}</td>
                <td>
                  {mayConfigure && (
                    <ActionButton
                      label='Retry' describe={<p>Send event {delivery.eventType} to {endpoint.url} again now.</p>}
                      action={async () => {
                        await api(`${path}/deliveries/${delivery.id}/retry`, { method: 'POST' })
                        return 'Retry scheduled: it runs within seconds; reload the log to see its attempt.'
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class='pager'>
        <button type='button' onClick={() => { deliveries.reload() }}>Reload log</button>
        {cursor !== undefined && <button type='button' onClick={() => { setCursor(undefined) }}>Newest</button>}
        {deliveries.data?.hasMore === true && (
          <button type='button' onClick={() => { setCursor(deliveries.data?.data[deliveries.data.data.length - 1]?.id) }}>Older deliveries</button>
        )}
      </div>
    </section>
  )
}

/** What one attempt came to, in words: the receiver's status, or why none came, and the start of its answer. */
function attemptOutcome (attempt: DeliveryAttempt): string {
  const answered = attempt.responseBody !== undefined && attempt.responseBody !== null && attempt.responseBody !== '' ? `, answering “${attempt.responseBody}”` : ''
  if (attempt.statusCode === null) return `no response (${attempt.error ?? 'unknown error'}) after ${attempt.durationMs} ms`
  return `HTTP ${attempt.statusCode} in ${attempt.durationMs} ms${answered}`
}

/**
 * Send test event: one signed webhook_endpoint.test delivery, sent now (POST …/test); the receiver's answer is shown
 * here and the delivery heads the log below. A disabled endpoint receives nothing, tests included.
 */
function SendTest ({ path, disabled, onSent }: { path: string, disabled: boolean, onSent: () => void }) {
  const [busy, setBusy] = useState(false)
  const [result, setResult] = useState<{ ok: boolean, text: string } | undefined>()
  if (disabled) return <p class='muted'>Enable the endpoint to send it a test event: a disabled endpoint receives nothing.</p>
  const send = async (): Promise<void> => {
    setBusy(true)
    setResult(undefined)
    try {
      const delivery = await api<Delivery>(`${path}/test`, { method: 'POST' })
      const attempt = delivery.attemptLog[delivery.attemptLog.length - 1]
      const outcome = attempt === undefined ? '' : `: ${attemptOutcome(attempt)}`
      setResult(delivery.status === 'succeeded'
        ? { ok: true, text: `Test event delivered${outcome}.` }
        : { ok: false, text: `Test event not delivered${outcome}. It is not retried; it is in the log below.` })
      onSent()
    } catch (err) {
      setResult({ ok: false, text: messageOf(err) })
    } finally {
      setBusy(false)
    }
  }
  return (
    <div class='action-row'>
      <button type='button' disabled={busy} onClick={() => { send().catch(reportError) }}>{busy ? 'Sending test event…' : 'Send test event'}</button>
      <small class='muted'>One <code>webhook_endpoint.test</code> event, signed like every delivery, sent now whatever the events chosen above.</small>
      {result !== undefined && <Notice kind={result.ok ? 'success' : 'error'}>{result.text}</Notice>}
    </div>
  )
}
