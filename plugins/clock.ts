import fp from 'fastify-plugin'

/** Milliseconds since the epoch; tests inject a controllable clock. */
export type Clock = () => number

declare module 'fastify' {
  interface FastifyInstance {
    clock: Clock
  }
}

export default fp<{ clock?: Clock }>(async (app, opts) => {
  app.decorate('clock', opts.clock ?? Date.now)
}, { name: 'clock', fastify: '5.x' })
