import type { FastifyRequest } from 'fastify'
import type { CookieSerializeOptions } from '@fastify/cookie'

/** Strict, HttpOnly, whole site (the dashboard calls /api and /merchants); Secure whenever the request came over https. */
export function cookieOptions (request: FastifyRequest): CookieSerializeOptions {
  return { path: '/', httpOnly: true, sameSite: 'strict', secure: request.protocol === 'https' }
}
