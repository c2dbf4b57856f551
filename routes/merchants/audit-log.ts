import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { validPageRequest } from '../../src/domain/pagination'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { AuditLogQuery, auditResponses, toAuditEntryResource } from '../../schemas/audit'
import { MerchantParams, merchantErrors } from '../../schemas/merchants'
import { integerQuery } from '../../plugins/http/request-guards'
import { problemResponse } from '../../schemas/common'

/** /merchants/{id}/audit-log (issue 43): the operator's view of a merchant's audit log (the merchant's own is /api/audit-log). */
const auditLog: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/:id/audit-log', {
    config: { auth: 'admin-or-own-merchant', roles: 'read' },
    schema: {
      tags: ['audit log'],
      operationId: 'listMerchantAuditLog',
      summary: 'A merchant\'s audit log',
      description: 'The operator (admin key), or the merchant itself: who changed what, newest first, paged like every list. Same filters as `GET /api/audit-log`.',
      security: requiresKey,
      params: MerchantParams,
      querystring: AuditLogQuery,
      response: {
        200: auditResponses.list,
        400: problemResponse('A query member is invalid (`errors` says which), or the cursor is not an entry of this log.'),
        ...problemAuthErrors('another merchant\'s log is answered 404', '/merchants/7c9e6679-7425-40de-944b-e07fc1f90ae7/audit-log', 'The key may not read this.'),
        404: merchantErrors.notFound,
        429: merchantErrors.rateLimited,
        500: merchantErrors.internal,
        503: merchantErrors.unavailable
      }
    },
    preValidation: integerQuery(['limit'])
  }, async (request) => {
    const page = await app.auditLog.list({ ...request.query, ...validPageRequest(request.query) }, request.params.id)
    return { data: page.data.map(toAuditEntryResource), hasMore: page.hasMore }
  })
}

export default auditLog
