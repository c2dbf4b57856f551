import { useState } from 'preact/hooks'
import { api, messageOf, type ConfirmTotpRequest, type TotpEnrollment } from '../api'
import { Field, Notice } from '../components'

/**
 * TOTP enrollment: POST /dashboard/totp makes a secret for the signed-in user, shown as text to type into an
 * authenticator app (or its otpauth: link, which a phone opens in one); the first code the app shows confirms it.
 */
export function EnableTwoFactor ({ onEnabled }: { onEnabled: () => void }) {
  const [enrollment, setEnrollment] = useState<TotpEnrollment | undefined>()
  const [code, setCode] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const start = async (): Promise<void> => {
    setBusy(true)
    setError(undefined)
    try {
      setEnrollment(await api<TotpEnrollment>('/dashboard/totp', { method: 'POST' }))
    } catch (err) {
      setError(messageOf(err))
    } finally {
      setBusy(false)
    }
  }
  const confirm = async (event: Event): Promise<void> => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      await api('/dashboard/totp/confirm', { method: 'POST', body: { code: code.trim() } satisfies ConfirmTotpRequest })
      onEnabled()
    } catch (err) {
      setError(messageOf(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby='two-factor'>
      <h2 id='two-factor'>Enable two-factor authentication</h2>
      <p>Each sign-in then also asks for a 6-digit code from an authenticator app on your phone, so a stolen password alone is not enough.</p>
      {enrollment === undefined
        ? <button type='button' class='primary' disabled={busy} onClick={() => { start().catch(reportError) }}>Set up an authenticator app</button>
        : (
          <>
            <div class='secret' role='region' aria-labelledby='totp-secret-label'>
              <p id='totp-secret-label'><strong>Secret key</strong> — type it into your authenticator app (time-based, 6 digits, 30 s).</p>
              <code data-testid='totp-secret'>{enrollment.secret}</code>
              <p>On a phone, <a href={enrollment.otpauthUrl}>open it in the authenticator app</a> instead: <code data-testid='otpauth-url'>{enrollment.otpauthUrl}</code></p>
            </div>
            <form class='inline' onSubmit={(event) => { confirm(event).catch(reportError) }}>
              <Field label='Code from the app'>
                <input
                  type='text' name='code' autocomplete='one-time-code' inputMode='numeric' pattern='[0-9]{6}' maxLength={6} required value={code}
                  onInput={(event) => { setCode(event.currentTarget.value) }}
                />
              </Field>
              <button type='submit' class='primary' disabled={busy}>Turn on two-factor authentication</button>
            </form>
          </>
          )}
      {error !== undefined && <Notice kind='error'>{error}</Notice>}
    </section>
  )
}
