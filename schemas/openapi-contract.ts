/**
 * The last pass over the generated OpenAPI document: what every operation shares and the route schemas
 * would otherwise repeat — the `servers` entry, contact and license, the response headers every answer
 * carries (X-Request-Id, Cache-Control, the IETF rate-limit fields, CORS), the headers some statuses
 * carry (Location on 201, Retry-After on 429/503, Idempotent-Replayed on replayable answers, ETag where
 * served) and a realistic example for every error response that does not state its own.
 *
 * Runs as @fastify/swagger's `transformObject`, so /docs/json, /docs/yaml and openapi.yaml all get it.
 */
import { problemComponents, type ConnectorProblemComponent } from './problems'
import { typedEventComponents } from './events'
import { webhookDocument } from './webhook-deliveries'

import { API_VERSIONS, LATEST_API_VERSION } from '../src/domain/api-versions'

/** X-Request-Id values the service honours (plugins/request-id.ts). */
export const REQUEST_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$'
/** The name of the one rate-limit policy, in `RateLimit` and `RateLimit-Policy`. */
export const RATE_LIMIT_POLICY_NAME = 'default'

const STATUS_CODES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable'
}

type Json = Record<string, unknown>

interface Operation {
  operationId?: string
  tags?: string[]
  parameters?: Array<Json & { in?: string, name?: string, schema?: Json }>
  requestBody?: Json & { required?: boolean, content?: Record<string, Json> }
  responses?: Record<string, Json & { headers?: Record<string, unknown>, content?: Record<string, Json> }>
}

export const CONTACT = { name: 'Payments platform team', email: 'payments-api@example.com', url: 'https://example.com/payments-api' }
export const LICENSE = { name: 'Proprietary: for the service\'s customers only', url: 'https://example.com/payments-api/terms' }

const TRACE_ID = '0f8fad5b-d9cb-469f-a165-70867728950e'
const PAYMENT_ID = '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f'
const REFUND_ID = '019aa9f4-1e2d-7c3b-8a49-5d6e7f8091a2'
const MERCHANT_ID = '019aa9e8-77d0-7b3f-a2c4-5e91d0f3b6c2'
const KEY_ID = '019aa9e9-0a1b-7c2d-9e3f-4a5b6c7d8e9f'

const versionSchema = { type: 'string', enum: [...API_VERSIONS], examples: [LATEST_API_VERSION] }

/** The one `Api-Version` request parameter every operation shares (components.parameters). */
export const apiVersionParameter: Json = {
  name: 'Api-Version',
  in: 'header',
  required: false,
  description: `The API version to answer in (date-named; supported: ${API_VERSIONS.join(', ')}). Without it, a merchant's requests are ` +
    'answered in the merchant\'s pinned `apiVersion`, others in the current version. An unknown version is 400 listing the supported ones.',
  schema: versionSchema
}

