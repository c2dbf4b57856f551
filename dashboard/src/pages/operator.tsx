import { api, type Merchant, type Page } from '../api'
import { ActionButton, LoadState, Notice, useLoad } from '../components'
import { dateTime } from '../format'
import { href, type Route } from '../router'

const SUSPEND = 'Its keys can still read and refund, but can no longer create payments or change webhooks.'
const REACTIVATE = 'Its keys may create payments again.'

/** The operator's (admin key) view: every merchant, suspend/reactivate, and each merchant's pages. */
export function Operator ({ route }: { route: Route }) {
  const after = route.query.get('after') ?? undefined
  const merchants = useLoad(() => api<Page<Merchant>>('/merchants', { query: { limit: 50, startingAfter: after } }), [after])
  const last = merchants.data?.data[merchants.data.data.length - 1]
  return (
    <>
      <h1 tabIndex={-1}>Merchants</h1>
      <Notice kind='info'>
        The admin key manages merchants, their keys, webhooks and connectors. It does not act on a merchant's behalf:
        payments, refunds and events answer it 403, as the API does for every client.
      </Notice>
      <LoadState loading={merchants.loading && merchants.data === undefined} error={merchants.error} />
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
                </td>
                <td>
                  <ActionButton
                    label={merchant.status === 'active' ? `Suspend ${merchant.name}` : `Reactivate ${merchant.name}`}
                    danger={merchant.status === 'active'}
                    describe={<p>{merchant.status === 'active' ? SUSPEND : REACTIVATE}</p>}
                    action={async () => {
                      const next = merchant.status === 'active' ? 'suspended' : 'active'
                      await api(`/merchants/${merchant.id}`, { method: 'PATCH', body: { status: next }, contentType: 'application/merge-patch+json' })
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
    </>
  )
}
