import { useState } from 'preact/hooks'
import { api, messageOf, type ApiKey, type Connector } from '../api'
import { ActionButton, Field, LoadState, Notice, OneTimeSecret, useLoad } from '../components'
import { dateTime } from '../format'

/** A merchant's API keys and connector accounts. */
export function Developers ({ merchantId }: { merchantId: string }) {
  const merchant = `/merchants/${encodeURIComponent(merchantId)}`
  return (
    <>
      <h1 tabIndex={-1}>Developers</h1>
      <p class='muted'>Merchant <code>{merchantId}</code></p>
      <ApiKeys base={`${merchant}/api-keys`} />
      <Connectors base={`${merchant}/connectors`} />
    </>
  )
}

function ApiKeys ({ base }: { base: string }) {
  const keys = useLoad(() => api<{ data: ApiKey[] }>(base), [base])
  const [created, setCreated] = useState<{ name: string, secret: string } | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [revoked, setRevoked] = useState<string | undefined>()
  const create = async (event: Event): Promise<void> => {
    event.preventDefault()
    const formElement = event.currentTarget as HTMLFormElement
    const name = String(new FormData(formElement).get('name') ?? '').trim()
    setError(undefined)
    try {
      const key = await api<ApiKey & { secret: string }>(base, { method: 'POST', body: { name: name === '' ? undefined : name } })
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
      <form class='inline' onSubmit={(event) => { create(event).catch(reportError) }}>
        <Field label='New key name'><input type='text' name='name' maxLength={100} /></Field>
        <button type='submit' class='primary'>Create key</button>
      </form>
      {error !== undefined && <Notice kind='error'>{error}</Notice>}
      {created !== undefined && <OneTimeSecret label={`Secret of the key ${created.name}`} secret={created.secret} />}
    </section>
  )
}

const CREDENTIALS: Record<string, Array<{ name: string, label: string }>> = {
  simulated: [],
  stripe: [{ name: 'secretKey', label: 'Secret key (sk_…)' }, { name: 'webhookSecret', label: 'Webhook signing secret (whsec_…, optional)' }],
  adyen: [
    { name: 'apiKey', label: 'API key' },
    { name: 'merchantAccount', label: 'Merchant account' },
    { name: 'hmacKey', label: 'Notification HMAC key (optional)' },
    { name: 'liveUrlPrefix', label: 'Live URL prefix (live accounts only)' }
  ]
}

function Connectors ({ base }: { base: string }) {
  const connectors = useLoad(() => api<{ data: Connector[] }>(base), [base])
  const [type, setType] = useState('simulated')
  const [message, setMessage] = useState<{ ok: boolean, text: string } | undefined>()
  const add = async (event: Event): Promise<void> => {
    event.preventDefault()
    const formElement = event.currentTarget as HTMLFormElement
    const form = new FormData(formElement)
    const credentials: Record<string, string> = {}
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
          description: description === '' ? undefined : description,
          credentials: Object.keys(credentials).length === 0 ? undefined : credentials
        }
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
      <p class='muted'>Payments are routed to the enabled accounts by priority (lowest first), failing over when one certainly charged nothing.</p>
      <LoadState loading={connectors.loading && connectors.data === undefined} error={connectors.error} />
      {connectors.data?.data.length === 0 && <p>No connector accounts: payments use the service's default gateway.</p>}
      {(connectors.data?.data.length ?? 0) > 0 && (
        <table class='list'>
          <thead><tr><th scope='col'>Type</th><th scope='col'>Description</th><th scope='col'>Priority</th><th scope='col'>Credentials</th><th scope='col'>Status</th><th scope='col'><span class='visually-hidden'>Actions</span></th></tr></thead>
          <tbody>
            {connectors.data?.data.map((connector) => (
              <tr key={connector.id}>
                <td>{connector.type}</td>
                <td>{connector.description ?? ''}</td>
                <td class='number'>{connector.priority}</td>
                <td>{connector.credentialsHint === undefined ? '—' : `…${connector.credentialsHint}`}</td>
                <td>{connector.status}</td>
                <td>
                  <ActionButton
                    label={connector.status === 'enabled' ? 'Disable' : 'Enable'}
                    describe={<p>{connector.status === 'enabled' ? 'New payments are no longer routed to this account.' : 'New payments may be routed to this account again.'}</p>}
                    action={async () => {
                      const next = connector.status === 'enabled' ? 'disabled' : 'enabled'
                      await api(`${base}/${connector.id}`, { method: 'PATCH', body: { status: next } })
                      return `Now ${next}.`
                    }} onDone={() => { connectors.reload() }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>Add a connector account</h3>
      <form class='stack' onSubmit={(event) => { add(event).catch(reportError) }}>
        <Field label='Type'>
          <select name='type' value={type} onChange={(event) => { setType(event.currentTarget.value) }}>
            {Object.keys(CREDENTIALS).map((name) => <option key={name} value={name}>{name}</option>)}
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
    </section>
  )
}
