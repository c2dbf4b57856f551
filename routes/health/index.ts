import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Health } from '../../schemas/health'
import { publicOperation } from '../../schemas/auth'

const health: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/live', {
    config: { rateLimit: false, auth: 'public' },
    schema: {
      tags: ['health'],
      operationId: 'getLiveness',
      summary: 'Liveness probe',
      security: publicOperation,
      description: 'Answers 200 while the process is serving requests.',
      response: { 200: Type.Ref(Health) }
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
      response: { 200: Type.Ref(Health), 503: Type.Ref(Health) }
    }
  }, async (_request, reply) => {
    const { ready: healthy, checks } = await app.readinessReport()
    return reply.code(healthy ? 200 : 503).send({ status: healthy ? 'ok' : 'unavailable', checks })
  })
}

export default health
