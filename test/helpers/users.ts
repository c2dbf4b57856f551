import type { LightMyRequestResponse } from 'fastify'
import { generateSync } from 'otplib'
import type { App } from '../../app/app'
import type { UserRole } from '../../src/domain/users'
import { ADMIN_AUTH } from './app'

export const NO_KEY = { authorization: undefined }
export const TEST_PASSWORD = 'a long test passphrase 2026'

export interface UserSession {
  userId: string
  email: string
  password: string
  /** Cookie + X-CSRF-Token, to spread into inject headers. */
  headers: Record<string, string | undefined>
  cookie: string
}

let counter = 0

export function sessionOf (res: LightMyRequestResponse): { cookie: string, headers: Record<string, string | undefined> } {
  const cookie = res.cookies.find((c) => c.name === 'dashboard_session')?.value
  if (cookie === undefined) throw new Error(`no session cookie (${res.statusCode}: ${res.body})`)
  return { cookie, headers: { ...NO_KEY, cookie: `dashboard_session=${cookie}`, 'x-csrf-token': res.json().csrfToken as string } }
}

/** Invites a user through the API (as the operator), returning the invite token. */
export async function invite (app: App, merchantId: string, role: UserRole, email = `user-${process.pid}-${++counter}@team.example`): Promise<{ userId: string, email: string, token: string }> {
  const res = await app.inject({ method: 'POST', url: `/merchants/${merchantId}/users`, headers: ADMIN_AUTH, payload: { email, role } })
  if (res.statusCode !== 201) throw new Error(`invite answered ${res.statusCode}: ${res.body}`)
  const body = res.json()
  return { userId: body.user.id, email, token: String(body.invite.url).split('/').at(-1) as string }
}

/** A signed-in user of `merchantId` with `role`: invited by the operator, invite accepted (which signs in). */
export async function userWithRole (app: App, merchantId: string, role: UserRole): Promise<UserSession> {
  const { userId, email, token } = await invite(app, merchantId, role)
  const res = await app.inject({ method: 'POST', url: '/dashboard/invite', headers: NO_KEY, payload: { token, password: TEST_PASSWORD } })
  if (res.statusCode !== 201) throw new Error(`accepting the invite answered ${res.statusCode}: ${res.body}`)
  return { userId, email, password: TEST_PASSWORD, ...sessionOf(res) }
}

/** Enrolls the user's authenticator: returns the secret (codes from `totpCode`). */
export async function enrollTotp (app: App, user: UserSession, now = Date.now()): Promise<string> {
  const started = await app.inject({ method: 'POST', url: '/dashboard/totp', headers: user.headers })
  if (started.statusCode !== 201) throw new Error(`enrollment answered ${started.statusCode}: ${started.body}`)
  const secret = started.json().secret as string
  const confirmed = await app.inject({ method: 'POST', url: '/dashboard/totp/confirm', headers: user.headers, payload: { code: totpCode(secret, now) } })
  if (confirmed.statusCode !== 200) throw new Error(`confirmation answered ${confirmed.statusCode}: ${confirmed.body}`)
  return secret
}

export function totpCode (secret: string, now = Date.now()): string {
  return generateSync({ secret, epoch: Math.floor(now / 1000) })
}
