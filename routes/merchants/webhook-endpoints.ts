import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { mayDirectWebhooks } from '../../src/domain/api-keys'
import { ForbiddenError } from '../../src/domain/errors'
import { REPLAY_BATCH_EVENTS, widensDelivery } from '../../src/domain/webhooks'
import { validPageRequest } from '../../src/domain/pagination'
import { integerQuery } from '../../plugins/http/request-guards'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { IdempotencyHeaders, idempotencyRule, jsonResponse, problemResponse } from '../../schemas/common'
import { deliveryRetriedResponse, endpointWithSecretResponse, replayBatchResponse } from '../../plugins/stored-responses'
import { MerchantParams, merchantErrors } from '../../schemas/merchants'
import {
  CreateWebhookEndpointBody, DeliveryListQuery, DeliveryParams, EndpointParams, ReplayBody, ReplayResult, RotateSecretBody,
  UpdateWebhookEndpointBody, WebhookDelivery, WebhookDeliveryList, WebhookEndpoint, WebhookEndpointList, WebhookEndpointWithSecret,
  toDeliveryResource, toEndpointResource
} from '../../schemas/webhooks'

const exampleMerchant = '/merchants/7c9e6679-7425-40de-944b-e07fc1f90ae7/webhook-endpoints'
const authErrors = problemAuthErrors('a merchant key for another merchant is answered 404, not 403', exampleMerchant,
  'The API key is valid but may not do this.')
const who = 'The admin key, or the merchant\'s own key (another merchant\'s id is 404, as if it did not exist).'
const suspendedWho = `${who} A suspended merchant's key is 403 here: it may read, disable, delete and rotate, but start no new deliveries.`
const sendingAuthErrors = problemAuthErrors('a suspended merchant\'s key (a merchant key for another merchant is answered 404, not 403)', exampleMerchant,
  'This merchant is suspended: its keys may read, disable, delete and rotate webhook endpoints, but not create, widen, re-enable, retry, replay or test.')

/** A suspended merchant's keys start no new webhook traffic (src/domain/api-keys.ts, mayDirectWebhooks). */
function refuseSuspended (request: FastifyRequest): void {
  if (request.principal !== null && !mayDirectWebhooks(request.principal)) {
    throw new ForbiddenError('This merchant is suspended: its keys may read, disable, delete and rotate webhook endpoints, but not create, widen, re-enable, retry, replay or test.')
  }
}
const notFound = problemResponse('No such merchant, or it has no such endpoint (or delivery).')
const common = { 429: merchantErrors.rateLimited, 500: merchantErrors.internal }
const bodyErrors = { 413: merchantErrors.tooLarge, 415: merchantErrors.createUnsupportedMediaType }
const conflict = problemResponse('The endpoint kept changing (e.g. disabled by the delivery worker) while this change was applied: nothing was changed; read it again and retry.')
const inFlight = {
  ...problemResponse('An attempt of this delivery is being sent right now (`type` urn:problem-type:webhook-delivery-in-flight): nothing was changed; ' +
    'retry after `Retry-After` seconds, by when the attempt is recorded or its lease has run out.'),
  headers: { 'retry-after': { type: 'integer', description: 'Seconds until the attempt\'s lease ends.' } }
}
const disabledConflict = problemResponse('The endpoint is disabled: it receives nothing, test events included (nothing was sent or recorded). Enable it first (PATCH `disabled: false`).')
const validation = problemResponse('Validation failure: `errors.url` for a URL that is not https or reaches a private, loopback or link-local address ' +
  '(unless WEBHOOK_ALLOW_PRIVATE_URLS), or too many endpoints; other fields likewise.')

