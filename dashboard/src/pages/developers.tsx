import { useState } from 'preact/hooks'
import {
  api, messageOf, type ApiKeyCollection, type Connector, type ConnectorCollection, type ConnectorStats, type ConnectorStatsEntry,
  type CreateApiKeyRequest, type CreateConnectorRequest, type CreatedApiKey, type UpdateConnectorRequest
} from '../api'
import { ActionButton, Field, LoadState, Notice, OneTimeSecret, useLoad } from '../components'
import { dateTime, utcDay } from '../format'
import { navigate, type Route } from '../router'
import { READ_ONLY, useCan } from '../access'

/** A merchant's API keys and connector accounts. */
export function Developers ({ merchantId, route }: { merchantId: string, route: Route }) {
  const merchant = `/merchants/${encodeURIComponent(merchantId)}`
  return (
    <>
      <h1 tabIndex={-1}>Developers</h1>
      <p class='muted'>Merchant <code>{merchantId}</code></p>
      <ApiKeys base={`${merchant}/api-keys`} />
      <Connectors base={`${merchant}/connectors`} />
      <ConnectorStatistics base={`${merchant}/connectors`} route={route} />
    </>
  )
}

const DAY_MS = 86_400_000

function percent (rate: number | null): string {
  return rate === null ? '—' : `${(rate * 100).toFixed(1)} %`
}

function ms (value: number | null): string {
  return value === null ? '—' : `${value} ms`
}

function statsName (entry: ConnectorStatsEntry): string {
  if (entry.id === null) return `${entry.type} (default gateway)`
  const name = entry.description ?? `${entry.type} ${entry.id.slice(0, 8)}`
  return entry.deleted ? `${name} (deleted)` : name
}

/**
 * Per connector account: its charge calls over the range of the URL's `from`/`to` (UTC days, both included, like the
 * Overview's; default the last 30 days), by outcome, with the success rate and p50/p95 latency (GET …/connectors/stats).
 */
