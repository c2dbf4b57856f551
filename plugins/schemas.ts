import fp from 'fastify-plugin'
import { componentSchemas } from '../schemas'
import { connectorCredentialsComponent, connectorTypeComponent } from '../schemas/connector-types'

/**
 * Registers the shared TypeBox schemas (those with an `$id`) once at the root, for routes and the OpenAPI document;
 * the connector types and their credentials from the instance's connector modules.
 */
export default fp(async (app) => {
  app.addSchema(connectorTypeComponent(app.connectorRegistry.types))
  app.addSchema(connectorCredentialsComponent(app.connectorRegistry.modules))
  for (const schema of componentSchemas) app.addSchema(schema)
}, { name: 'schemas', dependencies: ['connectors'], fastify: '5.x' })