/** /merchants/{id}/webhook-endpoints: where a merchant's events are delivered (problem documents). */
const webhookEndpoints: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/:id/webhook-endpoints', {
    config: { auth: 'admin-or-own-merchant', roles: 'develop', audit: 'webhook_endpoint.create' },
    schema: {
      tags: ['webhooks'],
      operationId: 'createWebhookEndpoint',
      summary: 'Create a webhook endpoint',
      description: `${suspendedWho} Events of the types in \`enabledEvents\` (default all) are POSTed to \`url\`, signed per Standard Webhooks ` +
        '(`webhook-id`, `webhook-timestamp`, `webhook-signature`), with `webhook-api-version` naming the version the body is rendered in. The answer is the only time the signing `secret` is shown. ' + idempotencyRule(true),
      security: requiresKey,
      params: MerchantParams,
      headers: IdempotencyHeaders,
      body: Type.Ref(CreateWebhookEndpointBody),
      response: { 201: { ...jsonResponse('The endpoint with its secret (`Cache-Control: no-store`).', Type.Ref(WebhookEndpointWithSecret)) }, 400: validation, ...sendingAuthErrors, 404: notFound, ...bodyErrors, ...common }
    }
  }, async (request, reply) => {
    refuseSuspended(request)
    return await app.idempotency.handle(request, reply, {
      work: async (key) => await app.webhooks.create(request.params.id, request.body, key),
      respond: endpointWithSecretResponse(201),
      sealed: true
    })
  })

  app.get('/:id/webhook-endpoints', {
    config: { auth: 'admin-or-own-merchant', roles: 'read' },
    schema: {
      tags: ['webhooks'],
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints',
      description: `${who} Secrets are never listed.`,
      security: requiresKey,
      params: MerchantParams,
      response: { 200: jsonResponse('The merchant\'s endpoints.', Type.Ref(WebhookEndpointList)), ...authErrors, 404: notFound, ...common }
    }
  }, async (request) => ({ data: (await app.webhooks.list(request.params.id)).map(toEndpointResource) }))

  app.get('/:id/webhook-endpoints/:endpointId', {
    config: { auth: 'admin-or-own-merchant', roles: 'read' },
    schema: {
      tags: ['webhooks'],
      operationId: 'getWebhookEndpoint',
      summary: 'Get a webhook endpoint',
      description: who,
      security: requiresKey,
      params: EndpointParams,
      response: { 200: jsonResponse('The endpoint.', Type.Ref(WebhookEndpoint)), ...authErrors, 404: notFound, ...common }
    }
  }, async (request) => toEndpointResource(await app.webhooks.get(request.params.id, request.params.endpointId)))

  app.patch('/:id/webhook-endpoints/:endpointId', {
    config: { auth: 'admin-or-own-merchant', roles: 'develop', audit: { action: 'webhook_endpoint.update', resourceParam: 'endpointId' } },
    schema: {
      tags: ['webhooks'],
      operationId: 'updateWebhookEndpoint',
      summary: 'Change a webhook endpoint',
      description: `${who} Members sent are changed, others kept: \`url\` (checked like on creation), \`enabledEvents\`, \`description\`, \`disabled\`. ` +
        'A suspended merchant\'s key may change `description` and set `disabled: true` only (403 otherwise).',
      security: requiresKey,
      params: EndpointParams,
      body: Type.Ref(UpdateWebhookEndpointBody),
      response: { 200: jsonResponse('The endpoint as changed.', Type.Ref(WebhookEndpoint)), 400: validation, ...sendingAuthErrors, 404: notFound, 409: conflict, ...bodyErrors, ...common }
    }
  }, async (request) => {
    if (widensDelivery(request.body)) refuseSuspended(request)
    return toEndpointResource(await app.webhooks.update(request.params.id, request.params.endpointId, request.body))
  })

  app.delete('/:id/webhook-endpoints/:endpointId', {
    config: { auth: 'admin-or-own-merchant', roles: 'develop', audit: { action: 'webhook_endpoint.delete', resourceParam: 'endpointId' } },
    schema: {
      tags: ['webhooks'],
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint',
      description: `${who} Its pending deliveries are dropped with it.`,
      security: requiresKey,
      params: EndpointParams,
      response: { 204: { description: 'Deleted.', type: 'null' }, ...authErrors, 404: notFound, ...common }
    }
  }, async (request, reply) => {
    await app.webhooks.remove(request.params.id, request.params.endpointId)
    return reply.code(204).send()
  })

  app.post('/:id/webhook-endpoints/:endpointId/rotate-secret', {
    config: { auth: 'admin-or-own-merchant', roles: 'develop', audit: { action: 'webhook_endpoint.rotate_secret', resourceParam: 'endpointId' } },
    preValidation: async (request) => { request.body ??= {} },
    schema: {
      tags: ['webhooks'],
      operationId: 'rotateWebhookSecret',
      summary: 'Rotate an endpoint\'s signing secret',
      description: `${who} A new secret (shown only here); the previous one keeps signing for \`overlapSeconds\`, so ` +
        '`webhook-signature` carries both signatures (space-separated) while you deploy the new one. ' + idempotencyRule(true),
      security: requiresKey,
      params: EndpointParams,
      headers: IdempotencyHeaders,
      body: Type.Ref(RotateSecretBody),
      response: { 200: jsonResponse('The endpoint with its new secret (`Cache-Control: no-store`).', Type.Ref(WebhookEndpointWithSecret)), 400: merchantErrors.createValidation, ...authErrors, 404: notFound, 409: conflict, ...bodyErrors, ...common }
    }
  }, async (request, reply) => {
    return await app.idempotency.handle(request, reply, {
      work: async (key) => await app.webhooks.rotateSecret(request.params.id, request.params.endpointId, request.body.overlapSeconds, key),
      respond: endpointWithSecretResponse(200),
      sealed: true
    })
  })

  app.get('/:id/webhook-endpoints/:endpointId/deliveries', {
    config: { auth: 'admin-or-own-merchant', roles: 'read' },
    schema: {
      tags: ['webhooks'],
      operationId: 'listWebhookDeliveries',
      summary: 'List an endpoint\'s deliveries',
      description: `${who} Newest first, paginated like the other lists; each with its attempts (status, time, error).`,
      security: requiresKey,
      params: EndpointParams,
      querystring: DeliveryListQuery,
      response: { 200: jsonResponse('A page of deliveries.', Type.Ref(WebhookDeliveryList)), 400: merchantErrors.createValidation, ...authErrors, 404: notFound, ...common }
    },
    preValidation: integerQuery(['limit'])
  }, async (request) => {
    const page = await app.webhooks.deliveries(request.params.id, request.params.endpointId, validPageRequest(request.query))
    return { data: page.data.map(toDeliveryResource), hasMore: page.hasMore }
  })

  app.post('/:id/webhook-endpoints/:endpointId/deliveries/:deliveryId/retry', {
    config: { auth: 'admin-or-own-merchant', roles: 'develop', audit: { action: 'webhook_endpoint.retry_delivery', resourceParam: 'endpointId' } },
    schema: {
      tags: ['webhooks'],
      operationId: 'retryWebhookDelivery',
      summary: 'Retry a delivery now',
      description: `${suspendedWho} The delivery is due at once, with a fresh retry schedule (same \`webhook-id\`). ` +
        'While one of its attempts is being sent (the worker holds its lease) the answer is 409: the attempt finishes first, so one delivery is never sent twice at once. ' +
        idempotencyRule(),
      security: requiresKey,
      params: DeliveryParams,
      headers: IdempotencyHeaders,
      response: { 202: jsonResponse('The delivery, due now.', Type.Ref(WebhookDelivery)), ...sendingAuthErrors, 404: notFound, 409: inFlight, ...common }
    }
  }, async (request, reply) => {
    refuseSuspended(request)
    return await app.idempotency.handle(request, reply, {
      work: async () => await app.webhooks.retry(request.params.id, request.params.endpointId, request.params.deliveryId),
      respond: deliveryRetriedResponse,
      // Making a delivery due is safe to do again: its answer is stored right after.
      storeAfterWork: true
    })
  })

  app.post('/:id/webhook-endpoints/:endpointId/test', {
    config: { auth: 'admin-or-own-merchant', roles: 'develop', audit: { action: 'webhook_endpoint.test', resourceParam: 'endpointId' } },
    schema: {
      tags: ['webhooks'],
      operationId: 'sendWebhookTest',
      summary: 'Send a test event to an endpoint',
      description: `${suspendedWho} Sends one \`webhook_endpoint.test\` event (its \`data\` the endpoint, never its secret; \`resource\` the endpoint) ` +
        'to this endpoint now, whatever its `enabledEvents`, exactly as real deliveries are sent: signed per Standard Webhooks with its secret(s), ' +
        'rendered in its `apiVersion`, from the same addresses and with the same time-out (WEBHOOK_TIMEOUT_MS). The answer waits for the receiver. ' +
        'The test is recorded like any delivery (GET …/deliveries lists it; its event is in GET /api/events, kept as long as other events) and is ' +
        '`succeeded` when the receiver answered 2xx, else `failed` at once: `attemptLog[0]` holds its status code (null when none came), `error` ' +
        '(time-out, connection error, refused address) and the start of its answer. A test is not retried (Retry it like any delivery) and never ' +
        'disables the endpoint, even on a 410. Test events go to no other endpoint and are never replayed.',
      security: requiresKey,
      params: EndpointParams,
      response: {
        200: jsonResponse('The test delivery as recorded: `succeeded` (the receiver answered 2xx) or `failed` (its answer or the failure in `attemptLog[0]`).', Type.Ref(WebhookDelivery)),
        ...sendingAuthErrors,
        404: notFound,
        409: disabledConflict,
        ...common
      }
    }
  }, async (request) => {
    refuseSuspended(request)
    return toDeliveryResource(await app.webhooks.sendTest(request.params.id, request.params.endpointId))
  })

  app.post('/:id/webhook-endpoints/:endpointId/replay', {
    config: { auth: 'admin-or-own-merchant', roles: 'develop', audit: { action: 'webhook_endpoint.replay', resourceParam: 'endpointId' } },
    schema: {
      tags: ['webhooks'],
      operationId: 'replayWebhookEvents',
      summary: 'Re-send the events of a time range',
      description: `${suspendedWho} Every event of the merchant created in [from, to) that the endpoint receives gets a new delivery (same \`webhook-id\` as before: ` +
        `receivers that deduplicate by it ignore what they already processed). One call looks at the first ${REPLAY_BATCH_EVENTS} events of the range ` +
        '(oldest first); with `hasMore`, send the same request with `startingAfter` = `nextStartingAfter` for the next batch. ' + idempotencyRule(),
      security: requiresKey,
      params: EndpointParams,
      headers: IdempotencyHeaders,
      body: Type.Ref(ReplayBody),
      response: { 202: jsonResponse('How many deliveries this batch scheduled, and where the next one starts.', Type.Ref(ReplayResult)), 400: merchantErrors.createValidation, ...sendingAuthErrors, 404: notFound, ...bodyErrors, ...common }
    }
  }, async (request, reply) => {
    refuseSuspended(request)
    return await app.idempotency.handle(request, reply, {
      work: async () => await app.webhooks.replay(request.params.id, request.params.endpointId, request.body),
      respond: replayBatchResponse,
      // Stored right after the batch: the deliveries it schedules carry their events' webhook-id, so a batch made twice
      // (a crash between the two commits) is deduplicated by receivers.
      storeAfterWork: true
    })
  })
}

export default webhookEndpoints
