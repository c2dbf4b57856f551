/**
 * The document's `webhooks:` section (OpenAPI 3.1): what the service POSTs to a webhook endpoint,
 * one entry per kind of resource, its body in either API version an endpoint may be pinned to, the
 * Standard Webhooks headers and `webhook-api-version`, and what the receiver's answer means. Document
 * only: the delivery code renders the bodies (src/domain/api-versions.ts) and signs them (src/domain/webhooks.ts).
 */
import { Type } from '@sinclair/typebox'
import { EVENT_TYPES } from '../src/domain/events'
import { API_VERSIONS, FIRST_API_VERSION, LATEST_API_VERSION } from '../src/domain/api-versions'
import { ATTEMPT_LOG_MAX } from '../src/domain/webhooks'
import { Event, EventTypeSchema, eventResources, exampleEvent } from './events'

type Json = Record<string, unknown>

/** The delivery body of endpoints pinned to 2026-11-01: `{type, timestamp, data, sequence}`. */
export const LegacyWebhookBody = Type.Object({
  type: EventTypeSchema,
  timestamp: Type.String({ maxLength: 64, format: 'date-time', description: 'When the change was committed (the event\'s `createdAt`).' }),
  data: Type.Object({}, { additionalProperties: true, description: 'The resource as the API returns it, at the time of the event.' }),
  sequence: Event.properties.sequence
}, { additionalProperties: false })

const legacyExample = { type: exampleEvent.type, timestamp: exampleEvent.createdAt, data: exampleEvent.data, sequence: exampleEvent.sequence }

const SIGNATURE = 'v1,[A-Za-z0-9+/]{43}='

/** The Standard Webhooks headers of every delivery (request header parameters of each webhook). */
export const webhookHeaders: Json[] = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event id: the same on every attempt, retry and replay of the event. Deduplicate on it.',
    schema: { type: 'string', format: 'uuid', maxLength: 64, examples: [exampleEvent.id] }
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'When this attempt was sent, in seconds since the epoch. Refuse deliveries far from now (the libraries allow 5 minutes).',
    schema: { type: 'integer', format: 'int64', minimum: 0, maximum: 253402300799, examples: [1768469401] }
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description: '`v1,` + the base64 HMAC-SHA256, under the endpoint\'s secret (the bytes after `whsec_`), of `{webhook-id}.{webhook-timestamp}.{body}` ' +
      'over the exact bytes sent. During a secret rotation two signatures, space-separated (the new secret\'s first); accept the delivery if one matches. ' +
      'Verify with a Standard Webhooks library (`npm install standardwebhooks`).',
    schema: { type: 'string', maxLength: 200, pattern: `^${SIGNATURE}( ${SIGNATURE})?$`, examples: ['v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='] }
  },
  {
    name: 'webhook-api-version',
    in: 'header',
    required: true,
    description: 'The API version the body is rendered in: the endpoint\'s `apiVersion` when this attempt was sent (a retry or replay after a `PATCH` of it is sent in the new one). ' +
      'Read the body by it: the Event resource since ' + LATEST_API_VERSION + ', `{type, timestamp, data, sequence}` in ' + FIRST_API_VERSION + '. ' +
      'Not signed: the signature covers the body, which is what you act on.',
    schema: { type: 'string', maxLength: 10, enum: [...API_VERSIONS], examples: [LATEST_API_VERSION] }
  }
]

const receiverResponses: Json = {
  '2XX': { description: 'Acknowledged: the delivery is done. Answer within WEBHOOK_TIMEOUT_MS (10 s by default) and process afterwards; the body is ignored.' },
  410: { description: 'Gone: the endpoint is disabled at once (`disabledReason: gone`, a `webhook_endpoint.disabled` event) and receives nothing more until enabled again.' },
  default: {
    description: 'Anything else is retried: another status (a 3xx too: redirects are not followed), a time-out or a connection error. ' +
      'Attempts follow WEBHOOK_RETRY_DELAYS (by default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 8 attempts over about 28 hours), never before ' +
      'your `Retry-After` (capped at 24 h). After the last one the delivery is `failed` and, without a success since it began, the endpoint is disabled. ' +
      `Your first 1 KiB of each answer is kept in the delivery's attempt log (the last ${ATTEMPT_LOG_MAX} attempts). ` +
      '(`Retry-After` is honoured on any answer, in seconds or as an HTTP date; it is not declared as a response header here because ' +
      'the headers of your answers are yours, not this API\'s: CORS and rate-limit headers make no sense on them.)'
  }
}

