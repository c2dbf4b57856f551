import { useState } from 'preact/hooks'
import { api, type ChangePasswordRequest, type Session, type SignedInUser } from '../api'
import { Field, Notice } from '../components'
import { passwordRefusal, PASSWORD_RULES } from './invite'
import { EnableTwoFactor } from './two-factor'

/** A signed-in user's own settings: their password, and two-factor authentication. */
export function Account ({ user, onSessionChanged }: { user: SignedInUser, onSessionChanged: (session: Session) => void }) {
  const [enabled, setEnabled] = useState(false)
  const refresh = async (): Promise<void> => {
    setEnabled(true)
    onSessionChanged(await api<Session>('/dashboard/session'))
  }
  return (
    <>
      <h1 tabIndex={-1}>Account</h1>
      <dl class='facts'>
        <div><dt>Email</dt><dd>{user.email}</dd></div>
        <div><dt>Role</dt><dd>{user.role}</dd></div>
        <div><dt>Two-factor authentication</dt><dd data-testid='two-factor'>{user.twoFactorEnabled ? 'on' : 'off'}</dd></div>
      </dl>
      {enabled && <Notice kind='success'>Two-factor authentication is on: each sign-in now asks for a code from your app.</Notice>}
      {!user.twoFactorEnabled && <EnableTwoFactor onEnabled={() => { refresh().catch(reportError) }} />}
      <ChangePassword />
    </>
  )
}

function ChangePassword () {
  const [result, setResult] = useState<{ ok: boolean, text: string } | undefined>()
  const [busy, setBusy] = useState(false)
  const change = async (event: Event): Promise<void> => {
    event.preventDefault()
    const formElement = event.currentTarget as HTMLFormElement
    const form = new FormData(formElement)
    setResult(undefined)
    if (form.get('newPassword') !== form.get('repeated')) { setResult({ ok: false, text: 'The two new passwords differ: type the same one twice.' }); return }
    setBusy(true)
    try {
      const body: ChangePasswordRequest = { currentPassword: String(form.get('currentPassword')), newPassword: String(form.get('newPassword')) }
      await api('/dashboard/password', { method: 'POST', body })
      formElement.reset()
      setResult({ ok: true, text: 'Password changed. Your other sessions have ended; this one goes on.' })
    } catch (err) {
      setResult({ ok: false, text: passwordRefusal(err) })
    } finally {
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby='password'>
      <h2 id='password'>Change your password</h2>
      <form class='stack' onSubmit={(event) => { change(event).catch(reportError) }}>
        <Field label='Current password'><input type='password' name='currentPassword' autocomplete='current-password' required /></Field>
        <Field label='New password' hint={PASSWORD_RULES}><input type='password' name='newPassword' autocomplete='new-password' required minLength={12} /></Field>
        <Field label='Repeat the new password'><input type='password' name='repeated' autocomplete='new-password' required minLength={12} /></Field>
        <button type='submit' class='primary' disabled={busy}>Change password</button>
      </form>
      {result !== undefined && <Notice kind={result.ok ? 'success' : 'error'}>{result.text}</Notice>}
    </section>
  )
}
