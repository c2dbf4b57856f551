import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  checks: Type.Optional(Type.Record(Type.String(), Type.String()))
}, { additionalProperties: false })

const health: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/live', {
    config: { rateLimit: false },
    schema: {
      tags: ['health'],
      summary: 'Liveness probe',
      description: 'Answers 200 while the process is serving requests.',
      response: { 200: Health }
    }
  }, async () => ({ status: 'ok' as const }))

  app.get('/ready', {
    config: { rateLimit: false },
    schema: {
      tags: ['health'],
      summary: 'Readiness probe',
      description: 'Answers 200 when the database (and Redis, when configured) answer; 503 otherwise.',
      response: { 200: Health, 503: Health }
    }
  }, async (_request, reply) => {
    const checks = await app.readinessChecks()
    const healthy = Object.values(checks).every((state) => state === 'ok')
    return reply.code(healthy ? 200 : 503).send({ status: healthy ? 'ok' : 'unavailable', checks })
  })
}

export default health
