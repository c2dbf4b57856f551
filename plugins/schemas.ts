import fp from 'fastify-plugin'
import { componentSchemas } from '../schemas'

/** Registers the shared TypeBox schemas (those with an `$id`) once at the root, for routes and the OpenAPI document. */
export default fp(async (app) => {
  for (const schema of componentSchemas) app.addSchema(schema)
}, { name: 'schemas', fastify: '5.x' })
