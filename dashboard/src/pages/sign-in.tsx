import { useEffect, useRef, useState } from 'preact/hooks'
import { api, ApiError, isProblemType, messageOf, type Session, type SignInRequest } from '../api'
import { Field, Notice } from '../components'

/**
 * Neither the key nor the password is kept: each is sent once, to POST /dashboard/session, and forgotten. The session
 * is an HttpOnly cookie the page cannot read, plus a CSRF token kept in memory only (never localStorage/sessionStorage).
 */
export function SignIn ({ ended, onSignedIn }: { ended: string | undefined, onSignedIn: (session: Session) => void }) {
  return (
    <main id='main' class='sign-in'>
      <h1 tabIndex={-1}>Sign in to the payments dashboard</h1>
      {ended !== undefined && <Notice kind='info'>{ended}</Notice>}
      <div class='sign-in-ways'>
        <PasswordSignIn onSignedIn={onSignedIn} />
        <ApiKeySignIn onSignedIn={onSignedIn} />
      </div>
    </main>
  )
}

function ApiKeySignIn ({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [apiKey, setApiKey] = useState('')
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const session = await api<Session>('/dashboard/session', { method: 'POST', body: { apiKey } satisfies SignInRequest })
      setApiKey('')
      onSignedIn(session)
    } catch (err) {
      setError(messageOf(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <div>
      <h2>With a merchant or operator key</h2>
      <form onSubmit={(event) => { submit(event).catch(reportError) }}>
        <Field label='API key' hint='A merchant key (sk_…) or the operator (admin) key. It is exchanged for a session and not stored in the browser.'>
          <input
            type='password' name='apiKey' autocomplete='off' required value={apiKey}
            onInput={(event) => { setApiKey(event.currentTarget.value) }}
          />
        </Field>
        <button type='submit' class='primary' disabled={busy}>Sign in</button>
      </form>
      {error !== undefined && <Notice kind='error'>{error}</Notice>}
    </div>
  )
}

/** What a refused sign-in means, without saying whether the email exists. */
function refusal (error: unknown, codeSent: boolean): { text: string, totp: boolean } {
  if (isProblemType(error, 'totp-required')) {
    return codeSent
      ? { text: 'That code is not right, or it has expired: enter the one your app shows now.', totp: true }
      : { text: 'Two-factor authentication is on for this account: enter the 6-digit code from your authenticator app.', totp: true }
  }
  if (error instanceof ApiError && error.status === 401) return { text: 'The email or the password is not right. (HTTP 401)', totp: false }
  if (error instanceof ApiError && isProblemType(error, 'sign-in-locked')) {
    const later = error.retryAfter === null ? '' : ` Try again in ${error.retryAfter} s.`
    return { text: `Too many failed sign-ins: signing in is locked for 15 minutes.${later} (HTTP 429)`, totp: false }
  }
  return { text: messageOf(error), totp: false }
}

function PasswordSignIn ({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [totp, setTotp] = useState<string | undefined>()
  const [message, setMessage] = useState<{ kind: 'error' | 'info', text: string } | undefined>()
  const [busy, setBusy] = useState(false)
  const codeInput = useRef<HTMLInputElement>(null)
  const asked = totp !== undefined
  useEffect(() => { if (asked) codeInput.current?.focus() }, [asked])
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault()
    setBusy(true)
    setMessage(undefined)
    const code = totp?.trim() ?? ''
    try {
      const body: SignInRequest = { email: email.trim(), password, ...(code === '' ? {} : { totp: code }) }
      const session = await api<Session>('/dashboard/session', { method: 'POST', body })
      setPassword('')
      onSignedIn(session)
    } catch (err) {
      const why = refusal(err, code !== '')
      if (why.totp) setTotp('')
      setMessage({ kind: why.totp && code === '' ? 'info' : 'error', text: why.text })
    } finally {
      setBusy(false)
    }
  }
  return (
    <div>
      <h2>As a team member</h2>
      <form onSubmit={(event) => { submit(event).catch(reportError) }}>
        <Field label='Email'>
          <input type='email' name='email' autocomplete='username' required value={email} onInput={(event) => { setEmail(event.currentTarget.value) }} />
        </Field>
        <Field label='Password'>
          <input
            type='password' name='password' autocomplete='current-password' required value={password}
            onInput={(event) => { setPassword(event.currentTarget.value) }}
          />
        </Field>
        {totp !== undefined && (
          <Field label='Authentication code' hint='The 6 digits your authenticator app shows for this account.'>
            <input
              ref={codeInput} type='text' name='totp' autocomplete='one-time-code' inputMode='numeric' pattern='[0-9]{6}' maxLength={6} required value={totp}
              onInput={(event) => { setTotp(event.currentTarget.value) }}
            />
          </Field>
        )}
        <button type='submit' class='primary' disabled={busy}>Sign in with email</button>
      </form>
      {message !== undefined && <Notice kind={message.kind}>{message.text}</Notice>}
    </div>
  )
}
