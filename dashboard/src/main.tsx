import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import 'uplot/dist/uPlot.min.css'
import './styles.css'
import { can, SessionContext } from './access'
import { api, ApiError, messageOf, useSessionToken, whenSessionLost, type Session } from './api'
import { Notice } from './components'
import { href, useRoute, type Route } from './router'
import { SignIn } from './pages/sign-in'
import { Overview } from './pages/overview'
import { Payments } from './pages/payments'
import { PaymentPage } from './pages/payment'
import { Refunds } from './pages/refunds'
import { Disputes } from './pages/disputes'
import { Events } from './pages/events'
import { Webhooks } from './pages/webhooks'
import { Developers } from './pages/developers'
import { Operator } from './pages/operator'
import { Invite } from './pages/invite'
import { Team } from './pages/team'
import { AuditLog } from './pages/audit'
import { Account } from './pages/account'

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
    // Without the cookie the answer is 204 (nobody signed in here): a first visit logs no error.
    api<Session | undefined>('/dashboard/session').then((current) => { adopt(current ?? null) }, () => { adopt(null) })
  }, [])

  // An invitation link works signed in or not: accepting it signs its invitee in, in place of whoever was.
  if (route.path[0] === 'invite' && route.path[1] !== undefined) return <Invite token={route.path[1]} current={session} onSignedIn={adopt} />
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
  return (
    <SessionContext.Provider value={session}>
      <Layout session={session} route={route} onSignOut={() => { signOut().catch(reportError) }} onSessionChanged={adopt} />
    </SessionContext.Provider>
  )
}

interface NavItem { path: string, label: string }

function navFor (session: Session): NavItem[] {
  if (session.principal.kind === 'admin') {
    // Payments, refunds, disputes and events answer the admin key 403: the operator's navigation does not offer them.
    return [{ path: '/operator', label: 'Merchants' }]
  }
  return [
    { path: '/overview', label: 'Overview' },
    { path: '/payments', label: 'Payments' },
    { path: '/refunds', label: 'Refunds' },
    { path: '/disputes', label: 'Disputes' },
    { path: '/events', label: 'Events' },
    { path: '/webhooks', label: 'Webhooks' },
    { path: '/developers', label: 'Developers' },
    ...(can(session.principal, 'manageUsers') ? [{ path: '/team', label: 'Team' }] : []),
    { path: '/audit', label: 'Audit log' },
    ...(session.principal.user === undefined ? [] : [{ path: '/account', label: 'Account' }])
  ]
}

function whoOf (session: Session): string {
  const principal = session.principal
  if (principal.kind === 'admin') return 'Operator (admin key)'
  if (principal.user === undefined) return `Merchant ${principal.merchantId} (API key)`
  return `${principal.user.email} (${principal.user.role}) · Merchant ${principal.merchantId}`
}

function Layout ({ session, route, onSignOut, onSessionChanged }: {
  session: Session
  route: Route
  onSignOut: () => void
  onSessionChanged: (session: Session) => void
}) {
  const items = navFor(session)
  const [first = ''] = route.path
  const active = `/${first}`
  const who = whoOf(session)
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
        {/* Keyed by the path: another payment (a pasted link, Back/Forward) is a new page, rendered from its URL alone. */}
        <Page key={route.path.join('/')} session={session} route={route} onSessionChanged={onSessionChanged} />
      </main>
    </>
  )
}

function Page ({ session, route, onSessionChanged }: { session: Session, route: Route, onSessionChanged: (session: Session) => void }) {
  const [first, second, third] = route.path
  const principal = session.principal
  if (principal.kind === 'admin') {
    if (first === 'payments' || first === 'refunds' || first === 'disputes' || first === 'events') return <MerchantsOnly />
    if (first === 'merchants' && second !== undefined && third === 'webhooks') return <Webhooks merchantId={second} operator />
    if (first === 'merchants' && second !== undefined && third === 'developers') return <Developers merchantId={second} route={route} />
    if (first === 'merchants' && second !== undefined && third === 'team') return <Team merchantId={second} />
    if (first === 'merchants' && second !== undefined && third === 'audit') {
      return <AuditLog path={`/merchants/${encodeURIComponent(second)}/audit-log`} here={`/merchants/${second}/audit`} route={route} operator />
    }
    if (first === undefined || first === 'operator') return <Operator route={route} />
    return <NotFound />
  }
  if (first === 'payments' && second !== undefined) return <PaymentPage key={second} id={second} />
  if (first === 'payments') return <Payments route={route} />
  if (first === 'refunds') return <Refunds route={route} />
  if (first === 'disputes') return <Disputes route={route} />
  if (first === 'events') return <Events route={route} />
  if (first === undefined || first === 'overview') return <Overview route={route} />
  if (first === 'webhooks') return <Webhooks merchantId={principal.merchantId} />
  if (first === 'developers') return <Developers merchantId={principal.merchantId} route={route} />
  if (first === 'audit') return <AuditLog path='/api/audit-log' here='/audit' route={route} />
  if (first === 'team') return can(principal, 'manageUsers') ? <Team merchantId={principal.merchantId} /> : <OwnersOnly />
  if (first === 'account' && principal.user !== undefined) return <Account user={principal.user} onSessionChanged={onSessionChanged} />
  return <NotFound />
}

/** An old link to a merchant page opened with the admin key: said plainly, without asking the API for a 403. */
function MerchantsOnly () {
  return (
    <>
      <h1 tabIndex={-1}>Payments</h1>
      <Notice kind='info'>
        Payments, refunds, disputes and events belong to a merchant: the API lets only the merchant's own key read them, and the admin key
        cannot. Sign in with a merchant key to see them; the <a href={href('/operator')}>Merchants</a> page manages merchants.
      </Notice>
    </>
  )
}

/** The Team page opened by someone the API would answer 403: said plainly, without asking. */
function OwnersOnly () {
  return (
    <>
      <h1 tabIndex={-1}>Team</h1>
      <Notice kind='info'>
        Only a user with the owner role, or the operator, invites and manages the people who sign in to this dashboard. An API key
        cannot: sign in with an owner's email and password.
      </Notice>
    </>
  )
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
