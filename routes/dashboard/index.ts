import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { CookieSerializeOptions } from '@fastify/cookie'
import { UnauthenticatedError } from '../../src/domain/errors'
import { CSRF_HEADER, SESSION_COOKIE } from '../../plugins/auth'
import { DASHBOARD_SESSION_SCHEME, publicOperation } from '../../schemas/auth'
import { SignInBody, dashboardResponses, toSessionResource } from '../../schemas/dashboard'
import { Type } from '@sinclair/typebox'

/** Strict, HttpOnly, whole site (the dashboard calls /api and /merchants); Secure whenever the request came over https. */
function cookieOptions (request: FastifyRequest): CookieSerializeOptions {
  return { path: '/', httpOnly: true, sameSite: 'strict', secure: request.protocol === 'https' }
}

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
    config: { auth: 'public' },
    schema: {
      tags: ['dashboard'],
      operationId: 'signInToDashboard',
      summary: 'Sign in to the dashboard',
      description: 'Exchanges an API key (a merchant key or the admin key) for a dashboard session: sets the `dashboard_session` cookie ' +
        '(HttpOnly, SameSite=Strict, Secure over https) and returns the session\'s CSRF token, to be sent as `X-CSRF-Token` with every ' +
        'request made with the cookie. The key is not kept in the browser or on the server; the session acts with the key\'s rights ' +
        'and ends when the key is revoked or expires, when the merchant is suspended it reads but does not write (as the key), ' +
        'after DASHBOARD_SESSION_IDLE_SECONDS unused or DASHBOARD_SESSION_MAX_SECONDS after sign-in. Rate-limited like the API.',
      security: publicOperation,
      body: Type.Ref(SignInBody),
      response: {
        201: dashboardResponses.signedIn,
        400: dashboardResponses.signInValidation,
        401: dashboardResponses.signInUnauthorized,
        413: dashboardResponses.tooLarge,
        415: dashboardResponses.unsupportedMediaType,
        429: dashboardResponses.rateLimited,
        500: dashboardResponses.internal,
        503: dashboardResponses.unavailable
      }
    }
  }, async (request, reply) => {
    const { token, ...session } = await app.dashboardSessions.signIn(request.body.apiKey)
    return reply.code(201).header('location', '/dashboard/session').setCookie(SESSION_COOKIE, token, cookieOptions(request)).send(toSessionResource(session))
  })

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
    config: { auth: 'public' },
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
