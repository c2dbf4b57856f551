import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { ForbiddenError } from '../../src/domain/errors'
import { validPageRequest } from '../../src/domain/pagination'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { IdempotencyHeaders, idempotencyRule, jsonResponse, problemResponse } from '../../schemas/common'
import { paymentErrors } from '../../schemas/payments'
import { Dispute, DisputeList, DisputeListQuery, DisputeParams, disputeErrors, disputeExamples, toPublicDispute } from '../../schemas/disputes'
import { disputeAcceptedResponse } from '../../plugins/stored-responses'
import { integerQuery } from '../../plugins/http/request-guards'

const adminRefused = 'This operation needs a merchant API key; the admin key does not act on a merchant\'s behalf.'
const listAuthErrors = problemAuthErrors('the admin key (disputes belong to merchants)', '/api/disputes', adminRefused)
const readAuthErrors = problemAuthErrors('the admin key (disputes belong to merchants)', `/api/disputes/${String(disputeExamples.needs_response.id)}`, adminRefused)
const acceptAuthErrors = problemAuthErrors('the admin key (disputes belong to merchants)', `/api/disputes/${String(disputeExamples.needs_response.id)}/accept`, adminRefused)

/**
 * The merchant a request acts for. Every dispute route needs a merchant key (`config.auth: 'merchant'`): the service
 * and the store filter by it, so another merchant's dispute is 404 like one that does not exist.
 */
function ownerOf (request: FastifyRequest): string {
  const principal = request.principal
  if (principal?.kind !== 'merchant') throw new ForbiddenError('This operation needs a merchant API key.')
  return principal.merchantId
}

/** /api/disputes (issue 40): the disputes the PSPs reported on a merchant's payments; accepting one. RFC 9457 problem documents. */
const disputes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['disputes'],
      operationId: 'listDisputes',
      summary: 'List your disputes',
      description: 'The disputes your PSPs reported on your payments, newest first (the time the service learned of each, then id), `limit` per page ' +
        '(1-100, default 10), paged with `startingAfter` / `endingBefore` like the payments list. Filters: `status`, `paymentId`. Unknown query members are 400.',
      querystring: DisputeListQuery,
      security: requiresKey,
      response: {
        200: jsonResponse('A page of disputes.', Type.Ref(DisputeList)),
        400: disputeErrors.validation,
        ...listAuthErrors,
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: paymentErrors.storeUnavailable
      }
    },
    preValidation: integerQuery(['limit'])
  }, async (request) => {
    const query = validPageRequest(request.query)
    const page = await app.disputes.list({ ...query, merchantId: ownerOf(request) })
    return { data: page.data.map(toPublicDispute), hasMore: page.hasMore }
  })

  app.get('/:id', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['disputes'],
      operationId: 'getDispute',
      summary: 'Get a dispute',
      description: 'One of your disputes, as the PSP last reported it. Another merchant\'s dispute is 404, like an unknown id.',
      params: DisputeParams,
      security: requiresKey,
      response: {
        200: jsonResponse('The dispute.', Type.Ref(Dispute)),
        ...readAuthErrors,
        404: disputeErrors.notFound,
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: paymentErrors.storeUnavailable
      }
    }
  }, async (request) => toPublicDispute(await app.disputes.get(request.params.id, ownerOf(request))))

  app.post('/:id/accept', {
    config: { auth: 'merchant', roles: 'operate', audit: { action: 'dispute.accept', resourceParam: 'id' } },
    schema: {
      tags: ['disputes'],
      operationId: 'acceptDispute',
      summary: 'Accept a dispute',
      description: 'Concedes the dispute at its PSP (Stripe: closes it, which Stripe records as `lost`; Adyen: the Disputes API\'s ' +
        '`acceptDispute`): the money taken back stays with the cardholder and no evidence can be sent any more. The dispute becomes ' +
        '`accepted` (`dispute.closed`) and stays so whatever the PSP reports later. The PSP is asked under a key derived from the dispute, ' +
        'so asking again never concedes twice; accepting an `accepted` dispute answers it again. A `won` or `lost` dispute, or one the PSP ' +
        'refuses to accept, is 409 `dispute-not-acceptable` (nothing changed); a PSP that does not answer is 503 with Retry-After (the ' +
        'dispute is unchanged: ask again). No body. ' + idempotencyRule(),
      params: DisputeParams,
      headers: IdempotencyHeaders,
      security: requiresKey,
      response: {
        200: jsonResponse('The dispute, `accepted`.', Type.Ref(Dispute), disputeExamples.accepted),
        ...acceptAuthErrors,
        404: disputeErrors.notFound,
        409: problemResponse('The dispute is closed (`won`, `lost`), the PSP refused to accept it (its reason in `detail`), or its connector cannot ' +
          '(urn:problem-type:dispute-not-acceptable, with `disputeId` and `disputeStatus`); or the Idempotency-Key is reused or in use.'),
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: problemResponse('The PSP did not answer (urn:problem-type:gateway-unavailable, with Retry-After), or the database is unavailable: ' +
          'the dispute is unchanged; ask again.')
      }
    }
  }, async (request, reply) => {
    const owner = ownerOf(request)
    return await app.idempotency.handle(request, reply, {
      work: async () => await app.disputes.acceptDispute(request.params.id, owner),
      respond: disputeAcceptedResponse,
      // Accepting again is safe (the PSP call replays, an accepted dispute answers again): stored right after.
      storeAfterWork: true
    })
  })
}

export default disputes
