import { useState } from 'preact/hooks'
import { api, messageOf, type CreateMerchantRequest, type Merchant, type MerchantList, type MerchantPatch } from '../api'
import { ActionButton, Field, LoadState, Notice, useLoad } from '../components'
import { dateTime, newKey } from '../format'
import { href, type Route } from '../router'

const SUSPEND = 'Its keys can still read and refund, but can no longer create payments or change webhooks.'
const REACTIVATE = 'Its keys may create payments again.'

/** The operator's (admin key) view: every merchant, suspend/reactivate, and each merchant's pages. */
export function Operator ({ route }: { route: Route }) {
  const after = route.query.get('after') ?? undefined
  const merchants = useLoad(() => api<MerchantList>('/merchants', { query: { limit: 50, startingAfter: after } }), [after])
  const last = merchants.data?.data[merchants.data.data.length - 1]
  const [message, setMessage] = useState<{ ok: boolean, text: string } | undefined>()
  // One Idempotency-Key per intended merchant: a resend after a lost answer creates it once.
  const [createKey, setCreateKey] = useState(newKey)
  const create = async (event: Event): Promise<void> => {
    event.preventDefault()
    const formElement = event.currentTarget as HTMLFormElement
    const form = new FormData(formElement)
    setMessage(undefined)
    try {
      const merchant = await api<Merchant>('/merchants', {
        method: 'POST',
        body: { name: String(form.get('name') ?? '').trim(), email: String(form.get('email') ?? '').trim() } satisfies CreateMerchantRequest,
        idempotencyKey: createKey
      })
      setMessage({ ok: true, text: `Created the merchant ${merchant.name} (${merchant.id}). Next: create its first API key on its Keys and connectors page.` })
      setCreateKey(newKey())
      formElement.reset()
      merchants.reload()
    } catch (err) {
      setMessage({ ok: false, text: messageOf(err) })
    }
  }
  return (
    <>
      <h1 tabIndex={-1}>Merchants</h1>
      <Notice kind='info'>
        The admin key manages merchants, their keys, webhooks, connectors and users, and reads their audit logs. It does not act on a merchant's behalf:
        payments, refunds and events answer it 403, as the API does for every client.
      </Notice>
      <LoadState loading={merchants.loading && merchants.data === undefined} error={merchants.error} />
      {merchants.data?.data.length === 0 && <p data-testid='no-merchants'>No merchants yet: create the first one below.</p>}
      {(merchants.data?.data.length ?? 0) > 0 && (
        <table class='list'>
          <thead><tr><th scope='col'>Name</th><th scope='col'>Email</th><th scope='col'>Status</th><th scope='col'>Created</th><th scope='col'>Pages</th><th scope='col'><span class='visually-hidden'>Actions</span></th></tr></thead>
          <tbody>
            {merchants.data?.data.map((merchant) => (
              <tr key={merchant.id}>
                <td>{merchant.name}<br /><code>{merchant.id}</code></td>
                <td>{merchant.email}</td>
                <td>{merchant.status}</td>
                <td>{dateTime(merchant.createdAt)}</td>
                <td>
                  <a href={href(`/merchants/${merchant.id}/developers`)}>Keys and connectors<span class='visually-hidden'> of {merchant.name}</span></a>
                  {' · '}
                  <a href={href(`/merchants/${merchant.id}/webhooks`)}>Webhooks<span class='visually-hidden'> of {merchant.name}</span></a>
                  {' · '}
                  <a href={href(`/merchants/${merchant.id}/team`)}>Team<span class='visually-hidden'> of {merchant.name}</span></a>
                  {' · '}
                  <a href={href(`/merchants/${merchant.id}/audit`)}>Audit log<span class='visually-hidden'> of {merchant.name}</span></a>
                </td>
                <td>
                  <ActionButton
                    label={merchant.status === 'active' ? `Suspend ${merchant.name}` : `Reactivate ${merchant.name}`}
                    danger={merchant.status === 'active'}
                    describe={<p>{merchant.status === 'active' ? SUSPEND : REACTIVATE}</p>}
                    action={async () => {
                      const next = merchant.status === 'active' ? 'suspended' : 'active'
                      await api(`/merchants/${merchant.id}`, { method: 'PATCH', body: { status: next } satisfies MerchantPatch, contentType: 'application/merge-patch+json' })
                      return `Now ${next}.`
                    }} onDone={() => { merchants.reload() }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav aria-label='Pages' class='pager'>
        {after !== undefined && <a href={href('/operator')}>← First page</a>}
        {merchants.data?.hasMore === true && last !== undefined && <a href={href('/operator', { after: last.id })}>Next →</a>}
      </nav>
      <section aria-labelledby='add-merchant'>
        <h2 id='add-merchant'>Create a merchant</h2>
        <form class='stack' onSubmit={(event) => { create(event).catch(reportError) }} onInput={() => { setCreateKey(newKey()) }}>
          <Field label='Merchant name'><input type='text' name='name' required maxLength={200} /></Field>
          <Field label='Contact email' hint='Unique across merchants.'><input type='email' name='email' required maxLength={254} /></Field>
          <button type='submit' class='primary'>Create merchant</button>
        </form>
        {message !== undefined && <Notice kind={message.ok ? 'success' : 'error'}>{message.text}</Notice>}
      </section>
    </>
  )
}
