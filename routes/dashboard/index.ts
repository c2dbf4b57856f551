import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { cookieOptions } from './cookie'
import { UnauthenticatedError } from '../../src/domain/errors'
import { CSRF_HEADER, SESSION_COOKIE } from '../../plugins/auth'
import { DASHBOARD_SESSION_SCHEME, publicOperation } from '../../schemas/auth'
import { SignInBody, dashboardResponses, toSessionResource, type SignInBodyType } from '../../schemas/dashboard'
import { ValidationError } from '../../src/domain/errors'
import type { ActiveSession } from '../../src/domain/dashboard-sessions'
import accountRoutes from './account'
import { Type } from '@sinclair/typebox'

function noSession (): UnauthenticatedError {
  return new UnauthenticatedError('No dashboard session, or it has ended: sign in with `POST /dashboard/session`.', false)
}

/**
 * /dashboard/session: the dashboard's sign-in, session recovery and sign-out (problem documents).
 * The routes are public to the access check: sign-in takes the key in its body, and the others read
 * the cookie themselves (GET needs no CSRF header: it changes nothing and returns the token to a reload).
 */
const dashboard: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/session', {
    config: { auth: 'public', audit: 'session.create' },
    schema: {
      tags: ['dashboard'],
      operationId: 'signInToDashboard',
      summary: 'Sign in to the dashboard',
      description: 'Signs in as a user (`email`, `password`, and `totp` once the user enrolled an authenticator app), or exchanges an API key ' +
        '(a merchant key or the admin key: for operators and automation) for a dashboard session: sets the `dashboard_session` cookie ' +
        '(HttpOnly, SameSite=Strict, Secure over https) and returns the session\'s CSRF token, to be sent as `X-CSRF-Token` with every ' +
        'request made with the cookie. The key is not kept in the browser or on the server; the session acts with the key\'s rights ' +
        'and ends when the key is revoked or expires, when the merchant is suspended it reads but does not write (as the key), ' +
        'after DASHBOARD_SESSION_IDLE_SECONDS unused or DASHBOARD_SESSION_MAX_SECONDS after sign-in. A user\'s session acts with their role, and ends ' +
        'when their role or password changes or they are removed. Five failed sign-ins lock the account, and separately the address, for 15 minutes ' +
        '(429); a wrong email and a wrong password get the same answer. Rate-limited like the API.',
      security: publicOperation,
      body: Type.Ref(SignInBody),
      response: {
        201: dashboardResponses.signedIn,
        400: dashboardResponses.signInValidation,
        401: dashboardResponses.signInUnauthorized,
        413: dashboardResponses.tooLarge,
        415: dashboardResponses.unsupportedMediaType,
        429: dashboardResponses.signInLocked,
        500: dashboardResponses.internal,
        503: dashboardResponses.unavailable
      }
    }
  }, async (request, reply) => {
    const { token, ...session } = await signIn(request.body, request.ip)
    return reply.code(201).header('location', '/dashboard/session').setCookie(SESSION_COOKIE, token, cookieOptions(request)).send(toSessionResource(session))
  })

  async function signIn (body: SignInBodyType, ip: string): Promise<ActiveSession & { token: string }> {
    const { apiKey, email, password, totp } = body
    if (apiKey !== undefined && email === undefined && password === undefined && totp === undefined) return await app.dashboardSessions.signIn(apiKey)
    if (apiKey === undefined && email !== undefined && password !== undefined) {
      const user = await app.users.verifySignIn({ email, password, ip, ...(totp === undefined ? {} : { totp }) })
      const session = await app.dashboardSessions.signInUser(user.id)
      await app.users.recordSignIn(user.id)
      return session
    }
    throw new ValidationError({ body: ['Send either `apiKey`, or `email` and `password` (with `totp` once two-factor authentication is enabled).'] })
  }

  await app.register(accountRoutes)

  app.get('/session', {
    config: { auth: 'public' },
    schema: {
      tags: ['dashboard'],
      operationId: 'getDashboardSession',
      summary: 'The current dashboard session',
      description: 'The session the `dashboard_session` cookie names, with its CSRF token (so a reloaded page can recover it), renewed by this request. ' +
        'No `X-CSRF-Token` needed: the answer is readable only by the dashboard\'s own origin (no CORS with credentials). ' +
        'Without the cookie (nobody signed in in this browser) the answer is 204: a first visit is not an error; ' +
        'a cookie naming a session that has ended is 401.',
      security: [{ [DASHBOARD_SESSION_SCHEME]: [] }],
      response: {
        200: dashboardResponses.current,
        204: dashboardResponses.notSignedIn,
        401: dashboardResponses.noSession,
        429: dashboardResponses.rateLimited,
        500: dashboardResponses.internal,
        503: dashboardResponses.unavailable
      }
    }
  }, async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE]
    if (token === undefined) return await reply.code(204).send()
    const session = await app.dashboardSessions.resume(token)
    if (session === undefined) throw noSession()
    return toSessionResource(session)
  })

  app.delete('/session', {
    config: { auth: 'public', audit: 'session.delete' },
    schema: {
      tags: ['dashboard'],
      operationId: 'signOutOfDashboard',
      summary: 'Sign out of the dashboard',
      description: 'Deletes the session on the server (the cookie stops working everywhere at once) and clears the cookie. ' +
        'Needs the cookie and its `X-CSRF-Token`, like every write made with the session.',
      security: [{ [DASHBOARD_SESSION_SCHEME]: [] }],
      response: {
        204: dashboardResponses.signedOut,
        401: dashboardResponses.signOutUnauthorized,
        429: dashboardResponses.rateLimited,
        500: dashboardResponses.internal,
        503: dashboardResponses.unavailable
      }
    }
  }, async (request, reply: FastifyReply) => {
    const authentication = await app.authenticationOf(request)
    const token = request.cookies[SESSION_COOKIE]
    // The session the cookie names, proven by its CSRF header (authenticated through it, not through a bearer key).
    if (token === undefined || typeof request.headers[CSRF_HEADER] !== 'string' || authentication.kind !== 'authenticated' ||
      request.headers.authorization !== undefined) throw noSession()
    await app.dashboardSessions.signOut(token)
    return reply.code(204).clearCookie(SESSION_COOKIE, cookieOptions(request)).send()
  })
}

export default dashboard
