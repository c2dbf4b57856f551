import { Type, type TSchema } from '@sinclair/typebox'
import type { InboundRefusal, InboundWebhook } from '../../src/gateway/inbound'
import { publicOperation } from '../../schemas/auth'
import { ProblemDetails, jsonResponse, problemResponse } from '../../schemas/common'
import { CONNECTORS_PATH, ConnectorEventParams, exampleConnectorId } from '../../schemas/connector-events'
import { merchantErrors } from '../../schemas/merchants'

/*
 * The schema (and OpenAPI operation) of each PSP's webhook route, from the description its connector module gives
 * (src/gateway/<psp>/webhook.ts): its body and answer (components, registered by plugins/schemas.ts), its refusals
 * as problem documents with examples, and the area's answers for the rest.
 */

const exampleTraceId = '0f8fad5b-d9cb-469f-a165-70867728950e'

/** A schema as the routes use it: by reference when it is a component (it has an `$id`). */
const referenced = (schema: TSchema): TSchema => typeof schema.$id === 'string' ? Type.Ref(schema) : schema

function refusalResponse (webhook: InboundWebhook, status: number, refusal: InboundRefusal) {
  const response = problemResponse(refusal.description)
  if (refusal.example === undefined) return response
  const { type, title, detail } = refusal.example
  const example = { type, title, status, detail, instance: `${CONNECTORS_PATH}/${exampleConnectorId}/${webhook.path}`, traceId: exampleTraceId }
  return { ...response, content: { 'application/problem+json': { schema: Type.Ref(ProblemDetails), example } } }
}

function answerResponse ({ answer }: InboundWebhook) {
  return answer.mediaType === 'application/json'
    ? jsonResponse(answer.description, referenced(answer.schema))
    : { description: answer.description, content: { [answer.mediaType]: { schema: answer.schema, example: answer.body } } }
}

/** The route schema (and OpenAPI operation) of the webhook a connector module describes. No API key: the PSP's signature authenticates. */
export function webhookOperation (webhook: InboundWebhook) {
  const { refusals } = webhook
  return {
    tags: ['connectors'],
    operationId: webhook.operationId,
    summary: webhook.summary,
    description: webhook.description,
    security: publicOperation,
    params: ConnectorEventParams,
    ...(webhook.headers === undefined ? {} : { headers: webhook.headers }),
    body: referenced(webhook.body),
    response: {
      200: answerResponse(webhook),
      400: refusalResponse(webhook, 400, refusals[400]),
      ...(refusals[401] === undefined ? {} : { 401: refusalResponse(webhook, 401, refusals[401]) }),
      413: merchantErrors.tooLarge,
      415: merchantErrors.createUnsupportedMediaType,
      429: merchantErrors.rateLimited,
      500: merchantErrors.internal,
      503: refusals[503] === undefined ? merchantErrors.unavailable : refusalResponse(webhook, 503, refusals[503])
    }
  }
}
