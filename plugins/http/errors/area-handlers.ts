import type { FastifyInstance } from 'fastify'
import { answerUnservedMethod } from '../allowed-methods'
import { envelopeNotFound } from './envelope'
import { errorHandlers, type AreaErrors } from './framework-errors'
import { problemNotFound } from './problem'

/**
 * Sets an area's error handler and not-found handler on the area's own scope, from its row of the area table
 * (app/app.ts), before any of its routes: every error of the area is answered in its shape, and a request no route
 * of it serves gets 204/405 + Allow on a known path (OPTIONS/another method), else 404, in that shape, unless the
 * row names the area's own answer (`notFound`). Unknown routes count against the rate limit (route guessing is throttled).
 */
export function setAreaHandlers (app: FastifyInstance, area: AreaErrors): void {
  const render = errorHandlers[area.errorShape]
  const notFound = area.errorShape === 'problem' ? problemNotFound : envelopeNotFound('route not found')
  app.setErrorHandler(render)
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, (request, reply) => {
    if (area.notFound !== undefined) {
      const [path = request.url] = request.url.split('?')
      return area.notFound(request, reply, path.slice(area.prefix.length))
    }
    return answerUnservedMethod(request, reply, render) ?? notFound(request, reply)
  })
}
