import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { publicOperation } from '../../schemas/auth'

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  checks: Type.Optional(Type.Record(Type.String({ maxLength: 32 }), Type.String({ maxLength: 256 }), { maxProperties: 10 }))
}, { additionalProperties: false })

const health: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/live', {
    config: { rateLimit: false, auth: 'public' },
    schema: {
      tags: ['health'],
      operationId: 'getLiveness',
      summary: 'Liveness probe',
      security: publicOperation,
      description: 'Answers 200 while the process is serving requests.',
      response: { 200: Health }
    }
  }, async () => ({ status: 'ok' as const }))

  app.get('/ready', {
    config: { rateLimit: false, auth: 'public' },
    schema: {
      tags: ['health'],
      operationId: 'getReadiness',
      summary: 'Readiness probe',
      security: publicOperation,
      description: 'Answers 200 when the database answers (and, for SQLite, can write: a full disk is 503), 503 otherwise; ' +
        'a check that does not answer within 2 s is reported as `timeout`. Redis (when configured) is reported in `checks` ' +
        'but does not fail readiness: rate limiting fails open while Redis is away (`degraded`).',
      response: { 200: Health, 503: Health }
    }
  }, async (_request, reply) => {
    const { ready: healthy, checks } = await app.readinessReport()
    return reply.code(healthy ? 200 : 503).send({ status: healthy ? 'ok' : 'unavailable', checks })
  })
}

export default health
