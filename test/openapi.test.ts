import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parse } from 'yaml'
import { buildTestApp } from './helpers/app'
import { generateOpenApiYaml } from '../scripts/openapi-document'
import { problemTypes } from '../plugins/http/errors/problem'
import { STATUS_TYPES } from '../schemas/problems'
import { connectorRegistry } from '../src/gateway/registry'
import { EVENT_TYPES } from '../src/domain/events'
import { API_VERSIONS } from '../src/domain/api-versions'
import { OpenApiValidator } from './helpers/openapi-validator'

// One generated document for every check here (each generation builds the whole app): the YAML text is shared, each check parses its own copy.
let generatedDocument: Promise<string> | undefined
const generatedYaml = async (): Promise<string> => await (generatedDocument ??= generateOpenApiYaml())

const COMMITTED = resolve(__dirname, '..', 'openapi.yaml')
const STALE = 'openapi.yaml is out of date with the route schemas: run `npm run openapi` and commit openapi.yaml'
const METHODS = ['get', 'head', 'put', 'post', 'patch', 'delete', 'options', 'trace']

interface Response { description?: string, content?: Record<string, { schema?: Record<string, unknown> }> }
interface Operation { tags?: string[], responses?: Record<string, Response>, operationId?: string }
interface Document {
  openapi: string
  tags: Array<{ name: string }>
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown> }
}

function operations (doc: Document): Array<[string, Operation]> {
  const found: Array<[string, Operation]> = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (METHODS.includes(method)) found.push([`${method.toUpperCase()} ${path}`, operation])
    }
  }
  return found
}

function errorStatuses (operation: Operation | undefined): string[] {
  return Object.keys(operation?.responses ?? {}).filter((status) => Number(status) >= 400)
}

t.test('the committed openapi.yaml is what the code generates', async (t) => {
  t.ok(existsSync(COMMITTED), `openapi.yaml exists (if not: ${STALE})`)
  const generated = await generatedYaml()
  const committed = existsSync(COMMITTED) ? readFileSync(COMMITTED, 'utf8') : ''
  // Compare as text, not with t.same, so the failure carries the instruction, not a huge diff only.
  if (committed !== generated) t.fail(STALE, { diff: firstDifference(committed, generated) })
  else t.pass('openapi.yaml is up to date')
})

function firstDifference (committed: string, generated: string): string {
  const a = committed.split('\n')
  const b = generated.split('\n')
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `line ${i + 1}: committed ${JSON.stringify(a[i])}, generated ${JSON.stringify(b[i])}`
  }
  return 'no line differs'
}

t.test('the document is OpenAPI 3 and describes the products area', async (t) => {
  const doc = parse(await generatedYaml()) as Document
  t.match(doc.openapi, /^3\.\d+\.\d+$/)
  t.ok(doc.components.schemas.ErrorEnvelope, 'the error envelope is a named component')
  t.ok(doc.components.schemas.Product, 'the product is a named component')

  const product = doc.paths['/products/{id}']
  t.ok(product, 'the product path is documented')
  t.same(product?.get?.tags, ['products'])
  t.same(product?.put?.tags, ['products'])
  t.equal(product?.get?.operationId, 'getProduct')
  t.equal(product?.put?.operationId, 'putProduct')
  t.same(product?.get?.responses?.['200']?.content?.['application/json']?.schema, { $ref: '#/components/schemas/Product' })
  t.same(errorStatuses(product?.get), ['400', '401', '404', '405', '412', '429', '500', '503'])
  t.same(errorStatuses(product?.put), ['400', '401', '403', '405', '412', '413', '415', '429', '500', '503'])
  for (const method of ['post', 'patch', 'delete', 'options']) {
    t.equal(product?.[method], undefined, `${method}: no pseudo-operation (405 is documented on the real operations)`)
  }
  for (const [name, operation] of operations(doc).filter(([name]) => name.includes('/products'))) {
    for (const status of errorStatuses(operation)) {
      const content = operation.responses?.[status]?.content
      t.same(Object.keys(content ?? {}), ['application/json'], `${name} ${status} is JSON`)
      t.same(content?.['application/json']?.schema, { $ref: '#/components/schemas/ErrorEnvelope' }, `${name} ${status} is an error envelope`)
    }
  }
})

