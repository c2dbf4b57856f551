import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { ForbiddenError } from '../../src/domain/errors'
import { sessionIdOf } from '../../src/domain/dashboard-sessions'
import { SESSION_COOKIE } from '../../plugins/auth'
import { DASHBOARD_SESSION_SCHEME, CSRF_SCHEME, publicOperation } from '../../schemas/auth'
import { dashboardResponses, toSessionResource } from '../../schemas/dashboard'
import { jsonResponse, problemResponse } from '../../schemas/common'
import { AcceptInviteBody, ChangePasswordBody, ConfirmTotpBody, TotpEnrollment, TotpState } from '../../schemas/users'
import { cookieOptions } from './cookie'

const userSession = [{ [DASHBOARD_SESSION_SCHEME]: [], [CSRF_SCHEME]: [] }]
const signedInUserOnly = 'A user signed in to the dashboard (the session cookie with its `X-CSRF-Token`); an API key has no password or authenticator.'
const userErrors = {
  401: problemResponse('No live dashboard session, or the `X-CSRF-Token` header is missing or does not match.'),
  403: problemResponse('The session was made with an API key, not by a user.'),
  413: dashboardResponses.tooLarge,
  415: dashboardResponses.unsupportedMediaType,
  429: dashboardResponses.rateLimited,
  500: dashboardResponses.internal,
  503: dashboardResponses.unavailable
}

function userIdOf (request: FastifyRequest): string {
  const user = request.principal?.kind === 'merchant' ? request.principal.user : undefined
  if (user === undefined) throw new ForbiddenError(signedInUserOnly)
  return user.id
}

/** A user's own account (issue 43): accepting the invite, the password, the authenticator app. Problem documents. */
const account: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/invite', {
    config: { auth: 'public', audit: 'user.accept_invite' },
    schema: {
      tags: ['dashboard'],
      operationId: 'acceptInvite',
      summary: 'Accept an invite',
      description: 'Sets the password of an invited user with the token of their invite link (once, within 72 hours) and signs them in: ' +
        'the `dashboard_session` cookie is set as by `POST /dashboard/session`. Their other sessions, if any, end.',
      security: publicOperation,
      body: Type.Ref(AcceptInviteBody),
      response: {
        201: dashboardResponses.signedIn,
        400: problemResponse('The password is too short, too long or common (`errors.password`); also invalid JSON or an empty body.'),
        404: problemResponse('The invite link is unknown, already used or expired: ask an owner for a new invite.'),
        409: problemResponse('The same invite was being accepted at the same moment by another request: one of them won; sign in.'),
        413: dashboardResponses.tooLarge,
        415: dashboardResponses.unsupportedMediaType,
        429: dashboardResponses.rateLimited,
        500: dashboardResponses.internal,
        503: dashboardResponses.unavailable
      }
    }
  }, async (request, reply) => {
    const user = await app.users.acceptInvite(request.body.token, request.body.password)
    const { token, ...session } = await app.dashboardSessions.signInUser(user.id)
    return await reply.code(201).header('location', '/dashboard/session').setCookie(SESSION_COOKIE, token, cookieOptions(request)).send(toSessionResource(session))
  })

  app.post('/totp', {
    config: { auth: 'merchant', roles: 'self', audit: 'user.totp_start' },
    schema: {
      tags: ['dashboard'],
      operationId: 'startTotpEnrollment',
      summary: 'Start two-factor enrollment',
      description: `${signedInUserOnly} Answers a new TOTP secret (RFC 6238: SHA-1, 6 digits, 30 s) for an authenticator app, shown only here ` +
        'and stored encrypted. Signing in does not need a code until `POST /dashboard/totp/confirm` proves the app works. Starting again before that ' +
        'replaces the secret; once two-factor authentication is on it cannot be restarted by a session (409).',
      security: userSession,
      response: {
        201: jsonResponse('The secret, to enter into an authenticator app.', Type.Ref(TotpEnrollment)),
        409: problemResponse('Two-factor authentication is on already: a session may not restart it (that would turn it off until confirmed).'),
        ...userErrors
      }
    }
  }, async (request, reply) => {
    const { secret, uri } = await app.users.startTotp(userIdOf(request))
    return await reply.code(201).header('cache-control', 'no-store').send({ secret, otpauthUrl: uri })
  })

  app.post('/totp/confirm', {
    config: { auth: 'merchant', roles: 'self', audit: 'user.totp_enable' },
    schema: {
      tags: ['dashboard'],
      operationId: 'confirmTotpEnrollment',
      summary: 'Turn two-factor authentication on',
      description: `${signedInUserOnly} The authenticator app's current code proves it holds the secret: from now on signing in needs a code.`,
      security: userSession,
      body: Type.Ref(ConfirmTotpBody),
      response: {
        200: jsonResponse('Two-factor authentication is on.', Type.Ref(TotpState)),
        400: problemResponse('The code does not match (`errors.code`), or enrollment was not started.'),
        ...userErrors
      }
    }
  }, async (request) => {
    const user = await app.users.confirmTotp(userIdOf(request), request.body.code)
    return { twoFactorEnabled: user.totpEnabledAt !== null }
  })

  app.post('/password', {
    config: { auth: 'merchant', roles: 'self', audit: 'user.password_change' },
    schema: {
      tags: ['dashboard'],
      operationId: 'changePassword',
      summary: 'Change your password',
      description: `${signedInUserOnly} Needs the current password; a wrong one counts against the account like a failed sign-in ` +
        '(five lock it for 15 minutes: 429). Every other session of the user ends; this one goes on.',
      security: userSession,
      body: Type.Ref(ChangePasswordBody),
      response: {
        204: { description: 'Changed.', type: 'null' },
        400: problemResponse('The current password is wrong (`errors.currentPassword`), or the new one is too short or common (`errors.newPassword`).'),
        ...userErrors
      }
    }
  }, async (request, reply) => {
    const cookie = request.cookies[SESSION_COOKIE] ?? ''
    await app.users.changePassword(userIdOf(request), request.body.currentPassword, request.body.newPassword, sessionIdOf(cookie))
    return await reply.code(204).send()
  })
}

export default account