/** Reusable response headers (components.headers). */
export const responseHeaders: Record<string, Json> = {
  'Api-Version': {
    description: 'The API version this answer was rendered in (the `Api-Version` sent, else the merchant\'s pinned version, else the current one). ' +
      'An Idempotency-Key replay (`Idempotent-Replayed: true`) is the stored answer: it names the version that answer was rendered in, whatever the retry asked for.',
    required: true,
    schema: versionSchema
  },
  Deprecation: {
    description: 'RFC 9745: present when the answer\'s API version is being retired; `@` + the epoch seconds since when it is deprecated. Upgrade before `Sunset`.',
    schema: { type: 'string', maxLength: 24, pattern: '^@\\d+$', examples: ['@1795564800'] }
  },
  Sunset: {
    description: 'RFC 8594: with `Deprecation`, the HTTP date after which this API version is no longer served.',
    schema: { type: 'string', maxLength: 64, examples: ['Tue, 25 May 2027 00:00:00 GMT'] }
  },
  'X-Request-Id': {
    description: 'The request id: yours when it is 1-128 characters of `A-Z a-z 0-9 . _ : -`, else a new UUID. Quote it to the operator.',
    required: true,
    schema: { type: 'string', maxLength: 128, pattern: REQUEST_ID_PATTERN, examples: [TRACE_ID] }
  },
  'Cache-Control': {
    description: '`no-store` on every answer except a product read, which is `public, max-age=0, must-revalidate`: caches may keep ' +
      'the catalogue but must revalidate it with its ETag every time (a cheap 304).',
    required: true,
    schema: { type: 'string', enum: ['no-store', 'public, max-age=0, must-revalidate'] }
  },
  RateLimit: {
    description: 'IETF draft-ietf-httpapi-ratelimit-headers: the quota left in the current window, as a structured field: ' +
      `\`"${RATE_LIMIT_POLICY_NAME}";r=<remaining>;t=<seconds until the window resets>\`. ` +
      '(`X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` carry the same numbers for older clients.) ' +
      'On every answer the rate limit counted; a request refused before it is counted (a wrong media type, a missing or unknown key) has none.',
    schema: { type: 'string', maxLength: 100, pattern: '^"[a-z]+";r=\\d+;t=\\d+$', examples: [`"${RATE_LIMIT_POLICY_NAME}";r=599;t=42`] }
  },
  'RateLimit-Policy': {
    description: 'The quota policy: `q` requests per `w` seconds, per API key (anonymous requests: per client address). ' +
      'Sent with `RateLimit`.',
    schema: { type: 'string', maxLength: 100, pattern: '^"[a-z]+";q=\\d+;w=\\d+$', examples: [`"${RATE_LIMIT_POLICY_NAME}";q=600;w=60`] }
  },
  'Access-Control-Allow-Origin': {
    description: 'CORS: present only when the request\'s `Origin` is in the operator\'s `CORS_ORIGINS` allow-list (default: empty, ' +
      'no cross-origin browser access). Echoes that origin.',
    schema: { type: 'string', maxLength: 2048, format: 'uri', examples: ['https://dashboard.example.com'] }
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86400, examples: [5] }
  },
  Location: {
    description: 'The URL path of the created resource.',
    required: true,
    schema: { type: 'string', format: 'uri-reference', maxLength: 256, examples: [`/api/payments/${PAYMENT_ID}`] }
  },
  'Idempotent-Replayed': {
    description: 'Present (`true`) when this answer is the replay of an earlier request with the same Idempotency-Key and body.',
    schema: { type: 'string', enum: ['true'] }
  },
  ETag: {
    description: 'Strong entity tag of the representation (RFC 9110 §8.8.3); send it back in If-Match / If-None-Match.',
    required: true,
    schema: { type: 'string', maxLength: 100, pattern: '^"[\\x21\\x23-\\x7E]*"$', examples: ['"3"'] }
  },
  'WWW-Authenticate': {
    description: 'RFC 6750 challenge: `Bearer realm="product-payment-service"`, with `error="invalid_token"` when a key was sent but ' +
      'is malformed, unknown, revoked or expired.',
    required: true,
    schema: { type: 'string', maxLength: 300, examples: ['Bearer realm="product-payment-service"'] }
  },
  Allow: {
    description: 'The methods this resource supports (RFC 9110 §10.2.1).',
    required: true,
    schema: { type: 'string', maxLength: 100, pattern: '^[A-Z]+(, [A-Z]+)*$', examples: ['GET, HEAD, PUT, OPTIONS'] }
  },
  'Accept-Patch': {
    description: 'The media types PATCH accepts (RFC 5789).',
    required: true,
    schema: { type: 'string', enum: ['application/merge-patch+json, application/json'] }
  }
}

/** Retry-After on a 409 that may be `idempotency-key-in-use` (and is absent on the other 409s). */
const IN_USE_RETRY_AFTER = 'Retry-After-Idempotency-Key-In-Use'
responseHeaders[IN_USE_RETRY_AFTER] = {
  description: 'Present when the problem `type` is urn:problem-type:idempotency-key-in-use (the first request with this key is ' +
    'still being processed): seconds to wait before repeating the request with the same key. Absent on the other conflicts.',
  schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86400, examples: [1] }
}

