import fp from 'fastify-plugin'
import { componentSchemas } from '../schemas'
import { connectorCredentialsComponent, connectorTypeComponent } from '../schemas/connector-types'

/**
 * Registers the shared TypeBox schemas (those with an `$id`) once at the root, for routes and the OpenAPI document;
 * the connector types, their credentials and their webhooks' bodies and answers from the instance's connector modules.
 */
export default fp(async (app) => {
  app.addSchema(connectorTypeComponent(app.connectorRegistry.types))
  app.addSchema(connectorCredentialsComponent(app.connectorRegistry.modules))
  for (const schema of componentSchemas) app.addSchema(schema)
  for (const { inbound } of app.connectorRegistry.modules) {
    // A webhook's body and answer are components when they have an $id (the routes refer to them).
    const schemas = inbound === undefined ? [] : [inbound.webhook.body, inbound.webhook.answer.schema]
    for (const schema of schemas) if (typeof schema.$id === 'string') app.addSchema(schema)
  }
}, { name: 'schemas', dependencies: ['connectors'], fastify: '5.x' })
