import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { apiDescription } from '../schemas/api-description'

/**
 * OpenAPI 3 document built from the route schemas, served at /docs/json and
 * /docs/yaml, with Swagger UI at /docs.
 */
export default fp(async (app) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Product and payment service', version: '1.0.0', description: apiDescription },
      tags: [
        { name: 'products', description: 'Read and replace products. Errors use the simple `{ error, code }` envelope.' },
        { name: 'payments', description: 'Create and read payments. Errors are RFC 9457 problem documents.' },
        { name: 'merchants', description: 'Create, read and update merchants. Errors are RFC 9457 problem documents.' },
        { name: 'health', description: 'Liveness and readiness probes.' }
      ]
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`)
    }
  })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: false }
  })
}, { name: 'docs', dependencies: ['schemas'], fastify: '5.x' })