/** The legacy body component of each kind of resource, its `data` that resource's component. */
function legacyComponents (): Json {
  const base = JSON.parse(JSON.stringify(LegacyWebhookBody)) as { properties: Record<string, Json> }
  const components: Json = {}
  for (const { variant, resource, data, prefix } of eventResources) {
    const types = EVENT_TYPES.filter((type) => type.startsWith(prefix))
    components[`${variant}Body${FIRST_API_VERSION.replaceAll('-', '')}`] = {
      ...JSON.parse(JSON.stringify(base)),
      title: `${variant} delivery body (${FIRST_API_VERSION})`,
      description: `The delivery body of an event about a ${resource.replace('_', ' ')} to an endpoint pinned to ${FIRST_API_VERSION}: \`data\` is the ${data} at the time of the event.`,
      properties: {
        ...JSON.parse(JSON.stringify(base.properties)),
        type: { ...base.properties.type, enum: types, examples: [types[0]] },
        data: { $ref: `#/components/schemas/${data}` }
      }
    }
  }
  return components
}

/**
 * One webhook per kind of resource, keyed like `paymentEvent`, and the legacy body components they use.
 * `schemas`: the document's components, whose examples become the examples' `data`.
 */
export function webhookDocument (schemas: Record<string, unknown>): { webhooks: Json, components: Json } {
  const webhooks: Json = {}
  for (const { variant, resource, data, prefix } of eventResources) {
    const types = EVENT_TYPES.filter((type) => type.startsWith(prefix))
    const name = variant.charAt(0).toLowerCase() + variant.slice(1)
    const legacy = `${variant}Body${FIRST_API_VERSION.replaceAll('-', '')}`
    const example = ((schemas[data] as { examples?: Array<{ id: string }> } | undefined)?.examples ?? [exampleEvent.data])[0] ?? exampleEvent.data
    const type = types.find((candidate) => candidate === exampleEvent.type) ?? types[0]
    const current = { ...exampleEvent, type, resource: { type: resource, id: example.id }, data: example }
    webhooks[name] = {
      post: {
        tags: ['webhooks'],
        operationId: `receive${variant}`,
        summary: `Receive ${types.join(', ')}`,
        description: `What the service POSTs to your endpoint when ${types.map((type) => `\`${type}\``).join(', ')} happens (if the endpoint's ` +
          `\`enabledEvents\` include it). The body depends on the endpoint's \`apiVersion\`: since ${LATEST_API_VERSION} it is the Event resource ` +
          `(\`${variant}\`, exactly as GET /api/events/{id} returns it); ${FIRST_API_VERSION} sends \`{type, timestamp, data, sequence}\` ` +
          `(\`${legacy}\`); \`webhook-api-version\` says which. Either way \`data\` is the ${data} as the API returned it then, and the signature covers the exact bytes sent. ` +
          'Deliveries are at least once and unordered: deduplicate on `webhook-id` and order by `sequence`.',
        security: [],
        parameters: webhookHeaders,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { oneOf: [{ $ref: `#/components/schemas/${variant}` }, { $ref: `#/components/schemas/${legacy}` }] },
              examples: {
                current: { summary: `API version ${LATEST_API_VERSION}: the Event resource`, value: current },
                [`v${FIRST_API_VERSION.replaceAll('-', '')}`]: { summary: `API version ${FIRST_API_VERSION}`, value: { ...legacyExample, type, data: example } }
              }
            }
          }
        },
        responses: receiverResponses
      }
    }
  }
  // Copies: shared objects would become YAML anchors and aliases.
  return { webhooks: JSON.parse(JSON.stringify(webhooks)) as Json, components: legacyComponents() }
}