/** Operations that answer a 409 `idempotency-key-in-use` (those handled by the idempotency plugin). */
/** Every POST that takes Idempotency-Key (each documents the header): its 409 names the key's two conflicts, with Retry-After. */
function takesIdempotencyKey (operation: Operation): boolean {
  return (operation.parameters ?? []).some((parameter) => parameter.in === 'header' && parameter.name?.toLowerCase() === 'idempotency-key')
}
const IDEMPOTENCY_CONFLICTS = 'The Idempotency-Key was reused with a different body (urn:problem-type:idempotency-key-reused) or is still in flight ' +
  '(urn:problem-type:idempotency-key-in-use, with Retry-After).'

/** The 409 of an operation that takes Idempotency-Key: added, or its description completed, when the route did not say it. */
function documentIdempotencyConflicts (operation: Operation, template: string): void {
  const responses = (operation.responses ??= {})
  const conflict = responses['409']
  if (conflict === undefined) {
    const example = {
      type: 'urn:problem-type:idempotency-key-reused',
      title: 'The idempotency key was reused with a different request.',
      status: 409,
      detail: 'This Idempotency-Key was already used with a different request body; use a new key for a new request.',
      instance: examplePath(template),
      traceId: TRACE_ID
    }
    responses['409'] = { description: IDEMPOTENCY_CONFLICTS, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' }, example } } }
  } else if (typeof conflict.description === 'string' && !/idempotency-key/i.test(conflict.description)) {
    conflict.description = `${conflict.description} ${IDEMPOTENCY_CONFLICTS}`
  }
}

/** Operations whose route takes a missing body as `{}` (a full refund, a full capture, all defaults). */
const OPTIONAL_BODY_OPERATIONS = ['createRefund', 'capturePayment', 'rotateWebhookSecret', 'createApiKey']

/** Reads of a resource with an ETag: the tag comes with the 412 of a failed If-Match too. */
const ETAG_READS = ['getProduct', 'getProductHead', 'getMerchant', 'getMerchantHead']

const ref = (name: string): Json => ({ $ref: `#/components/headers/${name}` })

/** Lower-case names the route schemas use → the component that replaces them. */
const canonical: Record<string, string> = {
  location: 'Location',
  etag: 'ETag',
  'www-authenticate': 'WWW-Authenticate',
  'cache-control': 'Cache-Control',
  'accept-patch': 'Accept-Patch',
  'retry-after': 'Retry-After',
  allow: 'Allow'
}

const problemTypeOf: Record<number, string> = {
  400: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.1',
  401: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.2',
  403: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4',
  404: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.5',
  405: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6',
  409: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.10',
  412: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.13',
  413: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.14',
  415: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.16',
  429: 'https://www.rfc-editor.org/rfc/rfc6585#section-4',
  500: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.6.1',
  503: 'https://www.rfc-editor.org/rfc/rfc9110#section-15.6.4'
}

/** Validation errors an operation typically reports (Ajv reports every field at once). */
const validationErrors: Record<string, Record<string, string[]>> = {
  createPayment: {
    amount: ['The amount field must be positive (greater than 0).'],
    currency: ['The currency field must be an active ISO 4217 code in upper case, such as USD or EUR.']
  },
  createRefund: { amount: ['The amount has more decimal places than USD allows (2).'] },
  createMerchant: {
    email: ['The email field must be an email address such as name@example.com.'],
    country: ['The country field must be an ISO 3166-1 alpha-2 code in upper case, such as US or DE.']
  },
  patchMerchant: { name: ['The name field must not be null: it is required.'] },
  createApiKey: { expiresAt: ['The expiresAt field must be in the future.'] },
  putProduct: { price: ['The price field must be at least 0.'] }
}

/** Problem documents specific to an operation and status; the rest are built from the status. */
const specificProblems: Record<string, Json> = {
  'createPayment 402': {
    type: 'urn:problem-type:payment-declined',
    title: 'The payment was declined.',
    detail: 'The payment was declined by the card issuer (card_declined).',
    paymentId: PAYMENT_ID,
    declineCode: 'card_declined'
  },
  'createPayment 409': {
    type: 'urn:problem-type:idempotency-key-reused',
    title: 'The idempotency key was reused with a different request.',
    detail: 'This Idempotency-Key was already used with a different request body; use a new key for a new request.'
  },
  'createPayment 503': {
    type: 'urn:problem-type:gateway-unavailable',
    title: 'The payment gateway is unavailable.',
    detail: 'The payment gateway did not answer; the payment is pending. Retry with the same Idempotency-Key.',
    paymentId: PAYMENT_ID
  },
  'createRefund 402': {
    type: 'urn:problem-type:refund-failed',
    title: 'The refund was refused.',
    detail: 'The gateway refused the refund (refund_declined).',
    paymentId: PAYMENT_ID,
    refundId: REFUND_ID,
    failureCode: 'refund_declined'
  },
  'createRefund 409': {
    type: 'urn:problem-type:refund-exceeds-remaining',
    title: 'The refund exceeds the refundable amount.',
    detail: 'A refund of 20 USD exceeds what remains refundable on this payment (7.5 USD).',
    paymentId: PAYMENT_ID,
    requestedAmount: 20,
    remainingAmount: 7.5
  },
  'createRefund 503': {
    type: 'urn:problem-type:gateway-unavailable',
    title: 'The payment gateway is unavailable.',
    detail: 'The gateway did not confirm the refund; it is pending. Retry with the same Idempotency-Key.',
    refundId: REFUND_ID
  },
  'retryWebhookDelivery 409': {
    type: 'urn:problem-type:webhook-delivery-in-flight',
    title: 'The webhook delivery is being attempted.',
    detail: 'An attempt of this delivery is being sent right now; retry once it is recorded (see Retry-After).'
  },
  'cancelPayment 409': {
    type: 'urn:problem-type:payment-not-cancelable',
    title: 'The payment cannot be canceled.',
    detail: 'Only a pending payment can be canceled; this one is succeeded.',
    paymentId: PAYMENT_ID,
    paymentStatus: 'succeeded'
  },
  'createMerchant 409': {
    type: 'urn:problem-type:merchant-email-taken',
    title: 'Conflict',
    detail: 'Another merchant already uses the email ops@bluebottle.example.'
  },
  'patchMerchant 409': {
    type: 'urn:problem-type:merchant-email-taken',
    title: 'Conflict',
    detail: 'Another merchant already uses the email ops@bluebottle.example.'
  },
  'patchMerchant 412': {
    detail: 'If-Match does not match the merchant\'s current ETag "4": it changed since you read it. Read it again and retry.'
  }
}

const genericDetail: Record<number, string> = {
  400: 'The request body is not valid JSON.',
  403: 'The key is valid but may not do this.',
  404: 'No resource has this id.',
  405: 'method not allowed',
  409: 'The request conflicts with the resource\'s current state.',
  412: 'The precondition in If-Match or If-None-Match failed; nothing was changed.',
  413: 'request body is too large',
  415: 'unsupported media type; send application/json',
  429: 'too many requests; retry after 42 seconds',
  503: 'The database is temporarily unavailable; retry after Retry-After.'
}

const envelopeCodes: Record<number, [string, string]> = {
  400: ['The price field must be at least 0.', 'VALIDATION'],
  401: ['This operation needs an API key: send `Authorization: Bearer <key>`.', 'UNAUTHENTICATED'],
  403: ['This operation needs the admin key; a merchant API key may not call it.', 'FORBIDDEN'],
  404: ['product not found', 'NOT_FOUND'],
  405: ['method not allowed', 'METHOD_NOT_ALLOWED'],
  412: ['If-Match does not match the product\'s current ETag.', 'PRECONDITION_FAILED'],
  413: ['request body is too large', 'PAYLOAD_TOO_LARGE'],
  415: ['unsupported media type; send application/json', 'UNSUPPORTED_MEDIA_TYPE'],
  429: ['too many requests; retry after 42 seconds', 'RATE_LIMITED'],
  500: ['internal server error', 'INTERNAL'],
  503: ['The database is temporarily unavailable; retry after Retry-After.', 'STORE_UNAVAILABLE']
}

/** A path template with its parameters replaced by example values. */
export function examplePath (template: string): string {
  return template
    .replace('/merchants/{id}', `/merchants/${MERCHANT_ID}`)
    .replace('{refundId}', REFUND_ID)
    .replace('{keyId}', KEY_ID)
    .replace('/products/{id}', '/products/sku-123')
    .replace('{id}', PAYMENT_ID)
}

function problemExample (operation: Operation, status: number, template: string): Json {
  const specific = specificProblems[`${operation.operationId ?? ''} ${status}`] ?? {}
  const problem: Json = {
    type: problemTypeOf[status] ?? 'about:blank',
    title: status === 400 ? 'One or more validation errors occurred.' : status === 500 ? 'An unexpected error occurred.' : STATUS_CODES[status],
    status
  }
  if (status === 400) problem.errors = validationErrors[operation.operationId ?? ''] ?? { limit: ['The limit field must be at most 100.'] }
  else if (status !== 500) problem.detail = genericDetail[status] ?? STATUS_CODES[status]
  Object.assign(problem, specific)
  // Keys in the usual order: instance and traceId after the detail, extensions last.
  const { type, title, detail, errors, ...extensions } = problem
  return {
    type,
    title,
    status,
    ...(detail !== undefined ? { detail } : {}),
    instance: examplePath(template),
    traceId: TRACE_ID,
    ...(errors !== undefined ? { errors } : {}),
    ...Object.fromEntries(Object.entries(extensions).filter(([key]) => key !== 'status'))
  }
}

function envelopeExample (status: number): Json {
  const [error, code] = envelopeCodes[status] ?? [STATUS_CODES[status] ?? 'error', 'BAD_REQUEST']
  return { error, code }
}

/** Response headers an answer with `status` to `operation` carries. */
function headersFor (operation: Operation, method: string, template: string, status: number): string[] {
  const names = ['X-Request-Id', 'Cache-Control', 'Api-Version', 'Deprecation', 'Sunset']
  names.push('Access-Control-Allow-Origin')
  if (!template.startsWith('/health')) names.push('RateLimit', 'RateLimit-Policy')
  if ((status === 429 || status === 503) && !template.startsWith('/health')) names.push('Retry-After')
  if (status === 201 && !['createApiKey', 'startTotpEnrollment'].includes(operation.operationId ?? '')) names.push('Location')
  if (status === 405) names.push('Allow')
  if (status === 401) names.push('WWW-Authenticate')
  const replayable = ['createPayment', 'createRefund', 'createMerchant'].includes(operation.operationId ?? '')
  if (replayable && (status === 201 || status === 402)) names.push('Idempotent-Replayed')
  if (template === '/products/{id}' && (method === 'get' || method === 'head' || method === 'put') && (status === 200 || status === 304)) names.push('ETag')
  if (status === 412 && ETAG_READS.includes(operation.operationId ?? '')) names.push('ETag')
  return names
}

function isErrorSchema (schema: unknown): boolean {
  const target = (schema as { $ref?: unknown } | undefined)?.$ref
  return target === '#/components/schemas/ProblemDetails' || target === '#/components/schemas/ErrorEnvelope'
}

/**
 * Answers every operation can give, whatever it does, added where the route schema does not state them:
 * 400 (a request with two Host headers, or none), 401 (a key was sent and is not valid: refused even on
 * public operations), 405 (another method on this path: documented on the real operations, not on
 * pseudo-operations Swagger UI would offer to try), 429 (all but the health probes are rate limited)
 * and 500. In the area's error shape, taken from the operation's other errors (the envelope otherwise).
 */
function addCommonResponses (operation: Operation, template: string): void {
  const responses = (operation.responses ??= {})
  const shape = Object.values(responses).flatMap((response) => Object.entries(response.content ?? {}))
    .find(([, media]) => isErrorSchema(media.schema))
  const [mediaType, media] = shape ?? ['application/json', { schema: { $ref: '#/components/schemas/ErrorEnvelope' } }]
  const common: Record<string, string> = {
    400: 'The request is malformed: two Host headers (or none), a body that is not valid UTF-8 JSON.',
    401: 'An API key was sent but is malformed, unknown, revoked or expired: refused even where no key is needed. `WWW-Authenticate` says why (RFC 6750).',
    405: 'Another method on this path (e.g. DELETE where only GET is served) is 405 with `Allow` listing the methods served; ' +
      'OPTIONS on any resource path answers 204 with `Allow` (and `Accept-Patch` where PATCH is served).',
    500: 'Unexpected failure; the answer carries no details (quote X-Request-Id to the operator).'
  }
  if (!template.startsWith('/health')) common[429] = 'Too many requests from this client; retry after `Retry-After` seconds (see `RateLimit`).'
  for (const [status, description] of Object.entries(common)) {
    if (responses[status] !== undefined) continue
    responses[status] = { description, content: { [mediaType]: { schema: media.schema } } }
  }
}

/**
 * Request body components lose their `readOnly` members (accepted by the validator to answer a precise 400, never
 * meant to be sent): a generated client then does not offer them.
 */
function omitReadOnlyMembersOfRequestBodies (doc: Json & { components?: Json, paths?: Record<string, Record<string, Operation>> }): void {
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, { properties?: Record<string, Json>, required?: string[] }>
  const bodies = Object.values(doc.paths ?? {}).flatMap((item) => Object.values(item))
    .flatMap((operation) => Object.values(operation.requestBody?.content ?? {}))
    .map((media) => String((media.schema as Json | undefined)?.$ref ?? '').replace('#/components/schemas/', ''))
  for (const name of new Set(bodies)) {
    const schema = schemas[name]
    if (schema?.properties === undefined) continue
    const readOnly = Object.keys(schema.properties).filter((member) => schema.properties?.[member]?.readOnly === true)
    if (readOnly.length === 0) continue
    // A copy: the document's schema objects may be the very ones the routes validate with.
    schemas[name] = {
      ...schema,
      properties: Object.fromEntries(Object.entries(schema.properties).filter(([member]) => !readOnly.includes(member))),
      ...(schema.required !== undefined ? { required: schema.required.filter((member) => !readOnly.includes(member)) } : {})
    }
  }
}

const METHODS = ['get', 'head', 'put', 'post', 'patch', 'delete', 'options', 'trace']

/** The component schemas `node` names with a $ref, and those they name, transitively. */
function componentsReachedFrom (roots: unknown[], schemas: Record<string, unknown>): Set<string> {
  const reached = new Set<string>()
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) { for (const item of node) visit(item); return }
    if (node === null || typeof node !== 'object') return
    const target = (node as Json).$ref
    if (typeof target === 'string' && target.startsWith('#/components/schemas/')) {
      const name = target.slice('#/components/schemas/'.length)
      if (!reached.has(name)) { reached.add(name); visit(schemas[name]) }
    }
    for (const value of Object.values(node)) visit(value)
  }
  for (const root of roots) visit(root)
  return reached
}

