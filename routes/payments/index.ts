import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { ForbiddenError, ValidationError } from '../../src/domain/errors'
import { mayCreatePayments } from '../../src/domain/api-keys'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { validatePaymentInput } from '../../src/domain/payments'
import { normaliseAmount } from '../../plugins/http/json-numbers'
import { utf8JsonParser } from '../../plugins/http/json-body'
import { noteFieldErrors } from '../../plugins/http/errors/field-errors'
import { idempotencyRule, jsonResponse, problemResponse } from '../../schemas/common'
import {
  CreatePaymentBody, IdempotencyHeaders, Payment, PAYMENT_CSV_HEADER, PaymentExportQuery, paymentCsvRow, paymentExportResponse, PaymentList, PaymentListQuery,
  PaymentParams, paymentErrors, toPublicPayment
} from '../../schemas/payments'
import { CreateRefundBody, exampleRefund, Refund, RefundList, RefundListQuery, RefundParams, refundErrors, toPublicRefund } from '../../schemas/refunds'
import { cancelResponse, paymentResponse, refundResponse } from '../../plugins/stored-responses'
import { authorizedPaymentExample, routedExample, succeededPaymentExample } from '../../schemas/captures'
import { integerQuery, metadataGuard } from '../../plugins/http/request-guards'
import { normalizeRange, validPageRequest } from '../../src/domain/pagination'
import { Type, type Static } from '@sinclair/typebox'
import { Readable } from 'node:stream'
import { allPages, csvChunks } from '../../src/domain/csv'
import eventRoutes from './events'
import captureRoutes from './capture'
import summaryRoutes from './summary'
import refundListRoutes from './refund-list'

const adminRefused = 'This operation needs a merchant API key; the admin key does not act on a merchant\'s behalf.'
const createAuthErrors = problemAuthErrors('the admin key (payments belong to merchants), or a suspended merchant\'s key', '/api/payments', adminRefused)
const readAuthErrors = problemAuthErrors('the admin key (payments belong to merchants)', '/api/payments/3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f', adminRefused)
const listAuthErrors = problemAuthErrors('the admin key (payments belong to merchants)', '/api/payments', adminRefused)
const refundAuthErrors = problemAuthErrors('the admin key (payments belong to merchants)', '/api/payments/3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f/refunds', adminRefused)
const cancelAuthErrors = problemAuthErrors('the admin key (payments belong to merchants)', '/api/payments/3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f/cancel', adminRefused)

/**
 * The merchant a request acts for: the single seam of payment ownership. Services and stores
 * filter by it, so another merchant's payment or refund is 404, exactly like one that does not
 * exist (OWASP API1). Every payment route needs a merchant key (`config.auth: 'merchant'`); a
 * request without one never gets here, and is refused again here should a route forget it.
 */
function ownerOf (request: FastifyRequest): string {
  const principal = request.principal
  if (principal?.kind !== 'merchant') throw new ForbiddenError('This operation needs a merchant API key.')
  return principal.merchantId
}

/** Rows an export reads per query. */
const EXPORT_PAGE_SIZE = 500
const exportAuthErrors = problemAuthErrors('the admin key (payments belong to merchants)', '/api/payments/export', adminRefused)

/** The list's (and the export's) filters as the store takes them; a filter that cannot select anything as sent is 400. */
function paymentFilters<Q extends Static<typeof PaymentExportQuery>> (query: Q): Omit<Q, 'metadataKey' | 'metadataValue' | 'amount'> & PaymentListFilters {
  const { metadataKey, metadataValue, amount, ...rest } = query
  if ((metadataKey === undefined) !== (metadataValue === undefined)) {
    const missing = metadataKey === undefined ? 'metadataKey' : 'metadataValue'
    throw new ValidationError({ [missing]: [`The ${missing} parameter is required with ${missing === 'metadataKey' ? 'metadataValue' : 'metadataKey'}.`] })
  }
  if (amount !== undefined && !(Number(amount) > 0)) throw new ValidationError({ amount: ['The amount parameter must be greater than 0.'] })
  return {
    ...rest,
    ...(amount === undefined ? {} : { amount: Number(amount) }),
    ...(metadataKey === undefined || metadataValue === undefined ? {} : { metadata: { key: metadataKey, value: metadataValue } }),
    ...normalizeRange(query)
  }
}

