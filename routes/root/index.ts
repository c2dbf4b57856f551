import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { publicOperation } from '../../schemas/auth'
import { jsonResponse } from '../../schemas/common'
import { ServiceIndex } from '../../schemas/health'

/** `GET /`: where the documentation is, for a human with a browser or curl and for tools (RFC 8631 links). */
const root: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', {
    config: { auth: 'public' },
    schema: {
      tags: ['health'],
      operationId: 'getServiceIndex',
      summary: 'Where the documentation is',
      description: 'Points to the documentation: `/docs` (Swagger UI) and `/docs/json` (this OpenAPI document), in the body and as ' +
        '`Link` relations `service-doc` and `service-desc` (RFC 8631). Public.',
      security: publicOperation,
      response: {
        200: {
          ...jsonResponse('Links to the documentation.', Type.Ref(ServiceIndex)),
          headers: { link: { type: 'string', maxLength: 100, description: '`</docs>; rel="service-doc", </docs/json>; rel="service-desc"`' } }
        }
      }
    }
  }, async (_request, reply) => {
    reply.header('link', '</docs>; rel="service-doc", </docs/json>; rel="service-desc"')
    return { name: 'product-payment-service', docs: '/docs', openapi: '/docs/json' }
  })
}

export default root
