import fp from 'fastify-plugin'
import { envelopeErrorHandler } from './envelope'
import { throwNotedFieldErrors } from './field-errors'
import { checkHook } from '../checks'

/**
 * How every error is answered: the root error handler (the `{ error, code }` envelope; the payments
 * and merchants areas set their problem+json handler on their own scope), and the domain errors a
 * route noted before its schema ran, thrown once the schema has passed (field-errors.ts).
 * Registered before anything that creates a scope, so every scope inherits the handler.
 * What Node and the router refuse before a request reaches a route (client-error.ts, framework-errors.ts)
 * are server options: app/app.ts takes them from ../server-options.ts.
 */
export default fp(async (app) => {
  app.setErrorHandler(envelopeErrorHandler)
  app.addHook('preHandler', checkHook(throwNotedFieldErrors))
}, { name: 'errors', fastify: '5.x' })
