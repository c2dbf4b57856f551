import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { apiDescription } from '../schemas/api-description'
import {
  BEARER_SCHEME, CSRF_SCHEME, DASHBOARD_SESSION_SCHEME, bearerSecurityScheme, csrfSecurityScheme, dashboardSessionSecurityScheme, requiresKey
} from '../schemas/auth'
import { completeContract, quoteTimestamps } from '../schemas/openapi-contract'

/**
 * OpenAPI 3 document built from the route schemas, served at /docs/json and
 * /docs/yaml, with Swagger UI at /docs.
 */
export default fp(async (app) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Product and payment service', version: '1.0.0', description: apiDescription },
      components: {
        securitySchemes: {
          [BEARER_SCHEME]: bearerSecurityScheme,
          [DASHBOARD_SESSION_SCHEME]: dashboardSessionSecurityScheme,
          [CSRF_SCHEME]: csrfSecurityScheme
        }
      },
      // Secure by default: operations state their own `security`; public ones say `[]`.
      security: requiresKey,
      tags: [
        { name: 'products', description: 'Read and replace products. Errors use the simple `{ error, code }` envelope.' },
        { name: 'payments', description: 'Create, read, list and cancel payments. Errors are RFC 9457 problem documents.' },
        { name: 'refunds', description: 'Refund payments, fully or in parts, and read the refunds. Errors are RFC 9457 problem documents.' },
        { name: 'disputes', description: 'Disputes (chargebacks) your PSPs reported on your payments: read them, follow them by the dispute.* events. Errors are RFC 9457 problem documents.' },
        { name: 'merchants', description: 'Create, read and update merchants. Errors are RFC 9457 problem documents.' },
        { name: 'api keys', description: 'A merchant\'s API keys: create (the secret is shown once), list, revoke. Errors are RFC 9457 problem documents.' },
        { name: 'events', description: 'Your events (payment, refund, dispute, merchant and endpoint changes), written with each change; kept 30 days by default. Errors are RFC 9457 problem documents.' },
        { name: 'connectors', description: 'A merchant\'s accounts at PSPs (Stripe, Adyen, simulated), where its payments are routed by priority; credentials are write-only and encrypted at rest. Errors are RFC 9457 problem documents.' },
        { name: 'checkout', description: 'Where shoppers\' browsers reach the service (no API key): the return address PSPs send shoppers back to after authentication (3-D Secure, redirects), and the simulated gateway\'s bank page. Answers are redirects and plain HTML pages.' },
        { name: 'webhooks', description: 'Webhook endpoints: events POSTed to your URL, signed per Standard Webhooks, retried for about 28 h; delivery log, retry, replay. Errors are RFC 9457 problem documents.' },
        { name: 'users', description: 'A merchant\'s people: invite (a one-time link), list, change roles, remove. The operator or a user with role `owner`. Errors are RFC 9457 problem documents.' },
        { name: 'audit log', description: 'Who changed what, when and from where: one entry per change, written with it, never changed or deleted. Errors are RFC 9457 problem documents.' },
        { name: 'dashboard', description: 'The dashboard\'s sessions and a user\'s own account: sign in (email and password, with a TOTP code once enrolled, or an API key), recover the session after a reload, sign out, accept an invite, enroll an authenticator, change the password. Errors are RFC 9457 problem documents.' },
        { name: 'health', description: 'Liveness and readiness probes; `GET /` points to the documentation.' }
      ]
    },
    // HEAD is served wherever GET is: documented too (clients and contract testers call it).
    exposeHeadRoutes: true,
    // Servers, contact, shared response headers and error examples: added once, for every operation.
    transformObject: (documentObject) => completeContract((documentObject as { openapiObject: Record<string, unknown> }).openapiObject,
      [...app.connectorRegistry.problemTypes.values()]),
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`)
    }
  })
  await app.register(async (docs) => {
    // The documentation is public: its routes declare it like every other route.
    docs.addHook('onRoute', (route) => { route.config = { ...route.config, auth: 'public' } })
    // The YAML document, as committed: timestamps quoted (YAML 1.1 parsers would read them as dates).
    docs.addHook('onSend', async (request, _reply, payload) =>
      typeof payload === 'string' && request.url.split('?')[0] === '/docs/yaml' ? quoteTimestamps(payload) : payload)
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: false, persistAuthorization: false }
    })
  })
}, { name: 'docs', dependencies: ['schemas', 'connectors'], fastify: '5.x' })