t.test('every operation is tagged with a declared tag and declares its error responses', async (t) => {
  const doc = parse(await generatedYaml()) as Document
  const declaredTags = new Set(doc.tags.map((tag) => tag.name))
  const all = operations(doc)
  t.ok(all.length >= 4, 'operations were found')
  for (const [name, operation] of all) {
    t.ok((operation.tags ?? []).length > 0, `${name} has a tag`)
    for (const tag of operation.tags ?? []) t.ok(declaredTags.has(tag), `${name}: tag ${tag} is declared`)
    // The liveness probe is the one operation with no failure: it answers 200 or not at all.
    if (name === 'GET /health/live') continue
    const errors = errorStatuses(operation)
    t.ok(errors.length > 0, `${name} declares its error responses`)
    for (const status of errors) {
      const response = operation.responses?.[status]
      t.ok(typeof response?.description === 'string' && response.description !== '', `${name} ${status} is described`)
      const schemas = Object.values(response?.content ?? {}).map((media) => media.schema)
      t.ok(schemas.length > 0 && schemas.every((schema) => schema !== undefined), `${name} ${status} has a body schema`)
    }
  }
  t.same(errorStatuses(doc.paths['/health/ready']?.get), ['400', '401', '405', '500', '503'], 'readiness documents its 503 (and what every operation may answer)')
})

t.test('/docs/json and /docs/yaml serve the same document, /docs serves Swagger UI', async (t) => {
  const app = await buildTestApp(t)
  const expected = JSON.parse(JSON.stringify(app.swagger()))

  const json = await app.inject({ method: 'GET', url: '/docs/json' })
  t.equal(json.statusCode, 200)
  t.match(json.headers['content-type'], /^application\/json/)
  t.same(json.json(), expected)

  const yaml = await app.inject({ method: 'GET', url: '/docs/yaml' })
  t.equal(yaml.statusCode, 200)
  t.match(yaml.headers['content-type'], /yaml/)
  t.same(parse(yaml.body), expected)
  t.same(parse(yaml.body), parse(readFileSync(COMMITTED, 'utf8')), '/docs/yaml serves what is committed')
  const unquoted = /^\s*(- |[^\s:#][^:#]*: )\d{4}-\d{2}-\d{2}T/m
  t.notMatch(yaml.body, unquoted, 'timestamps are quoted strings in /docs/yaml (YAML 1.1 parsers would read dates)')
  t.notMatch(readFileSync(COMMITTED, 'utf8'), unquoted, 'and in openapi.yaml')

  const ui = await app.inject({ method: 'GET', url: '/docs' })
  t.equal(ui.statusCode, 200)
  t.match(ui.headers['content-type'], /^text\/html/)
  t.match(ui.body, /swagger-ui/)

  const initializer = await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })
  t.equal(initializer.statusCode, 200)
  t.match(initializer.headers['content-type'], /javascript/)
})

