import { useState } from 'preact/hooks'
import { api, messageOf, type Session, type SignInRequest } from '../api'
import { Field, Notice } from '../components'

/**
 * The key is sent once, to POST /dashboard/session, and forgotten: the session is an HttpOnly cookie the page
 * cannot read, plus a CSRF token kept in memory only (never localStorage/sessionStorage).
 */
export function SignIn ({ ended, onSignedIn }: { ended: string | undefined, onSignedIn: (session: Session) => void }) {
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
    <main id='main' class='sign-in'>
      <h1 tabIndex={-1}>Sign in to the payments dashboard</h1>
      {ended !== undefined && <Notice kind='info'>{ended}</Notice>}
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
    </main>
  )
}
