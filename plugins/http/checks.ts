import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

/**
 * A request check (returns, or throws the refusal) as a callback hook for onRequest, preValidation or
 * preHandler. Every request runs these hooks: an async one costs a promise and a microtask each, which
 * the payment and product paths measurably pay (bench/RESULTS.md, 2026-12-08).
 */
export function checkHook (check: (request: FastifyRequest) => void) {
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    try {
      check(request)
    } catch (err) {
      done(err as Error)
      return
    }
    done()
  }
}
