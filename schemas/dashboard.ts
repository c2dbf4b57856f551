import { Type, type Static } from '@sinclair/typebox'
import type { Principal } from '../src/domain/api-keys'
import type { ActiveSession } from '../src/domain/dashboard-sessions'
import { jsonResponse, problemResponse } from './common'
import { MerchantId } from './merchants'
import { UserRole } from './users'
import { PASSWORD_MAX_LENGTH } from '../src/domain/users'

export const DASHBOARD_PATH = '/dashboard'

const exampleMerchantId = '019aa9e8-77d0-7b3f-a2c4-5e91d0f3b6c2'
const exampleCsrf = 'kX0c1Jb6w0l5m1WnKk7w2o2QyYV8Jm1c4oQ9t3s2u1E'

export const SignInBody = Type.Object({
  apiKey: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 512,
    description: 'Signing in with a key: a merchant API key (`sk_…`) or the admin key. Exchanged for the session; the service keeps neither it nor the cookie token, only their hashes.',
    examples: ['sk_q3ZxEXAMPLEonlyNOTaREALkeyXXHd8a']
  })),
  email: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'Signing in as a user (with `password`): the email the user was invited with.', examples: ['ana@shop.example'] })),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH, description: 'The user\'s password (with `email`).' })),
  totp: Type.Optional(Type.String({ minLength: 1, maxLength: 16, description: 'The 6-digit code of the user\'s authenticator app, once they enrolled one.', examples: ['492039'] }))
}, {
  $id: 'DashboardSignIn',
  title: 'Dashboard sign-in',
  description: 'Either `apiKey`, or `email` and `password` (and `totp` when the user enrolled two-factor authentication).',
  additionalProperties: false,
  examples: [{ apiKey: 'sk_q3ZxEXAMPLEonlyNOTaREALkeyXXHd8a' }, { email: 'ana@shop.example', password: 'correct horse battery staple', totp: '492039' }]
})
export type SignInBodyType = Static<typeof SignInBody>

const SessionPrincipal = Type.Union([
  Type.Object({ kind: Type.Literal('admin', { description: 'The operator (admin key).' }) }, { additionalProperties: false }),
  Type.Object({
    kind: Type.Literal('merchant', { description: 'A merchant (its own API key, or one of its users).' }),
    merchantId: MerchantId,
    user: Type.Optional(Type.Object({
      id: Type.String({ format: 'uuid', maxLength: 36 }),
      email: Type.String({ maxLength: 254, examples: ['ana@shop.example'] }),
      role: UserRole,
      twoFactorEnabled: Type.Boolean()
    }, { additionalProperties: false, description: 'The user signed in (absent for a session made with an API key).' }))
  }, { additionalProperties: false })
], { description: 'Who the session acts as: the admin, or one merchant (through an API key or a named user).' })

export const DashboardSession = Type.Object({
  principal: SessionPrincipal,
  csrfToken: Type.String({
    maxLength: 64,
    pattern: '^[A-Za-z0-9_-]+$',
    description: 'Send it as `X-CSRF-Token` with every request made with the session cookie: without it the cookie is ignored. ' +
      'Keep it in memory only; `GET /dashboard/session` returns it again after a reload.',
    examples: [exampleCsrf]
  }),
  expiresAt: Type.String({
    format: 'date-time',
    maxLength: 64,
    description: 'When the session ends if not used again: the idle timeout (DASHBOARD_SESSION_IDLE_SECONDS, 30 min) from its last use, ' +
      'never later than the absolute lifetime (DASHBOARD_SESSION_MAX_SECONDS, 12 h) from sign-in.',
    examples: ['2026-11-25T10:30:00.000Z']
  })
}, {
  $id: 'DashboardSession',
  title: 'Dashboard session',
  additionalProperties: false,
  examples: [{ principal: { kind: 'merchant', merchantId: exampleMerchantId }, csrfToken: exampleCsrf, expiresAt: '2026-11-25T10:30:00.000Z' }]
})
export type DashboardSessionType = Static<typeof DashboardSession>

function principalResource (principal: Principal): DashboardSessionType['principal'] {
  if (principal.kind === 'admin') return { kind: 'admin' }
  const user = principal.user
  return { kind: 'merchant', merchantId: principal.merchantId, ...(user === undefined ? {} : { user: { ...user } }) }
}

export function toSessionResource (session: ActiveSession): DashboardSessionType {
  return { principal: principalResource(session.principal), csrfToken: session.csrfToken, expiresAt: session.expiresAt }
}

const setCookie = {
  'set-cookie': {
    type: 'string',
    maxLength: 256,
    description: '`dashboard_session=<opaque token>; Path=/; HttpOnly; SameSite=Strict`, plus `Secure` when the request came over https ' +
      '(directly, or through a proxy trusted by TRUST_PROXY). No Max-Age: the cookie ends with the browser session, the session itself on the server.'
  }
}

export const dashboardResponses = {
  signedIn: { ...jsonResponse('Signed in: the session cookie is set and the CSRF token returned.', Type.Ref(DashboardSession)), headers: setCookie },
  current: jsonResponse('The live session (renewed by this request).', Type.Ref(DashboardSession)),
  signedOut: {
    description: 'Signed out: the session is deleted on the server and the cookie cleared.',
    type: 'null',
    headers: { 'set-cookie': { type: 'string', maxLength: 256, description: 'Clears `dashboard_session` (an expiry in the past).' } }
  },
  signInValidation: problemResponse('The body is not `{ "apiKey": "…" }`, is not JSON, or is empty.'),
  signInUnauthorized: problemResponse('The API key is malformed, unknown, revoked or expired; or the email or password is wrong (the answer never ' +
    'says which, nor whether the email exists); or the user enrolled two-factor authentication and `totp` is missing or wrong (`type` urn:problem-type:totp-required).'),
  signInLocked: problemResponse('Five failed sign-ins for this account, or from this address, lock it for 15 minutes (`type` urn:problem-type:sign-in-locked, ' +
    'with Retry-After); also too many requests from this client.'),
  notSignedIn: { description: 'No `dashboard_session` cookie: nobody is signed in in this browser (sign in with `POST /dashboard/session`).', type: 'null' },
  noSession: problemResponse('The session cookie names a session that has ended (signed out, idle or absolute expiry, its key revoked or expired, ' +
    'ADMIN_API_KEY changed). Sign in again.'),
  signOutUnauthorized: problemResponse('No live session, or the `X-CSRF-Token` header is missing or does not match the session\'s.'),
  tooLarge: problemResponse('The body is larger than BODY_LIMIT.'),
  unsupportedMediaType: problemResponse('The body is not application/json.'),
  rateLimited: problemResponse('Too many requests from this client; see Retry-After.'),
  internal: problemResponse('Unexpected failure; the body carries only a generic title and the trace id.'),
  unavailable: problemResponse('The database is unavailable; nothing was changed. `Retry-After` says when to retry.')
}