/** A copy of `node` without `additionalProperties: false` at any depth ($ref targets are opened by name). */
function opened (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(opened)
  if (node === null || typeof node !== 'object') return node
  return Object.fromEntries(Object.entries(node).filter(([key, value]) => !(key === 'additionalProperties' && value === false)).map(([key, value]) => [key, opened(value)]))
}

/**
 * The versioning policy adds response members without a new version, so the published document must not forbid them:
 * what the service sends (responses, webhook deliveries) is described without `additionalProperties: false`, and a
 * client that validates strictly keeps working when a member is added. Request bodies keep it (the service refuses
 * unknown members with 400). Copies: the route schemas (which serialize and validate) stay as they are. A component
 * used both ways would stay closed (none is). The service's own tests validate responses strictly all the same
 * (test/helpers/openapi-validator.ts closes every object again).
 */
function openResponseSchemas (doc: Json & { components?: Json, paths?: Record<string, Record<string, Operation>>, webhooks?: unknown }): void {
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, unknown>
  const operations = Object.values(doc.paths ?? {}).flatMap((item) => Object.entries(item).filter(([method]) => METHODS.includes(method)).map(([, operation]) => operation))
  const requests = componentsReachedFrom(operations.flatMap((operation) => [operation.requestBody, operation.parameters]), schemas)
  const responses = componentsReachedFrom([...operations.map((operation) => operation.responses), doc.webhooks], schemas)
  for (const name of responses) if (!requests.has(name) && schemas[name] !== undefined) schemas[name] = opened(schemas[name])
  for (const operation of operations) {
    for (const response of Object.values(operation.responses ?? {})) {
      for (const media of Object.values(response.content ?? {})) if (media.schema !== undefined) media.schema = opened(media.schema)
    }
  }
  for (const item of Object.values((doc.webhooks ?? {}) as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(item)) {
      for (const media of Object.values(operation.requestBody?.content ?? {})) if (media.schema !== undefined) media.schema = opened(media.schema)
    }
  }
}

