import { useState } from 'preact/hooks'
import { api, ApiError, messageOf, type AcceptInviteRequest, type Session } from '../api'
import { Field, Notice } from '../components'
import { href, navigate } from '../router'
import { EnableTwoFactor } from './two-factor'

export const PASSWORD_RULES = 'At least 12 characters, and not a common or easily guessed password (a few unrelated words make a good one).'

const PASSWORD_FIELDS: Record<string, string> = { password: 'The password', newPassword: 'The new password', currentPassword: 'The current password' }

/** The API's reasons for refusing a password (a 400 problem's `errors`, by field), else the whole message. */
export function passwordRefusal (error: unknown): string {
  if (error instanceof ApiError && error.status === 400 && 'errors' in error.problem && error.problem.errors !== undefined) {
    const reasons = Object.entries(error.problem.errors).map(([field, messages]) => `${PASSWORD_FIELDS[field] ?? field}: ${[messages].flat().join('; ')}.`)
    if (reasons.length > 0) return `${reasons.join(' ')} (HTTP 400)`
  }
  return messageOf(error)
}

/**
 * An invitation link (`#/invite/<token>`): the invitee sets a password (POST /dashboard/invite), which signs them in,
 * then may enable two-factor authentication before going on to the overview.
 */
export function Invite ({ token, current, onSignedIn }: { token: string, current: Session | null | undefined, onSignedIn: (session: Session) => void }) {
  const [signedIn, setSignedIn] = useState<Session | undefined>()
  const replacing = current !== null && current !== undefined
  const refresh = async (): Promise<void> => {
    onSignedIn(await api<Session>('/dashboard/session'))
    navigate('/overview')
  }
  return (
    <main id='main' class='sign-in'>
      <h1 tabIndex={-1}>Join the payments dashboard</h1>
      {signedIn === undefined && replacing && (
        <Notice kind='info'>This browser is signed in to the dashboard already: accepting the invitation signs it in as the invitee instead.</Notice>
      )}
      {signedIn === undefined
        ? <SetPassword token={token} onDone={(session) => { setSignedIn(session); onSignedIn(session) }} />
        : (
          <>
            <Notice kind='success'>Your password is set and you are signed in{signedIn.principal.kind === 'merchant' && signedIn.principal.user !== undefined ? ` as ${signedIn.principal.user.email}` : ''}.</Notice>
            <EnableTwoFactor onEnabled={() => { refresh().catch(reportError) }} />
            <p><a href={href('/overview')}>Skip for now</a> (you can enable it later on your Account page).</p>
          </>
          )}
    </main>
  )
}

function SetPassword ({ token, onDone }: { token: string, onDone: (session: Session) => void }) {
  const [password, setPassword] = useState('')
  const [repeated, setRepeated] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault()
    setError(undefined)
    if (password !== repeated) { setError('The two passwords differ: type the same one twice.'); return }
    setBusy(true)
    try {
      onDone(await api<Session>('/dashboard/invite', { method: 'POST', body: { token, password } satisfies AcceptInviteRequest }))
    } catch (err) {
      setError(err instanceof ApiError && err.status === 404
        ? 'This invitation link is unknown, already used or expired. Ask the account owner for a new one. (HTTP 404)'
        : passwordRefusal(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class='stack' onSubmit={(event) => { submit(event).catch(reportError) }}>
      <Field label='New password' hint={PASSWORD_RULES}>
        <input
          type='password' name='password' autocomplete='new-password' required minLength={12} value={password}
          onInput={(event) => { setPassword(event.currentTarget.value) }}
        />
      </Field>
      <Field label='Repeat the password'>
        <input
          type='password' name='repeated' autocomplete='new-password' required minLength={12} value={repeated}
          onInput={(event) => { setRepeated(event.currentTarget.value) }}
        />
      </Field>
      <button type='submit' class='primary' disabled={busy}>Set password and sign in</button>
      {error !== undefined && <Notice kind='error'>{error}</Notice>}
    </form>
  )
}