t.test('security: a bearer scheme; every operation states its security, public ones none; 401/403 documented with examples', async (t) => {
  const doc = parse(await generatedYaml()) as Document & {
    components: { securitySchemes?: Record<string, { type: string, scheme: string }> }
    security?: unknown
  }
  t.match(doc.components.securitySchemes?.bearer, { type: 'http', scheme: 'bearer' })
  const keyOrSession = [{ bearer: [] }, { dashboardSession: [], csrfToken: [] }]
  t.same(doc.security, keyOrSession, 'secure by default at the top level: a bearer key, or the dashboard session with its CSRF header')
  t.match(doc.components.securitySchemes, { dashboardSession: { type: 'apiKey', in: 'cookie', name: 'dashboard_session' }, csrfToken: { type: 'apiKey', in: 'header', name: 'X-CSRF-Token' } })
  // The dashboard's own session routes: sign-in takes the key in its body; the others read the cookie.
  const sessionOperations = ['GET /dashboard/session', 'HEAD /dashboard/session', 'DELETE /dashboard/session']
  // A user's own account: only a signed-in user's session (with its CSRF token) has one.
  const userOperations = ['POST /dashboard/totp', 'POST /dashboard/totp/confirm', 'POST /dashboard/password']
  const publicOperations = ['GET /', 'HEAD /', 'GET /products/{id}', 'HEAD /products/{id}', 'GET /health/live', 'HEAD /health/live', 'GET /health/ready', 'HEAD /health/ready',
    // The PSPs' webhooks: Stripe's Stripe-Signature over the raw body, Adyen's HMAC per item, are their authentication.
    'POST /connectors/{connectorId}/stripe-events', 'POST /connectors/{connectorId}/adyen-notifications', 'POST /dashboard/session', 'POST /dashboard/invite',
    'GET /checkout/return/{token}', 'HEAD /checkout/return/{token}', 'POST /checkout/return/{token}',
    'GET /checkout/simulated-bank', 'HEAD /checkout/simulated-bank', 'POST /checkout/simulated-bank']
  for (const [name, operation] of operations(doc) as Array<[string, Operation & { security?: unknown }]>) {
    t.ok(Array.isArray(operation.security), `${name} states its security`)
    const isPublic = publicOperations.includes(name)
    const expected = isPublic ? [] : sessionOperations.includes(name) ? [{ dashboardSession: [] }] : userOperations.includes(name) ? [{ dashboardSession: [], csrfToken: [] }] : keyOrSession
    t.same(operation.security, expected, `${name}: ${isPublic ? 'public' : 'needs a key'}`)
    if (isPublic && !name.includes('/products/')) continue
    const unauthorized = operation.responses?.['401'] as (Response & { headers?: Record<string, unknown>, content?: Record<string, { example?: unknown }> }) | undefined
    t.ok(unauthorized, `${name} documents 401`)
    t.same(unauthorized?.headers?.['WWW-Authenticate'], { $ref: '#/components/headers/WWW-Authenticate' }, `${name} 401 documents WWW-Authenticate`)
    t.ok(Object.values(unauthorized?.content ?? {})[0]?.example, `${name} 401 has an example`)
  }
  for (const name of ['PUT /products/{id}', 'POST /merchants', 'PATCH /merchants/{id}', 'POST /api/payments', 'GET /api/payments/{id}']) {
    const [path, method] = [name.slice(name.indexOf(' ') + 1), name.slice(0, name.indexOf(' ')).toLowerCase()]
    const forbidden = doc.paths[path]?.[method]?.responses?.['403'] as { content?: Record<string, { example?: unknown }> } | undefined
    t.ok(Object.values(forbidden?.content ?? {})[0]?.example, `${name} documents 403 with an example`)
  }
  const keys = new Set((await generatedYaml()).match(/sk_[A-Za-z0-9_-]{8,}/g) ?? [])
  t.same([...keys], ['sk_q3ZxEXAMPLEonlyNOTaREALkeyXXHd8a'], 'the only key in the document is the marked example')
})

interface BodyOperation extends Operation {
  requestBody?: { required?: boolean, content?: Record<string, { schema?: Record<string, unknown> }> }
  responses?: Record<string, Response & { headers?: Record<string, { $ref?: string }> }>
}

t.test('every JSON request and response body is a named component', async (t) => {
  const doc = parse(await generatedYaml()) as Document
  const inline: string[] = []
  for (const [name, operation] of operations(doc) as Array<[string, BodyOperation]>) {
    for (const [mediaType, media] of Object.entries(operation.requestBody?.content ?? {})) {
      if (media.schema?.$ref === undefined) inline.push(`${name} request ${mediaType}`)
    }
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      for (const [mediaType, media] of Object.entries(response.content ?? {})) {
        if (mediaType.endsWith('json') && media.schema?.$ref === undefined) inline.push(`${name} ${status} ${mediaType}`)
      }
    }
  }
  t.same(inline, [], 'no inline JSON body')
  for (const name of ['Event', 'EventList', 'WebhookEndpoint', 'WebhookDelivery', 'ConnectorAccount', 'PaymentList', 'CreatePaymentRequest', 'CreateRefundRequest', 'CaptureRequest', 'MerchantPatch']) {
    t.ok(doc.components.schemas[name], `${name} is a component`)
  }
  const page = doc.components.schemas.EventList as { properties: { data: { items: unknown } } }
  t.same(page.properties.data.items, { $ref: '#/components/schemas/Event' }, 'a page refers to its item component')
})

