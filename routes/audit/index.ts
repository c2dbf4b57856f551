import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ForbiddenError } from '../../src/domain/errors'
import { validPageRequest } from '../../src/domain/pagination'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { AuditLogQuery, auditResponses, toAuditEntryResource } from '../../schemas/audit'
import { problemResponse } from '../../schemas/common'
import { paymentErrors } from '../../schemas/payments'
import { integerQuery } from '../../plugins/http/request-guards'

/** /api/audit-log (issue 43): the merchant's own audit log. RFC 9457 problem documents. */
const auditLog: FastifyPluginAsyncTypebox = async (app) => {
  app.get('', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['audit log'],
      operationId: 'listAuditLog',
      summary: 'Your audit log',
      description: 'Who changed what in your account, newest first: every state-changing request made with one of your API keys or by one of your ' +
        'users in the dashboard, and requests a user\'s role refused (`outcome: denied`). Each entry was written in the same transaction as its ' +
        'change and can never be changed or deleted. Paged like every list (`limit`, `startingAfter`, `endingBefore`); filters `actorId`, ' +
        '`action`, `resourceType`, `resourceId`, `createdGte`, `createdLt`.',
      security: requiresKey,
      querystring: AuditLogQuery,
      response: {
        200: auditResponses.list,
        400: problemResponse('A query member is invalid (`errors` says which), or the cursor is not an entry of this log.'),
        ...problemAuthErrors('the admin key (the operator reads a merchant\'s log at /merchants/{id}/audit-log)', '/api/audit-log',
          'This operation needs a merchant API key; the admin key does not act on a merchant\'s behalf.'),
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: paymentErrors.storeUnavailable
      }
    },
    preValidation: integerQuery(['limit'])
  }, async (request) => {
    const principal = request.principal
    if (principal?.kind !== 'merchant') throw new ForbiddenError('This operation needs a merchant API key.')
    const page = await app.auditLog.list({ ...request.query, ...validPageRequest(request.query) }, principal.merchantId)
    return { data: page.data.map(toAuditEntryResource), hasMore: page.hasMore }
  })
}

export default auditLog
