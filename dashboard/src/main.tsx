import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import 'uplot/dist/uPlot.min.css'
import './styles.css'
import { api, ApiError, messageOf, useSessionToken, whenSessionLost, type Session } from './api'
import { Notice } from './components'
import { href, useRoute, type Route } from './router'
import { SignIn } from './pages/sign-in'
import { Overview } from './pages/overview'
import { Payments } from './pages/payments'
import { PaymentPage } from './pages/payment'
import { Webhooks } from './pages/webhooks'
import { Developers } from './pages/developers'
import { Operator } from './pages/operator'

function App () {
  const [session, setSession] = useState<Session | null | undefined>(undefined)
  const [ended, setEnded] = useState<string | undefined>()
  const route = useRoute()

  const adopt = (next: Session | null): void => {
    useSessionToken(next?.csrfToken ?? null)
    setSession(next)
  }
  useEffect(() => {
    whenSessionLost(() => { adopt(null); setEnded('Your session ended (expired, signed out elsewhere, or its key was revoked). Sign in again.') })
    // A reload keeps the HttpOnly cookie; the session read gives back the CSRF token, which lives only in memory.
    api<Session>('/dashboard/session').then(adopt, () => { adopt(null) })
  }, [])

  if (session === undefined) return <main id='main'><p role='status'>Loading…</p></main>
  if (session === null) {
    return <SignIn ended={ended} onSignedIn={(next) => { setEnded(undefined); adopt(next); window.location.hash = '#/' }} />
  }
  const signOut = async (): Promise<void> => {
    try {
      await api('/dashboard/session', { method: 'DELETE' })
      setEnded('You are signed out.')
    } catch (error) {
      setEnded(error instanceof ApiError && error.status === 401 ? 'Your session had already ended.' : messageOf(error))
    }
    adopt(null)
  }
  return <Layout session={session} route={route} onSignOut={() => { signOut().catch(reportError) }} />
}

interface NavItem { path: string, label: string }

function navFor (session: Session): NavItem[] {
  if (session.principal.kind === 'admin') {
    return [{ path: '/operator', label: 'Operator' }, { path: '/payments', label: 'Payments' }]
  }
  return [
    { path: '/overview', label: 'Overview' },
    { path: '/payments', label: 'Payments' },
    { path: '/webhooks', label: 'Webhooks' },
    { path: '/developers', label: 'Developers' }
  ]
}

function Layout ({ session, route, onSignOut }: { session: Session, route: Route, onSignOut: () => void }) {
  const items = navFor(session)
  const [first = ''] = route.path
  const active = `/${first}`
  const who = session.principal.kind === 'admin' ? 'Operator (admin key)' : `Merchant ${session.principal.merchantId}`
  useEffect(() => {
    // After navigation, move focus to the page's heading so screen readers announce the new page.
    document.querySelector<HTMLElement>('main h1')?.focus()
  }, [route.path.join('/')])
  return (
    <>
      <a class='skip' href='#main' onClick={(event) => { event.preventDefault(); document.querySelector<HTMLElement>('main h1')?.focus() }}>Skip to content</a>
      <header class='top'>
        <p class='brand'>Payments dashboard</p>
        <nav aria-label='Main'>
          <ul>
            {items.map((item) => (
              <li key={item.path}>
                <a href={href(item.path)} aria-current={active === item.path ? 'page' : undefined}>{item.label}</a>
              </li>
            ))}
          </ul>
        </nav>
        <p class='who'>{who}</p>
        <button type='button' onClick={onSignOut}>Sign out</button>
      </header>
      <main id='main'>
        <Page session={session} route={route} />
      </main>
    </>
  )
}

function Page ({ session, route }: { session: Session, route: Route }) {
  const [first, second, third] = route.path
  const principal = session.principal
  if (first === 'payments' && second !== undefined) return <PaymentPage id={second} />
  if (first === 'payments') return <Payments route={route} principal={principal} />
  if (principal.kind === 'admin') {
    if (first === 'merchants' && second !== undefined && third === 'webhooks') return <Webhooks merchantId={second} />
    if (first === 'merchants' && second !== undefined && third === 'developers') return <Developers merchantId={second} />
    if (first === undefined || first === 'operator') return <Operator route={route} />
    return <NotFound />
  }
  if (first === undefined || first === 'overview') return <Overview route={route} />
  if (first === 'webhooks') return <Webhooks merchantId={principal.merchantId} />
  if (first === 'developers') return <Developers merchantId={principal.merchantId} />
  return <NotFound />
}

function NotFound () {
  return (
    <>
      <h1 tabIndex={-1}>Page not found</h1>
      <Notice kind='info'>There is no such page. Use the navigation above.</Notice>
    </>
  )
}

const root = document.getElementById('app')
if (root !== null) render(<App />, root)
