import { useContext, useState } from 'preact/hooks'
import { ROLE_MEANS, ROLES, SessionContext } from '../access'
import { api, messageOf, type InvitedUser, type InviteUserRequest, type Role, type UpdateUserRequest, type User, type UserList } from '../api'
import { ActionButton, Field, LoadState, Notice, OneTimeSecret, useLoad } from '../components'
import { dateTime } from '../format'

function roleOf (text: string): Role {
  return ROLES.find((role) => role === text) ?? 'viewer'
}

/** The people who sign in to a merchant's dashboard: invite, change roles, remove (an owner, or the operator). */
export function Team ({ merchantId }: { merchantId: string }) {
  const base = `/merchants/${encodeURIComponent(merchantId)}/users`
  const users = useLoad(() => api<UserList>(base), [base])
  const session = useContext(SessionContext)
  const me = session?.principal.kind === 'merchant' ? session.principal.user?.id : undefined
  const [removed, setRemoved] = useState<string | undefined>()
  return (
    <>
      <h1 tabIndex={-1}>Team</h1>
      <p class='muted'>Merchant <code>{merchantId}</code></p>
      <details>
        <summary>What each role may do</summary>
        <dl class='facts'>
          {ROLES.map((role) => <div key={role}><dt>{role}</dt><dd>{ROLE_MEANS[role]}</dd></div>)}
        </dl>
      </details>
      <LoadState loading={users.loading && users.data === undefined} error={users.error} />
      {users.data?.data.length === 0 && <p>Nobody has been invited yet: API keys are the only way in.</p>}
      {(users.data?.data.length ?? 0) > 0 && (
        <table class='list' data-testid='users'>
          <caption class='visually-hidden'>Users of this merchant</caption>
          <thead>
            <tr>
              <th scope='col'>Email</th><th scope='col'>Role</th><th scope='col'>Status</th><th scope='col'>Two-factor</th>
              <th scope='col'>Last sign-in</th><th scope='col'><span class='visually-hidden'>Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {users.data?.data.map((user) => (
              <tr key={user.id} data-user={user.id}>
                <th scope='row'>{user.email}{user.id === me ? ' (you)' : ''}</th>
                <td><RoleForm path={`${base}/${user.id}`} user={user} onSaved={() => { users.reload() }} /></td>
                <td>{user.status}</td>
                <td data-testid='two-factor'>{user.twoFactorEnabled ? 'on' : 'off'}</td>
                <td>{user.lastSignInAt === null ? <span class='muted'>never</span> : dateTime(user.lastSignInAt)}</td>
                <td>
                  <ActionButton
                    label={`Remove ${user.email}`} danger
                    describe={<p>{user.email} can no longer sign in, and their open sessions end at once. Their entries in the audit log stay.</p>}
                    action={async () => { await api(`${base}/${user.id}`, { method: 'DELETE' }); return `Removed ${user.email}.` }}
                    onDone={(message) => { setRemoved(message); users.reload() }} showSuccess={false}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {removed !== undefined && <Notice kind='success'>{removed}</Notice>}
      <InviteForm base={base} onInvited={() => { users.reload() }} />
    </>
  )
}

function InviteForm ({ base, onInvited }: { base: string, onInvited: () => void }) {
  const [invited, setInvited] = useState<InvitedUser | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const invite = async (event: Event): Promise<void> => {
    event.preventDefault()
    const formElement = event.currentTarget as HTMLFormElement
    const form = new FormData(formElement)
    setError(undefined)
    setInvited(undefined)
    setBusy(true)
    try {
      const body: InviteUserRequest = { email: String(form.get('email') ?? '').trim(), role: roleOf(String(form.get('role'))) }
      setInvited(await api<InvitedUser>(base, { method: 'POST', body }))
      formElement.reset()
      onInvited()
    } catch (err) {
      setError(messageOf(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby='invite'>
      <h2 id='invite'>Invite someone</h2>
      <form class='inline' onSubmit={(event) => { invite(event).catch(reportError) }}>
        <Field label='Email'><input type='email' name='email' required maxLength={254} /></Field>
        <Field label='Role'>
          <select name='role'>
            {ROLES.map((role) => <option key={role} value={role} selected={role === 'viewer'}>{role}</option>)}
          </select>
        </Field>
        <button type='submit' class='primary' disabled={busy}>Invite</button>
      </form>
      {error !== undefined && <Notice kind='error'>{error}</Notice>}
      {invited !== undefined && (
        <>
          <OneTimeSecret label={`Invitation link for ${invited.user.email} (${invited.user.role})`} secret={new URL(invited.invite.url, window.location.origin).href} />
          <p>Send it to them yourself: whoever opens it sets the password of this account. It works once, until {dateTime(invited.invite.expiresAt)}.</p>
        </>
      )}
    </section>
  )
}

function RoleForm ({ path, user, onSaved }: { path: string, user: User, onSaved: () => void }) {
  const [role, setRole] = useState<Role>(user.role)
  const [busy, setBusy] = useState(false)
  const [result, setResult] = useState<{ ok: boolean, text: string } | undefined>()
  const save = async (event: Event): Promise<void> => {
    event.preventDefault()
    setResult(undefined)
    setBusy(true)
    try {
      const updated = await api<User>(path, { method: 'PATCH', body: { role } satisfies UpdateUserRequest })
      setResult({ ok: true, text: `${updated.email} is now ${updated.role}.` })
      onSaved()
    } catch (err) {
      setResult({ ok: false, text: messageOf(err) })
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class='priority' onSubmit={(event) => { save(event).catch(reportError) }}>
      <select aria-label={`Role of ${user.email}`} value={role} onChange={(event) => { setRole(roleOf(event.currentTarget.value)) }}>
        {ROLES.map((name) => <option key={name} value={name}>{name}</option>)}
      </select>
      <button type='submit' disabled={busy || role === user.role}>Save<span class='visually-hidden'> the role of {user.email}</span></button>
      {result !== undefined && <Notice kind={result.ok ? 'success' : 'error'}>{result.text}</Notice>}
    </form>
  )
}
