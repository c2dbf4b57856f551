import { Type } from '@sinclair/typebox'

/** The liveness and readiness probes' answer. */
export const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')], { description: '`ok`: serving (ready); `unavailable`: not ready.' }),
  checks: Type.Optional(Type.Record(Type.String({ maxLength: 32 }), Type.String({ maxLength: 256 }), {
    maxProperties: 10,
    description: 'Readiness only: each dependency checked and what it answered.'
  }))
}, {
  $id: 'Health',
  title: 'Health',
  additionalProperties: false,
  examples: [{ status: 'ok', checks: { database: 'ok', redis: 'ok' } }, { status: 'unavailable', checks: { database: 'timeout' } }]
})

/** `GET /`: where the documentation is. */
export const ServiceIndex = Type.Object({
  name: Type.String({ maxLength: 100, description: 'The service.', examples: ['product-payment-service'] }),
  docs: Type.String({ maxLength: 100, format: 'uri-reference', description: 'Swagger UI: the API reference, with try-it-out.', examples: ['/docs'] }),
  openapi: Type.String({ maxLength: 100, format: 'uri-reference', description: 'The OpenAPI 3.1 document (JSON; YAML at /docs/yaml).', examples: ['/docs/json'] })
}, { $id: 'ServiceIndex', title: 'Service index', additionalProperties: false, examples: [{ name: 'product-payment-service', docs: '/docs', openapi: '/docs/json' }] })