t.test('headers and bodies the server really sends or accepts', async (t) => {
  const doc = parse(await generatedYaml()) as Document
  const byId = new Map((operations(doc) as Array<[string, BodyOperation]>).map(([, operation]) => [operation.operationId, operation]))
  for (const id of ['createPayment', 'createRefund', 'createMerchant', 'capturePayment']) {
    t.same(byId.get(id)?.responses?.['409']?.headers?.['Retry-After'], { $ref: '#/components/headers/Retry-After-Idempotency-Key-In-Use' }, `${id} 409 declares Retry-After`)
  }
  for (const id of ['getProduct', 'getMerchant']) {
    t.same(byId.get(id)?.responses?.['412']?.headers?.ETag, { $ref: '#/components/headers/ETag' }, `${id} 412 declares ETag`)
  }
  for (const id of ['createRefund', 'capturePayment', 'rotateWebhookSecret', 'createApiKey']) {
    t.equal(byId.get(id)?.requestBody?.required, false, `${id} takes no body as well`)
  }
  t.equal(byId.get('createPayment')?.requestBody?.required, true, 'createPayment needs its body')
  for (const name of ['CreateMerchantRequest', 'MerchantPatch']) {
    const members = Object.keys((doc.components.schemas[name] as { properties: object }).properties)
    t.notOk(members.some((member) => ['id', 'createdAt', 'updatedAt'].includes(member)), `${name} does not offer read-only members`)
  }
  for (const id of ['createApiKey', 'listApiKeys', 'revokeApiKey']) {
    // Another merchant's key is 404; a 403 is only a role's refusal (a support user may not manage keys).
    t.match(byId.get(id)?.responses?.['403']?.description, /role/, `${id}: 403 is a role's refusal`)
    t.ok(byId.get(id)?.responses?.['503'], `${id}: 503 when the database is away`)
  }
})

t.test('problem documents: one component per problem type, in a oneOf discriminated by type', async (t) => {
  const doc = parse(await generatedYaml()) as Document
  const union = doc.components.schemas.ProblemDetails as { oneOf: Array<{ $ref: string }>, discriminator: { propertyName: string, mapping: Record<string, string> } }
  t.equal(union.discriminator.propertyName, 'type')
  const connectorTypes = [...connectorRegistry().problemTypes.values()].map(({ type }) => type)
  t.ok(connectorTypes.length > 0, 'a built-in connector module adds a problem type of its own')
  t.same(Object.keys(union.discriminator.mapping).sort(), [...Object.values(problemTypes), ...connectorTypes, ...STATUS_TYPES].sort(),
    'every problem type of the service and of its connector modules has its component, and every status type maps to Problem')
  for (const [type, target] of Object.entries(union.discriminator.mapping)) {
    const component = doc.components.schemas[target.replace('#/components/schemas/', '')] as { properties: { type: { const?: string, enum?: string[] } } }
    const types = component.properties.type.enum ?? [component.properties.type.const]
    t.ok(types.includes(type), `${target} is ${type}`)
    t.ok(union.oneOf.some((member) => member.$ref === target), `${target} is in the oneOf`)
  }
  const declined = doc.components.schemas.PaymentDeclinedProblem as { required: string[] }
  t.ok(['paymentId', 'declineCode'].every((member) => declined.required.includes(member)), 'payment-declined carries paymentId and declineCode')
  const exceeds = doc.components.schemas.RefundExceedsRemainingProblem as { required: string[] }
  t.ok(exceeds.required.includes('remainingAmount'), 'refund-exceeds-remaining carries remainingAmount')
})

t.test('Event data is typed: a oneOf per kind of resource, discriminated by type', async (t) => {
  const doc = parse(await generatedYaml()) as Document
  const event = doc.components.schemas.Event as { oneOf: Array<{ $ref: string }>, discriminator: { propertyName: string, mapping: Record<string, string> } }
  t.equal(event.discriminator.propertyName, 'type')
  t.same(Object.keys(event.discriminator.mapping).sort(), [...EVENT_TYPES].sort(), 'every event type maps to its variant')
  const data: Record<string, string> = { PaymentEvent: 'Payment', RefundEvent: 'Refund', MerchantEvent: 'Merchant', WebhookEndpointEvent: 'WebhookEndpoint' }
  for (const [variant, resource] of Object.entries(data)) {
    const schema = doc.components.schemas[variant] as { properties: { data: unknown } }
    t.same(schema.properties.data, { $ref: `#/components/schemas/${resource}` }, `${variant}.data is a ${resource}`)
    t.ok(event.oneOf.some((member) => member.$ref === `#/components/schemas/${variant}`), `${variant} is in the oneOf`)
  }
})