function ConnectorStatistics ({ base, route }: { base: string, route: Route }) {
  const from = route.query.get('from') ?? utcDay(29)
  const to = route.query.get('to') ?? utcDay(0)
  const here = `/${route.path.join('/')}`
  const createdGte = `${from}T00:00:00.000Z`
  const end = Date.parse(`${to}T00:00:00.000Z`)
  const createdLt = Number.isNaN(end) ? to : new Date(end + DAY_MS).toISOString()
  const stats = useLoad(() => api<ConnectorStats>(`${base}/stats`, { query: { createdGte, createdLt } }), [base, createdGte, createdLt])
  const apply = (event: Event): void => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    navigate(here, { from: String(form.get('from')), to: String(form.get('to')) })
  }
  return (
    <section aria-labelledby='connector-stats'>
      <h2 id='connector-stats'>Connector success rate and latency</h2>
      <form key={`${from}/${to}`} class='filters' onSubmit={apply} aria-label='Connector statistics date range'>
        <Field label='From (UTC day)'><input type='date' name='from' defaultValue={from} required /></Field>
        <Field label='To (UTC day)'><input type='date' name='to' defaultValue={to} required /></Field>
        <button type='submit'>Show</button>
        <span class='presets'>
          {[7, 30, 90].map((n) => (
            <button key={n} type='button' onClick={() => { navigate(here, { from: utcDay(n - 1), to: utcDay(0) }) }}>Last {n} days</button>
          ))}
        </span>
      </form>
      <LoadState loading={stats.loading} error={stats.error} />
      {stats.data !== undefined && stats.data.data.length === 0 && <p>No connector accounts and no charge calls in this range.</p>}
      {stats.data !== undefined && stats.data.data.length > 0 && (
        <table class='list' data-testid='connector-stats'>
          <caption>Charge calls from {from} to {to} (UTC days, both included)</caption>
          <thead>
            <tr>
              <th scope='col'>Connector</th><th scope='col'>Calls</th><th scope='col'>Succeeded</th><th scope='col'>Authorized</th>
              <th scope='col'>Waiting for shopper</th><th scope='col'>Declined</th><th scope='col'>Not processed</th><th scope='col'>Unknown</th>
              <th scope='col'>Success rate</th><th scope='col'>Latency p50</th><th scope='col'>Latency p95</th>
            </tr>
          </thead>
          <tbody>
            {stats.data.data.map((entry) => (
              <tr key={entry.id ?? entry.type} data-connector-id={entry.id ?? ''}>
                <th scope='row'>{statsName(entry)}</th>
                <td>{entry.attempts}</td><td>{entry.succeeded}</td><td>{entry.authorized}</td><td>{entry.requiresAction}</td>
                <td>{entry.declined}</td><td>{entry.notProcessed}</td><td>{entry.unknown}</td>
                <td data-testid='success-rate'>{percent(entry.successRate)}</td>
                <td data-testid='latency-p50'>{ms(entry.latency.p50Ms)}</td><td data-testid='latency-p95'>{ms(entry.latency.p95Ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class='muted'>
        Each charge call counts once, as the PSP answered it (a failover or a retry is a call of its own). Success rate:
        succeeded and authorized calls over every finished call (declined, not processed and unknown ones included; calls
        waiting for the shopper are left out). Latency: how long the PSP took to answer, over the answered calls only.
      </p>
    </section>
  )
}

/** The API lists keys only to those who may manage them (owner, developer, an API key, the operator). */
function ApiKeys ({ base }: { base: string }) {
  if (useCan('configure')) return <ApiKeyList base={base} />
  return (
    <section aria-labelledby='api-keys'>
      <h2 id='api-keys'>API keys</h2>
      <Notice kind='info'>API keys are listed and managed by the owner and developer roles only.</Notice>
    </section>
  )
}

function ApiKeyList ({ base }: { base: string }) {
  const mayCreate = useCan('createKeys')
  const keys = useLoad(() => api<ApiKeyCollection>(base), [base])
  const [created, setCreated] = useState<{ name: string, secret: string } | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [revoked, setRevoked] = useState<string | undefined>()
  const create = async (event: Event): Promise<void> => {
    event.preventDefault()
    const formElement = event.currentTarget as HTMLFormElement
    const name = String(new FormData(formElement).get('name') ?? '').trim()
    setError(undefined)
    try {
      const key = await api<CreatedApiKey>(base, { method: 'POST', body: (name === '' ? {} : { name }) satisfies CreateApiKeyRequest })
      setCreated({ name: key.name, secret: key.secret })
      formElement.reset()
      keys.reload()
    } catch (err) {
      setError(messageOf(err))
    }
  }
  return (
    <section aria-labelledby='api-keys'>
      <h2 id='api-keys'>API keys</h2>
      <LoadState loading={keys.loading && keys.data === undefined} error={keys.error} />
      {(keys.data?.data.length ?? 0) > 0 && (
        <table class='list' data-testid='api-keys'>
          <thead><tr><th scope='col'>Name</th><th scope='col'>Key</th><th scope='col'>Created</th><th scope='col'>Expires</th><th scope='col'><span class='visually-hidden'>Actions</span></th></tr></thead>
          <tbody>
            {keys.data?.data.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td><code>{key.prefix}…{key.last4}</code></td>
                <td>{dateTime(key.createdAt)}</td>
                <td data-testid='expires'>{key.expiresAt === undefined || key.expiresAt === null ? 'Never' : dateTime(key.expiresAt)}</td>
                <td>
                  <ActionButton
                    label={`Revoke ${key.name}`} danger
                    describe={<p>The key {key.prefix}…{key.last4} stops working at once, and every dashboard session signed in with it ends.</p>}
                    action={async () => { await api(`${base}/${key.id}`, { method: 'DELETE' }); return `Revoked the key ${key.name} (${key.prefix}…${key.last4}).` }}
                    onDone={(message) => { setRevoked(message); keys.reload() }} showSuccess={false}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {revoked !== undefined && <Notice kind='success'>{revoked}</Notice>}
      {mayCreate
        ? (
          <form class='inline' onSubmit={(event) => { create(event).catch(reportError) }}>
            <Field label='New key name'><input type='text' name='name' maxLength={100} /></Field>
            <button type='submit' class='primary'>Create key</button>
          </form>
          )
        : <Notice kind='info'>A new key acts with an owner's rights (all but managing people), so only an owner creates one; you may revoke keys.</Notice>}
      {error !== undefined && <Notice kind='error'>{error}</Notice>}
      {created !== undefined && <OneTimeSecret label={`Secret of the key ${created.name}`} secret={created.secret} />}
    </section>
  )
}

const CREDENTIALS: Record<Connector['type'], Array<{ name: keyof NonNullable<CreateConnectorRequest['credentials']>, label: string }>> = {
  simulated: [],
  stripe: [{ name: 'secretKey', label: 'Secret key (sk_…)' }, { name: 'webhookSecret', label: 'Webhook signing secret (whsec_…, optional)' }],
  adyen: [
    { name: 'apiKey', label: 'API key' },
    { name: 'merchantAccount', label: 'Merchant account' },
    { name: 'hmacKey', label: 'Notification HMAC key (optional)' },
    { name: 'liveUrlPrefix', label: 'Live URL prefix (live accounts only)' }
  ]
}
// The keys of CREDENTIALS, which the Record type makes exactly the API's connector types.
const CONNECTOR_TYPES = Object.keys(CREDENTIALS) as Array<Connector['type']>

function Connectors ({ base }: { base: string }) {
  const mayConfigure = useCan('configure')
  const connectors = useLoad(() => api<ConnectorCollection>(base), [base])
  const [type, setType] = useState<Connector['type']>('simulated')
  const [message, setMessage] = useState<{ ok: boolean, text: string } | undefined>()
  const [deleted, setDeleted] = useState<string | undefined>()
  const add = async (event: Event): Promise<void> => {
    event.preventDefault()
    const formElement = event.currentTarget as HTMLFormElement
    const form = new FormData(formElement)
    const credentials: NonNullable<CreateConnectorRequest['credentials']> = {}
    for (const field of CREDENTIALS[type] ?? []) {
      const value = String(form.get(field.name) ?? '').trim()
      if (value !== '') credentials[field.name] = value
    }
    const description = String(form.get('description') ?? '').trim()
    setMessage(undefined)
    try {
      const connector = await api<Connector>(base, {
        method: 'POST',
        body: {
          type,
          priority: Number(form.get('priority') ?? 0),
          ...(description === '' ? {} : { description }),
          ...(Object.keys(credentials).length === 0 ? {} : { credentials })
        } satisfies CreateConnectorRequest
      })
      setMessage({ ok: true, text: `Added ${connector.type} connector ${connector.id}. Its credentials are stored encrypted and never shown again.` })
      formElement.reset()
      connectors.reload()
    } catch (err) {
      setMessage({ ok: false, text: messageOf(err) })
    }
  }
  return (
    <section aria-labelledby='connectors'>
      <h2 id='connectors'>Connector accounts</h2>
      <FailoverRule />
      <LoadState loading={connectors.loading && connectors.data === undefined} error={connectors.error} />
      {connectors.data?.data.length === 0 && <p>No connector accounts: payments use the service's default gateway.</p>}
      {(connectors.data?.data.length ?? 0) > 0 && (
        <table class='list' data-testid='connectors'>
          <thead><tr><th scope='col'>Type</th><th scope='col'>Description</th><th scope='col'>Priority</th><th scope='col'>Credentials</th><th scope='col'>Status</th><th scope='col'><span class='visually-hidden'>Actions</span></th></tr></thead>
          <tbody>
            {connectors.data?.data.map((connector) => (
              <ConnectorRow key={connector.id} base={base} connector={connector} onChange={() => { connectors.reload() }} onDeleted={(text) => { setDeleted(text); connectors.reload() }} />
            ))}
          </tbody>
        </table>
      )}
      {deleted !== undefined && <Notice kind='success'>{deleted}</Notice>}
      {!mayConfigure && <Notice kind='info'>{READ_ONLY}</Notice>}
      {mayConfigure && (
        <>
          <h3>Add a connector account</h3>
          <form class='stack' onSubmit={(event) => { add(event).catch(reportError) }}>
            <Field label='Type'>
              <select name='type' value={type} onChange={(event) => { const chosen = event.currentTarget.value; setType(CONNECTOR_TYPES.find((name) => name === chosen) ?? 'simulated') }}>
                {CONNECTOR_TYPES.map((name) => <option key={name} value={name}>{name}</option>)}
              </select>
            </Field>
            {(CREDENTIALS[type] ?? []).map((field) => (
              <Field key={`${type}-${field.name}`} label={field.label}><input type='password' name={field.name} autocomplete='off' /></Field>
            ))}
            <Field label='Priority' hint='0 is tried first.'><input type='number' name='priority' min='0' step='1' defaultValue='0' /></Field>
            <Field label='Description'><input type='text' name='description' maxLength={200} /></Field>
            <button type='submit' class='primary'>Add connector</button>
          </form>
          {message !== undefined && <Notice kind={message.ok ? 'success' : 'error'}>{message.text}</Notice>}
        </>
      )}
    </section>
  )
}

/** How payments are routed among the accounts below (README "Routing and failover", src/services/payments.ts). */
function FailoverRule () {
  return (
    <p class='muted' data-testid='failover-rule'>
      <strong>Routing and failover.</strong> A new payment goes to the enabled account with the lowest priority (equal
      priorities: the oldest first). It moves on to the next account only after an attempt that certainly charged
      nothing: the connection was refused, or the PSP answered that it did not process the request (credentials
      refused, rate limited). A decline is an answer, not a failure: no failover. When an attempt's outcome is unknown
      (a time-out, a dropped connection, a PSP error), the payment is pinned to that account and finished there, until
      that account itself says it holds nothing; changing priorities, disabling or deleting the account meanwhile does
      not move it. When every account refused, nothing was charged: the payment stays pending and its next attempt
      starts again from the first account. Refunds and captures always go to the payment's own account, even a
      disabled or deleted one.
    </p>
  )
}

const DISABLE_MEANS = 'New payments are no longer routed to this account. The payments already made through it keep settling, refunding and capturing there.'
const ENABLE_MEANS = 'New payments may be routed to this account again, in its priority order.'

/** A connector account's name in labels: its description, else its type and the start of its id. */
function connectorName (connector: Connector): string {
  return connector.description ?? `${connector.type} ${connector.id.slice(0, 8)}`
}

function ConnectorRow ({ base, connector, onChange, onDeleted }: { base: string, connector: Connector, onChange: () => void, onDeleted: (message: string) => void }) {
  const mayConfigure = useCan('configure')
  const path = `${base}/${connector.id}`
  const name = connectorName(connector)
  return (
    <tr>
      <td>{connector.type}</td>
      <td>{connector.description ?? ''}</td>
      <td>{mayConfigure ? <PriorityForm path={path} name={name} priority={connector.priority} onSaved={onChange} /> : connector.priority}</td>
      <td>{connector.credentialsHint === undefined ? '—' : `…${connector.credentialsHint}`}</td>
      <td data-testid='connector-status'>{connector.status}</td>
      <td>
        {mayConfigure && (
          <div class='row-actions'>
            <ActionButton
              label={`${connector.status === 'enabled' ? 'Disable' : 'Enable'} ${name}`}
              describe={<p>{connector.status === 'enabled' ? DISABLE_MEANS : ENABLE_MEANS}</p>}
              action={async () => {
                const next = connector.status === 'enabled' ? 'disabled' : 'enabled'
                await api(path, { method: 'PATCH', body: { status: next } satisfies UpdateConnectorRequest })
                return `${name} is now ${next}.`
              }} onDone={onChange}
            />
            <ActionButton
              label={`Delete ${name}`} danger
              describe={
                <>
                  <p>The {connector.type} account {name} is removed from this list and no new payment is routed to it; the API answers 404 for it from now on.</p>
                  <p>The payments already made through it keep settling, refunding and capturing there: its record and its credentials are kept for them.</p>
                  <p>This cannot be undone: to route payments to this account again, add it anew with its credentials.</p>
                </>
              }
              action={async () => { await api(path, { method: 'DELETE' }); return `Deleted the ${connector.type} account ${name}.` }}
              onDone={onDeleted} showSuccess={false}
            />
          </div>
        )}
      </td>
    </tr>
  )
}

/** The account's priority, saved with PATCH; the API judges the value (0-1000, whole numbers) and its refusal is shown here. */
function PriorityForm ({ path, name, priority, onSaved }: { path: string, name: string, priority: number, onSaved: () => void }) {
  const [value, setValue] = useState(String(priority))
  const [busy, setBusy] = useState(false)
  const [result, setResult] = useState<{ ok: boolean, text: string } | undefined>()
  const save = async (event: Event): Promise<void> => {
    event.preventDefault()
    setResult(undefined)
    if (value.trim() === '') { setResult({ ok: false, text: 'Enter a priority: a whole number, 0 is tried first.' }); return }
    setBusy(true)
    try {
      const updated = await api<Connector>(path, { method: 'PATCH', body: { priority: Number(value) } satisfies UpdateConnectorRequest })
      setResult({ ok: true, text: `Priority of ${name} is now ${updated.priority}.` })
      onSaved()
    } catch (err) {
      setResult({ ok: false, text: messageOf(err) })
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class='priority' noValidate onSubmit={(event) => { save(event).catch(reportError) }}>
      <input
        type='number' step='1' min='0' max='1000' value={value} aria-label={`Priority of ${name}`} class='priority-input'
        onInput={(event) => { setValue(event.currentTarget.value) }}
      />
      <button type='submit' disabled={busy || value === String(priority)}>Save<span class='visually-hidden'> the priority of {name}</span></button>
      {result !== undefined && <Notice kind={result.ok ? 'success' : 'error'}>{result.text}</Notice>}
    </form>
  )
}