/** Adds what every operation shares to the generated document (in place) and returns it; `connectorProblems`: the connector modules' own problem types. */
export function completeContract<T extends Json> (document: T, connectorProblems: readonly ConnectorProblemComponent[] = []): T {
  const doc = document as Json & { info: Json, components?: Json, paths?: Record<string, Record<string, Operation>> }
  doc.info = { ...doc.info, contact: CONTACT, license: LICENSE }
  // A relative URL: the origin this document is served from, so Swagger UI's try-it-out calls the instance that served it.
  // Not an absolute http:// URL (the OWASP rules refuse it, and each deployment has its own origin); see "Base URL" in the description.
  doc.servers = [{
    url: '/',
    description: 'The origin this document is served from, in every environment. Clients outside a browser pass the origin as their base URL ' +
      '(e.g. `https://payments.example.com`, or `http://127.0.0.1:3000` locally): no path, the operations\' paths start at its root.',
    'x-internal': false
  }]
  const components = (doc.components ??= {}) as Json
  components.headers = { ...(components.headers as Json | undefined), ...responseHeaders }
  omitReadOnlyMembersOfRequestBodies(doc)
  const problems = problemComponents(connectorProblems)
  const events = typedEventComponents()
  const deliveries = webhookDocument((components.schemas ?? {}) as Json)
  components.schemas = { ...(components.schemas as Json | undefined), ...problems.components, ProblemDetails: problems.union, ...events.components, Event: events.union, ...deliveries.components }
  doc.webhooks = deliveries.webhooks
  components.parameters = { ...(components.parameters as Json | undefined), ApiVersion: apiVersionParameter }
  for (const [template, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue
      // @fastify/swagger names a HEAD route `<get's operationId>-head`: camelCase like the others (a valid identifier in generated clients).
      if (method === 'head' && operation.operationId?.endsWith('-head') === true) operation.operationId = `${operation.operationId.slice(0, -'-head'.length)}Head`
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'path' && parameter.example === undefined && parameter.name !== undefined) {
          parameter.example = examplePath(template).split('/')[template.split('/').indexOf(`{${parameter.name}}`)]
        }
      }
      operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/ApiVersion' }]
      addCommonResponses(operation, template)
      const idempotent = method === 'post' && takesIdempotencyKey(operation)
      if (idempotent) documentIdempotencyConflicts(operation, template)
      if (operation.requestBody !== undefined && OPTIONAL_BODY_OPERATIONS.includes(operation.operationId ?? '')) operation.requestBody.required = false
      for (const [statusText, response] of Object.entries(operation.responses ?? {})) {
        const status = Number(statusText)
        const headers: Record<string, unknown> = {}
        for (const [name, header] of Object.entries(response.headers ?? {})) {
          const component = canonical[name.toLowerCase()]
          headers[component ?? name] = component === undefined ? header : ref(component)
        }
        for (const name of headersFor(operation, method, template, status)) headers[name] ??= ref(name)
        if (status === 409 && idempotent) headers['Retry-After'] ??= ref(IN_USE_RETRY_AFTER)
        response.headers = headers
        if (status < 400) continue
        for (const [mediaType, media] of Object.entries(response.content ?? {})) {
          if (media.example !== undefined || media.examples !== undefined || !isErrorSchema(media.schema)) continue
          media.example = mediaType.startsWith('application/problem+json')
            ? problemExample(operation, status, template)
            : envelopeExample(status)
        }
      }
    }
  }
  openResponseSchemas(doc)
  return document
}

/**
 * Quotes the ISO 8601 timestamps of a YAML text (`createdAt: 2026-01-15T09:30:00.000Z` →
 * `createdAt: "2026-01-15T09:30:00.000Z"`): YAML 1.1 parsers (PyYAML, SnakeYAML, many SDK generators)
 * read an unquoted one as a timestamp, not as the string the schema says it is.
 */
export function quoteTimestamps (yamlText: string): string {
  return yamlText.replace(/^(\s*(?:- |[^\s:#][^:#]*: ))(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))$/gm, '$1"$2"')
}
