import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { jsonResponse } from '../../schemas/common'
import { paymentErrors } from '../../schemas/payments'
import { PaymentSummary, PaymentSummaryQuery, toPublicSummary } from '../../schemas/payment-summary'

export interface SummaryRoutesOptions {
  /** The merchant the request acts for (the payments area's ownership seam). */
  ownerOf: (request: FastifyRequest) => string
}

const adminRefused = 'This operation needs a merchant API key; the admin key does not act on a merchant\'s behalf.'
const summaryAuthErrors = problemAuthErrors('the admin key (payments belong to merchants)', '/api/payments/summary', adminRefused)

/**
 * GET /api/payments/summary: the dashboard Overview's daily figures (issue 30). A static segment, so it
 * wins over /payments/:id in the router; payment ids are GUIDs, so no payment is called `summary`.
 */
const summaryRoutes: FastifyPluginAsyncTypebox<SummaryRoutesOptions> = async (app, options) => {
  app.get('/payments/summary', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['payments'],
      operationId: 'summarizePayments',
      summary: 'Daily payment figures',
      description: 'Your payments per UTC day and currency over `from`..`to` (both included; default the 30 days ending today, ' +
        'at most 366 days): `succeeded` (payments created that day and charged, refunded ones included; the captured amount), ' +
        '`declined` (created that day and declined) and `refunded` (refunds that succeeded that day). Pending, authorized ' +
        '(`requires_capture`), failed and canceled payments are not counted: no money moved. Every day of the range is listed, ' +
        'zeros included; `totals.successRate` = succeeded / (succeeded + declined) by count, null when both are 0. Amounts are ' +
        'decimals in the currency\'s major units, one entry per currency. A date that is not one, `from` after `to` or a longer ' +
        'range is 400.',
      querystring: PaymentSummaryQuery,
      security: requiresKey,
      response: {
        200: jsonResponse('The figures of every day of the range, per currency.', Type.Ref(PaymentSummary)),
        400: paymentErrors.validation,
        ...summaryAuthErrors,
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: paymentErrors.storeUnavailable
      }
    }
  }, async (request) => toPublicSummary(await app.payments.summary({ ...request.query, merchantId: options.ownerOf(request) })))
}

export default summaryRoutes