interface PaymentListFilters { amount?: number, metadata?: { key: string, value: string }, createdGte?: string, createdLt?: string }

/** A body-less POST (a full refund) is an empty request object. */
async function emptyBodyIsEmptyObject (request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {}
}

/** The payments area: RFC 9457 problem documents for every failure. */
const payments: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(eventRoutes)

  // The same JSON parser, which also notes the decimals of the amount as written (JSON.parse turns
  // 10.100000000000000001 into 10.1, and an amount must be judged by what the client sent) and turns
  // an amount sent as a decimal string ("10.10") into its number.
  const writtenDecimals = new WeakMap<FastifyRequest, number>()
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' },
    utf8JsonParser(app, (request, text, body) => { writtenDecimals.set(request, normaliseAmount(body, text)) }))
  await app.register(captureRoutes, { writtenDecimals, ownerOf })
  await app.register(summaryRoutes, { ownerOf })
  await app.register(refundListRoutes, { ownerOf })

  app.post('/payments', {
    config: { auth: 'merchant', roles: 'own', audit: 'payment.create' },
    schema: {
      tags: ['payments'],
      operationId: 'createPayment',
      summary: 'Create a payment',
      description: 'Validates the amount and currency, then charges them through the payment gateway. ' +
        'Validation always runs first: an invalid request never reaches the gateway and never consumes an Idempotency-Key. ' +
        'Answers 201 with the payment and `Location: /api/payments/{id}`, 402 when declined, 503 when the gateway is unavailable ' +
        '(the payment stays `pending`; retry with the same Idempotency-Key). ' +
        'With `returnUrl` the payment is customer-present: the connector may ask for the shopper (3-D Secure), answered 201 `requires_action` ' +
        'with `nextAction` (event payment.requires_action); the shopper comes back through the service to `returnUrl` with `paymentId` and `status`. ' +
        'Needs a merchant API key; the payment belongs to that merchant. A suspended merchant\'s key is 403; the admin key is 403 ' +
        '(it does not act on a merchant\'s behalf). Idempotency-Keys are scoped to the merchant and this operation.',
      security: requiresKey,
      headers: IdempotencyHeaders,
      body: Type.Ref(CreatePaymentBody),
      response: {
        201: jsonResponse('The payment succeeded (or, with `captureMethod: manual`, is authorized: `requires_capture`, see the ' +
          'authorization example of the Payment schema; or, customer-present with `returnUrl`, waits for the shopper: `requires_action` with ' +
          '`nextAction`, where your page sends the shopper). `Location` holds its URL; a replay also carries `Idempotent-Replayed: true`.', Type.Ref(Payment), { ...succeededPaymentExample, metadata: { orderId: 'A-1042' } }),
        400: paymentErrors.validation,
        ...createAuthErrors,
        402: paymentErrors.declined,
        409: paymentErrors.conflict,
        413: paymentErrors.tooLarge,
        415: paymentErrors.unsupportedMediaType,
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: paymentErrors.unavailable
      }
    },
    preValidation: [metadataGuard(), async (request) => {
      // Domain checks on the raw body, reported with the schema's errors (a lower-case currency with a negative amount: both);
      // a body that passes the schema has then been checked once and for all (throwNotedFieldErrors answers the rest).
      const body = request.body as { amount?: unknown, currency?: unknown, paymentMethod?: unknown, paymentMethods?: unknown, returnUrl?: unknown, browserInfo?: unknown, origin?: unknown } | null
      if (body === null || typeof body !== 'object') return
      const { paymentMethod, paymentMethods, returnUrl, browserInfo, origin } = body
      if (typeof body.currency !== 'string') {
        noteFieldErrors(request, validatePaymentInput({ amount: 1, currency: 'USD', paymentMethod, paymentMethods, returnUrl, browserInfo, origin }))
        return
      }
      noteFieldErrors(request, validatePaymentInput({
        amount: typeof body.amount === 'number' ? body.amount : 0, currency: body.currency, paymentMethod, paymentMethods, returnUrl, browserInfo, origin
      }, writtenDecimals.get(request)))
    }]
  }, async (request, reply) => {
    const principal = request.principal
    if (principal?.kind !== 'merchant') throw new ForbiddenError('This operation needs a merchant API key.')
    if (!mayCreatePayments(principal)) {
      throw new ForbiddenError('This merchant is suspended: its keys can read payments but not create them.')
    }
    const input = { ...request.body, merchantId: principal.merchantId }
    // The pending payment is inserted in the transaction that claims the key (one commit, not two).
    const prepared = await app.payments.prepare(input)
    return await app.idempotency.handle(request, reply, {
      work: async (key) => await app.payments.create(input, key, prepared),
      respond: paymentResponse,
      creating: { resource: prepared.payment, creation: prepared.creation }
    })
  })

  app.get('/payments', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['payments'],
      operationId: 'listPayments',
      summary: 'List payments',
      description: 'Your payments, newest first (created time, then id), `limit` per page (1-100, default 10). ' +
        'Page forward with `startingAfter` = the last id of a page, back with `endingBefore` = the first id; `hasMore` says ' +
        'whether more lie in that direction. Cursors are positions, so pages never skip or repeat a payment while new ones ' +
        'arrive. Filters: `status`, `createdGte` (inclusive), `createdLt` (exclusive), `metadataKey` + `metadataValue` (one metadata ' +
        'entry, exact match; both or neither), `customerEmail` (case-insensitive), `amount` (exact, major units of each payment\'s ' +
        'currency) and `last4` (the card\'s last 4 digits); filters combine with AND. Unknown query members are 400. ' +
        'GET /api/payments/export answers the same selection as one CSV file.',
      querystring: PaymentListQuery,
      security: requiresKey,
      response: {
        200: jsonResponse('A page of payments.', Type.Ref(PaymentList)),
        400: paymentErrors.validation,
        ...listAuthErrors,
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal
      }
    },
    preValidation: integerQuery(['limit'])
  }, async (request) => {
    const page = await app.payments.list({ ...paymentFilters(validPageRequest(request.query)), merchantId: ownerOf(request) })
    return { data: page.data.map(toPublicPayment), hasMore: page.hasMore }
  })

  app.get('/payments/export', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['payments'],
      operationId: 'exportPayments',
      summary: 'Export payments as CSV',
      description: 'Every payment the filters select (the list\'s filters: `status`, `createdGte`, `createdLt`, `metadataKey` + `metadataValue`, ' +
        '`customerEmail`, `amount`, `last4`), newest first, as one CSV file (RFC 4180) with a header record. The file is streamed as it is read, ' +
        `${EXPORT_PAGE_SIZE} payments at a time, so its size is not bounded by memory. A static segment: it wins over /payments/{id}.`,
      querystring: PaymentExportQuery,
      security: requiresKey,
      response: {
        200: paymentExportResponse,
        400: paymentErrors.validation,
        ...exportAuthErrors,
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: paymentErrors.storeUnavailable
      }
    }
  }, async (request, reply) => {
    const filters = { ...paymentFilters(request.query), merchantId: ownerOf(request) }
    // The first page is read before answering: a database that is down is a 503, not a cut-off 200.
    const first = await app.payments.list({ ...filters, limit: EXPORT_PAGE_SIZE })
    const pages = allPages(async (startingAfter) => startingAfter === undefined
      ? first
      : await app.payments.list({ ...filters, limit: EXPORT_PAGE_SIZE, startingAfter }))
    const csv = csvChunks(PAYMENT_CSV_HEADER, pages, (payment) => paymentCsvRow(toPublicPayment(payment)))
    return await reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="payments-${new Date().toISOString().slice(0, 10)}.csv"`)
      // A stream: the type provider knows only the documented string body.
      .send(Readable.from(csv, { objectMode: false }) as unknown as string)
  })

  app.post('/payments/:id/cancel', {
    config: { auth: 'merchant', roles: 'operate', audit: { action: 'payment.cancel', resourceParam: 'id' } },
    schema: {
      tags: ['payments'],
      operationId: 'cancelPayment',
      summary: 'Cancel a pending payment or an uncaptured authorization',
      description: 'Cancels a payment waiting for its shopper (`requires_action`) at its connector: `canceled` with `cancellationReason: requested` ' +
        '(had the shopper authenticated meanwhile, the charge is refunded in full and the payment ends `refunded`, as for a pending one). ' +
        'Voids a `requires_capture` payment\'s authorization (the held money is released): `canceled` with ' +
        '`cancellationReason: requested` (a capture in flight makes it 409). ' +
        'Gives up a `pending` payment (the gateway has not confirmed it): the gateway voids the charge under the ' +
        'payment\'s downstream key, so it can no longer go through, and the payment becomes `canceled`. If the charge had in fact ' +
        'gone through, it is refunded in full (a refund with reason `payment_canceled`) and the payment ends `refunded`: money is ' +
        'never left behind. Idempotent: canceling a canceled payment answers 200 again. Any other settled payment is 409 ' +
        '`payment-not-cancelable`; a gateway outage is 503 with Retry-After (the payment stays pending; retry the cancel). ' + idempotencyRule(),
      params: PaymentParams,
      headers: IdempotencyHeaders,
      security: requiresKey,
      response: {
        200: jsonResponse('The payment, `canceled` (or `refunded` when its charge had gone through).', Type.Ref(Payment), {
          id: '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f',
          status: 'canceled',
          amount: 5001,
          currency: 'USD',
          amountRefunded: 0,
          captureMethod: 'automatic',
          amountCaptured: 0,
          amountCapturable: 0,
          paymentMethod: routedExample.paymentMethod,
          connector: routedExample.connector,
          attempts: [{ ...routedExample.attempts[0], outcome: 'unknown', code: 'server_error' }],
          cancellationReason: 'requested',
          createdAt: '2026-01-15T09:30:00.000Z',
          updatedAt: '2026-01-15T09:32:00.000Z'
        }),
        ...cancelAuthErrors,
        404: paymentErrors.notFound,
        202: jsonResponse('The connector accepted the cancel and tells its outcome later (Adyen: by notification): the payment is unchanged ' +
          'until then (`pending` or `requires_capture`); `payment.canceled` follows.', Type.Ref(Payment), { ...authorizedPaymentExample }),
        409: problemResponse('The payment is settled and cannot be canceled (urn:problem-type:payment-not-cancelable, with `paymentStatus`).'),
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: problemResponse('The gateway did not confirm the void; the payment stays pending. Retry after Retry-After.')
      }
    }
  }, async (request, reply) => {
    const owner = ownerOf(request)
    return await app.idempotency.handle(request, reply, {
      work: async () => await app.captures.cancelAuthorization(request.params.id, owner) ?? await app.refunds.cancelPayment(request.params.id, owner),
      // 202 while still pending or authorized: the connector accepted the cancel and settles it by notification.
      respond: cancelResponse,
      // A cancel is safe to send again (canceling a canceled payment answers it again): stored right after.
      storeAfterWork: true
    })
  })

  app.post('/payments/:id/refunds', {
    config: { auth: 'merchant', roles: 'operate', audit: { action: 'payment.refund', resourceParam: 'id' } },
    schema: {
      tags: ['refunds'],
      operationId: 'createRefund',
      summary: 'Refund a payment',
      description: 'Refunds all (no `amount`, or no body) or part of a `succeeded` or `partially_refunded` payment; a payment ' +
        'may have several refunds up to its amount. The refund goes through the gateway under a key derived from the refund id, ' +
        'so it is never made twice. 201 with the refund and `Location`; the payment moves to `partially_refunded` or `refunded` ' +
        'and its `amountRefunded` grows. Refunds of one payment are serialised: concurrent refunds never exceed its amount. ' +
        'A refund larger than what remains (the amount less succeeded and pending refunds) is 409 `refund-exceeds-remaining` ' +
        '(409 and not 422: the remaining amount is the payment\'s current state, which other refunds change); a pending, ' +
        'declined, failed, canceled or fully refunded payment is 409 `payment-not-refundable`; `amount` ≤ 0 or with more ' +
        'decimals than the currency allows is 400. The gateway refusing the refund is 402 `refund-failed`. A gateway outage ' +
        'is 503 with Retry-After: the refund stays `pending` with its amount held; retry with the same Idempotency-Key (or let the ' +
        'recovery worker) finish it. `Idempotency-Key` works exactly as on payments.',
      params: PaymentParams,
      headers: IdempotencyHeaders,
      body: Type.Ref(CreateRefundBody),
      security: requiresKey,
      response: {
        201: jsonResponse('The refund succeeded. `Location` holds its URL; a replay also carries `Idempotent-Replayed: true`.', Type.Ref(Refund)),
        202: jsonResponse('The connector accepted the refund and tells its outcome later (Adyen: by notification): the refund is `pending` ' +
          'and its amount stays held; `refund.succeeded` or `refund.failed` follows. `Location` holds its URL.', Type.Ref(Refund), { ...exampleRefund, status: 'pending' }),
        400: refundErrors.validation,
        ...refundAuthErrors,
        402: refundErrors.failed,
        404: refundErrors.notFound,
        409: refundErrors.conflict,
        413: paymentErrors.tooLarge,
        415: paymentErrors.unsupportedMediaType,
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: refundErrors.unavailable
      }
    },
    preValidation: [emptyBodyIsEmptyObject, metadataGuard()]
  }, async (request, reply) => {
    const writtenDecimalPlaces = writtenDecimals.get(request)
    const input = { ...request.body, paymentId: request.params.id, ...(writtenDecimalPlaces === undefined ? {} : { writtenDecimalPlaces }) }
    return await app.idempotency.handle(request, reply, {
      work: async (key) => await app.refunds.create(input, key, ownerOf(request)),
      respond: refundResponse
    })
  })

  app.get('/payments/:id/refunds', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['refunds'],
      operationId: 'listRefunds',
      summary: 'List a payment\'s refunds',
      description: 'The payment\'s refunds, newest first, paginated like the payment list (`limit`, `startingAfter`, `endingBefore`).',
      params: PaymentParams,
      querystring: RefundListQuery,
      security: requiresKey,
      response: {
        200: jsonResponse('A page of refunds.', Type.Ref(RefundList)),
        400: paymentErrors.validation,
        ...refundAuthErrors,
        404: refundErrors.notFound,
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal
      }
    },
    preValidation: integerQuery(['limit'])
  }, async (request) => {
    const query = validPageRequest(request.query)
    const page = await app.refunds.list(request.params.id, query, ownerOf(request))
    return { data: page.data.map(toPublicRefund), hasMore: page.hasMore }
  })

  app.get('/payments/:id/refunds/:refundId', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['refunds'],
      operationId: 'getRefund',
      summary: 'Read a refund',
      description: 'The refund in any state. Ids that are not GUIDs, unknown ids and refunds of another payment are 404.',
      params: RefundParams,
      security: requiresKey,
      response: {
        200: jsonResponse('The refund.', Type.Ref(Refund)),
        ...refundAuthErrors,
        404: refundErrors.notFound,
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal
      }
    }
  }, async (request) => toPublicRefund(await app.refunds.get(request.params.id, request.params.refundId, ownerOf(request))))

  app.get('/payments/:id', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['payments'],
      operationId: 'getPayment',
      summary: 'Read a payment',
      description: 'Returns the payment in any state. An id that is not a GUID cannot name a payment and is answered 404, like an unknown one. ' +
        'Needs a merchant API key (suspended merchants may read); another merchant\'s payment is 404, as if it did not exist.',
      security: requiresKey,
      params: PaymentParams,
      response: {
        200: jsonResponse('The payment.', Type.Ref(Payment)),
        ...readAuthErrors,
        404: paymentErrors.notFound,
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: paymentErrors.storeUnavailable
      }
    }
  }, async (request) => toPublicPayment(await app.payments.get(request.params.id, ownerOf(request))))
}

export default payments
