import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Readable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { jsonResponse } from '../../schemas/common'
import { paymentErrors } from '../../schemas/payments'
import { MerchantRefundListQuery, REFUND_CSV_HEADER, RefundExportQuery, RefundList, refundCsvRow, refundExportResponse, toPublicRefund } from '../../schemas/refunds'
import { normalizeRange, validPageRequest } from '../../src/domain/pagination'
import { integerQuery } from '../../plugins/http/request-guards'
import { allPages, csvChunks } from '../../src/domain/csv'

export interface RefundListRoutesOptions {
  /** The merchant the request acts for (the payments area's ownership seam). */
  ownerOf: (request: FastifyRequest) => string
}

const adminRefused = 'This operation needs a merchant API key; the admin key does not act on a merchant\'s behalf.'
const EXPORT_PAGE_SIZE = 500

/** GET /api/refunds and GET /api/refunds/export (issue 44): a merchant's refunds of all its payments, and their CSV. */
const refundListRoutes: FastifyPluginAsyncTypebox<RefundListRoutesOptions> = async (app, options) => {
  app.get('/refunds', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['refunds'],
      operationId: 'listAllRefunds',
      summary: 'List your refunds',
      description: 'Your refunds of all your payments, newest first (created time, then id), `limit` per page (1-100, default 10), paged with ' +
        '`startingAfter` / `endingBefore` like the payments list. Filters: `status`, `createdGte` (inclusive), `createdLt` (exclusive). ' +
        'One payment\'s refunds: GET /api/payments/{id}/refunds. Unknown query members are 400.',
      querystring: MerchantRefundListQuery,
      security: requiresKey,
      response: {
        200: jsonResponse('A page of refunds.', Type.Ref(RefundList)),
        400: paymentErrors.validation,
        ...problemAuthErrors('the admin key (refunds belong to merchants)', '/api/refunds', adminRefused),
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: paymentErrors.storeUnavailable
      }
    },
    preValidation: integerQuery(['limit'])
  }, async (request) => {
    const query = validPageRequest(request.query)
    const page = await app.refunds.listForMerchant({
      ...query, ...normalizeRange(query), merchantId: options.ownerOf(request)
    })
    return { data: page.data.map(toPublicRefund), hasMore: page.hasMore }
  })

  app.get('/refunds/export', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['refunds'],
      operationId: 'exportRefunds',
      summary: 'Export refunds as CSV',
      description: 'Every refund the filters select (those of GET /api/refunds), newest first, as one CSV file (RFC 4180) with a header record, ' +
        `streamed ${EXPORT_PAGE_SIZE} refunds at a time.`,
      querystring: RefundExportQuery,
      security: requiresKey,
      response: {
        200: refundExportResponse,
        400: paymentErrors.validation,
        ...problemAuthErrors('the admin key (refunds belong to merchants)', '/api/refunds/export', adminRefused),
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: paymentErrors.storeUnavailable
      }
    }
  }, async (request, reply) => {
    const filters = {
      ...request.query, ...normalizeRange(request.query), merchantId: options.ownerOf(request)
    }
    // The first page is read before answering: a database that is down is a 503, not a cut-off 200.
    const first = await app.refunds.listForMerchant({ ...filters, limit: EXPORT_PAGE_SIZE })
    const pages = allPages(async (startingAfter) => startingAfter === undefined
      ? first
      : await app.refunds.listForMerchant({ ...filters, limit: EXPORT_PAGE_SIZE, startingAfter }))
    return await reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="refunds-${new Date().toISOString().slice(0, 10)}.csv"`)
      // A stream: the type provider knows only the documented string body.
      .send(Readable.from(csvChunks(REFUND_CSV_HEADER, pages, (refund) => refundCsvRow(toPublicRefund(refund))), { objectMode: false }) as unknown as string)
  })
}

export default refundListRoutes