t.test('operation ids are identifiers; every success response and request body has an example', async (t) => {
  const doc = parse(await generatedYaml()) as Document
  const schemas = doc.components.schemas as Record<string, { examples?: unknown }>
  const hasExample = (media: { schema?: Record<string, unknown>, example?: unknown, examples?: unknown }): boolean =>
    media.example !== undefined || media.examples !== undefined ||
    schemas[String(media.schema?.$ref ?? '').replace('#/components/schemas/', '')]?.examples !== undefined
  for (const [name, operation] of operations(doc) as Array<[string, BodyOperation]>) {
    t.match(operation.operationId, /^[a-z][A-Za-z]*$/, `${name}: ${String(operation.operationId)}`)
    for (const [mediaType, media] of Object.entries(operation.requestBody?.content ?? {})) {
      t.ok(hasExample(media), `${name} request ${mediaType} has an example`)
    }
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      if (Number(status) >= 400) continue
      for (const [mediaType, media] of Object.entries(response.content ?? {})) t.ok(hasExample(media), `${name} ${status} ${mediaType} has an example`)
    }
  }
})

interface Webhook {
  post: {
    operationId: string
    security: unknown[]
    parameters: Array<{ name: string, in: string, required: boolean, schema: { examples: unknown[] } }>
    requestBody: { required: boolean, content: Record<string, { schema: { oneOf: Array<{ $ref: string }> }, examples: Record<string, { value: { type: string } }> }> }
    responses: Record<string, unknown>
  }
}

t.test('webhooks: one per kind of resource, both versions\' bodies, the Standard Webhooks headers, the receiver\'s answers', async (t) => {
  const doc = parse(await generatedYaml()) as Document & { webhooks: Record<string, Webhook> }
  t.same(Object.keys(doc.webhooks), ['paymentEvent', 'refundEvent', 'disputeEvent', 'merchantEvent', 'webhookEndpointEvent'])
  const validator = new OpenApiValidator(doc as never)
  const covered: string[] = []
  for (const [name, { post }] of Object.entries(doc.webhooks)) {
    const variant = name.charAt(0).toUpperCase() + name.slice(1)
    t.equal(post.operationId, `receive${variant}`)
    t.same(post.security, [], `${name}: no API key; the signature authenticates`)
    t.same(post.parameters.map((p) => [p.name, p.in, p.required]), [['webhook-id', 'header', true], ['webhook-timestamp', 'header', true], ['webhook-signature', 'header', true], ['webhook-api-version', 'header', true]])
    t.same(Object.keys(post.responses).sort(), ['2XX', '410', 'default'])
    const media = post.requestBody.content['application/json']
    t.same(media?.schema.oneOf, [{ $ref: `#/components/schemas/${variant}` }, { $ref: `#/components/schemas/${variant}Body20261101` }], `${name}: the Event resource (2026-11-25) or the earlier body (2026-11-01)`)
    t.same(Object.keys(media?.examples ?? {}), ['current', 'v20261101'])
    const legacy = doc.components.schemas[`${variant}Body20261101`] as { required: string[], properties: { type: { enum: string[] } } }
    t.same(legacy.required, ['type', 'timestamp', 'data', 'sequence'])
    covered.push(...legacy.properties.type.enum)
    const headers = Object.fromEntries(post.parameters.map((p) => [p.name, String(p.schema.examples[0])]))
    for (const [example, { value }] of Object.entries(media?.examples ?? {})) {
      t.same(validator.checkWebhook(name, { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(value) }), [], `${name} ${example}: the example validates`)
    }
    t.not(validator.checkWebhook(name, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(media?.examples.current?.value) }).length, 0, `${name}: the headers are required`)
  }
  t.same(covered.sort(), [...EVENT_TYPES].sort(), 'every event type is delivered by one webhook')
  t.same([...API_VERSIONS], ['2026-11-01', '2026-11-25'], 'a new API version needs its body here (webhook-deliveries.ts)')
})

t.test('servers: the serving origin; the description tells a client outside a browser which base URL to pass', async (t) => {
  const doc = parse(await generatedYaml()) as Document & { servers: Array<{ url: string }>, info: { description: string } }
  t.same(doc.servers.map((server) => server.url), ['/'])
  t.match(doc.info.description, /## Base URL[\s\S]*baseUrl/)
})
