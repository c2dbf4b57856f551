import fp from 'fastify-plugin'
import { answerUnservedMethod } from '../allowed-methods'
import { envelopeErrorHandler, envelopeNotFound } from './envelope'
import { areaOf, type AreaErrors } from './framework-errors'
import { problemNotFound } from './problem'

export interface NotFoundOptions {
  /** The areas of the API (app/app.ts): a path inside a problem area gets a problem document. */
  areas: readonly AreaErrors[]
}

/**
 * The answer to a request no route serves: 204 + Allow for OPTIONS and 405 + Allow for another method
 * on a known path (allowed-methods), otherwise a 404 in the shape of the area the path is in.
 * Unknown routes count against the rate limit too (route guessing is throttled). Requests sent here
 * from a route outside their area (@fastify/cors's `OPTIONS *`) still get their area's 404.
 */
export default fp<NotFoundOptions>(async (app, { areas }) => {
  const notFound = envelopeNotFound('route not found')
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, (request, reply) => {
    const [path = request.url] = request.url.split('?')
    return answerUnservedMethod(request, reply, envelopeErrorHandler) ??
      (areaOf(areas, path)?.errorShape === 'problem' ? problemNotFound(request, reply) : notFound(request, reply))
  })
}, { name: 'not-found', dependencies: ['errors', 'allowed-methods', 'security'], fastify: '5.x' })
