import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { MAX_CONNECTORS_PER_MERCHANT } from '../../src/domain/connectors'
import { noteFieldErrors } from '../../plugins/http/errors/field-errors'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { IdempotencyHeaders, idempotencyRule, jsonResponse, problemResponse } from '../../schemas/common'
import { connectorCreatedResponse } from '../../plugins/stored-responses'
import { MerchantParams, merchantErrors } from '../../schemas/merchants'
import {
  ConnectorAccount, ConnectorAccountList, ConnectorParams, ConnectorStats, ConnectorStatsQuery, CreateConnectorBody, UpdateConnectorBody, toPublicConnector, toPublicConnectorStats
} from '../../schemas/connectors'
import { MAX_STATS_DAYS } from '../../src/domain/connector-stats'

const exampleMerchant = '/merchants/7c9e6679-7425-40de-944b-e07fc1f90ae7/connectors'
const authErrors = problemAuthErrors('a merchant key for another merchant is answered 404, not 403', exampleMerchant,
  'The API key is valid but may not do this.')
const who = 'The admin key, or the merchant\'s own key (another merchant\'s id is 404, as if it did not exist).'
const notFound = problemResponse('No such merchant, or it has no such connector account (deleted accounts are 404 too).')
const common = { 429: merchantErrors.rateLimited, 500: merchantErrors.internal }
const bodyErrors = { 413: merchantErrors.tooLarge, 415: merchantErrors.createUnsupportedMediaType }
const validation = problemResponse('Validation failure (`errors.<field>`: a missing or unknown `type`, credentials that do not fit the type, ' +
  `a priority outside 0-1000, more than ${MAX_CONNECTORS_PER_MERCHANT} accounts); or the PSP refused the credentials ` +
  '(`type` urn:problem-type:connector-credentials-refused): nothing was stored. Problems never quote the credentials.')
const unreachable = {
  ...problemResponse('The PSP could not be reached to check the credentials (`type` urn:problem-type:gateway-unavailable): nothing was stored; ' +
    'retry after `Retry-After` seconds. Or the database is unavailable (urn:problem-type:service-unavailable).'),
  headers: { 'retry-after': { type: 'integer', description: 'Seconds to wait before retrying.' } }
}
const conflict = problemResponse('The account kept changing while this change was applied: nothing was changed; read it again and retry.')

/**
 * The create body's per-type credential checks, judged on the raw body so they are reported with the schema's errors (one
 * 400 listing every field). The service runs the same module check again: it is the rule, for callers that are not this route.
 */
function noteCredentialErrors (app: FastifyInstance, request: FastifyRequest): void {
  const body = request.body as Record<string, unknown> | null
  if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof body.type !== 'string') return
  noteFieldErrors(request, app.connectorRegistry.credentialErrors(body.type, body.credentials))
}

/** /merchants/{id}/connectors: a merchant's accounts at PSPs, where its payments are routed (problem documents). */
const connectors: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/:id/connectors', {
    config: { auth: 'admin-or-own-merchant', roles: 'develop', audit: 'connector.create' },
    schema: {
      tags: ['connectors'],
      operationId: 'createConnector',
      summary: 'Add a connector account',
      description: `${who} The credentials are checked first with one read-only, authenticated call to the PSP (Stripe: \`GET /v1/balance\`): ` +
        'refused → 400 (`urn:problem-type:connector-credentials-refused`), PSP unreachable → 503; in both cases nothing is stored. ' +
        'Then they are stored encrypted (AES-256-GCM under ENCRYPTION_KEYS, bound to the account id) and never shown again: answers carry ' +
        '`credentialsHint` (the last 4 characters) only. The new account is `enabled`. ' +
        idempotencyRule(),
      security: requiresKey,
      params: MerchantParams,
      headers: IdempotencyHeaders,
      body: Type.Ref(CreateConnectorBody),
      response: {
        201: jsonResponse('The connector account (`Location` names it).', Type.Ref(ConnectorAccount)),
        400: validation,
        ...authErrors,
        404: notFound,
        ...bodyErrors,
        ...common,
        503: unreachable
      }
    },
    preValidation: async (request) => { noteCredentialErrors(app, request) }
  }, async (request, reply) => {
    return await app.idempotency.handle(request, reply, {
      work: async () => await app.connectorAccounts.create(request.params.id, request.body),
      respond: connectorCreatedResponse,
      // The answer carries no secret (credentialsHint only); it is stored right after the account (a crash between the two
      // commits leaves the key unfinished, and its retry adds the account again).
      storeAfterWork: true
    })
  })

  app.get('/:id/connectors', {
    config: { auth: 'admin-or-own-merchant', roles: 'read' },
    schema: {
      tags: ['connectors'],
      operationId: 'listConnectors',
      summary: 'List connector accounts',
      description: `${who} In routing order: priority (lowest first), then the oldest first. Deleted accounts are not listed; credentials never are.`,
      security: requiresKey,
      params: MerchantParams,
      response: { 200: jsonResponse('The merchant\'s connector accounts.', Type.Ref(ConnectorAccountList)), ...authErrors, 404: notFound, ...common }
    }
  }, async (request) => ({ data: (await app.connectorAccounts.list(request.params.id)).map(toPublicConnector) }))

  // A static segment: it wins over /:id/connectors/:connectorId in the router (account ids are GUIDs, none is called `stats`).
  app.get('/:id/connectors/stats', {
    config: { auth: 'admin-or-own-merchant', roles: 'read' },
    schema: {
      tags: ['connectors'],
      operationId: 'getConnectorStats',
      summary: 'Success rate and latency per connector',
      description: `${who} How the charge calls of the merchant's payments went at each connector over a range of call start times ` +
        `(\`createdGte\` included, \`createdLt\` excluded; default the 30 days before now, at most ${MAX_STATS_DAYS} days): the calls by outcome, ` +
        'the success rate and the p50/p95 time the PSP took to answer. Every call is counted once, as the PSP answered it (failovers and ' +
        'retries are calls of their own). Accounts not deleted are all listed, in routing order, zeros included. An instant that is not one, ' +
        '`createdGte` not before `createdLt` or a longer range is 400.',
      security: requiresKey,
      params: MerchantParams,
      querystring: ConnectorStatsQuery,
      response: {
        200: jsonResponse('The figures of each connector over the range.', Type.Ref(ConnectorStats)),
        400: problemResponse('Validation failure (`errors.createdGte`, `errors.createdLt`): not an ISO 8601 instant, `createdGte` not before `createdLt`, ' +
          `or a range longer than ${MAX_STATS_DAYS} days; or an unknown query parameter.`),
        ...authErrors,
        404: problemResponse('No such merchant (another merchant\'s id too).'),
        ...common,
        503: merchantErrors.unavailable
      }
    }
  }, async (request) => toPublicConnectorStats(await app.connectorAccounts.stats(request.params.id, request.query)))

  app.get('/:id/connectors/:connectorId', {
    config: { auth: 'admin-or-own-merchant', roles: 'read' },
    schema: {
      tags: ['connectors'],
      operationId: 'getConnector',
      summary: 'Read a connector account',
      description: who,
      security: requiresKey,
      params: ConnectorParams,
      response: { 200: jsonResponse('The connector account.', Type.Ref(ConnectorAccount)), ...authErrors, 404: notFound, ...common }
    }
  }, async (request) => toPublicConnector(await app.connectorAccounts.get(request.params.id, request.params.connectorId)))

  app.patch('/:id/connectors/:connectorId', {
    config: { auth: 'admin-or-own-merchant', roles: 'develop', audit: { action: 'connector.update', resourceParam: 'connectorId' } },
    schema: {
      tags: ['connectors'],
      operationId: 'updateConnector',
      summary: 'Change a connector account',
      description: `${who} Members sent are changed, others kept: \`priority\`, \`status\` (\`disabled\` takes it out of routing; its payments keep ` +
        'settling, refunding and capturing through it), `description`, `credentials` (for the account\'s type; checked with the PSP like on ' +
        'creation before they replace the old ones: refused 400, unreachable 503, nothing changed). Changing only priority, status or description calls no PSP.',
      security: requiresKey,
      params: ConnectorParams,
      body: Type.Ref(UpdateConnectorBody),
      response: {
        200: jsonResponse('The connector account as changed.', Type.Ref(ConnectorAccount)),
        400: validation,
        ...authErrors,
        404: notFound,
        409: conflict,
        ...bodyErrors,
        ...common,
        503: unreachable
      }
    }
  }, async (request) => toPublicConnector(await app.connectorAccounts.update(request.params.id, request.params.connectorId, request.body)))

  app.delete('/:id/connectors/:connectorId', {
    config: { auth: 'admin-or-own-merchant', roles: 'develop', audit: { action: 'connector.delete', resourceParam: 'connectorId' } },
    schema: {
      tags: ['connectors'],
      operationId: 'deleteConnector',
      summary: 'Delete a connector account',
      description: `${who} No new payment is routed to it and it is 404 from now on, but the payments already made through it keep ` +
        'settling, refunding and capturing there (its record and credentials are kept for them).',
      security: requiresKey,
      params: ConnectorParams,
      response: { 204: { description: 'Deleted.', type: 'null' }, ...authErrors, 404: notFound, ...common }
    }
  }, async (request, reply) => {
    await app.connectorAccounts.remove(request.params.id, request.params.connectorId)
    return reply.code(204).send()
  })
}

export default connectors
