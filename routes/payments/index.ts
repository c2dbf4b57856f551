import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { ForbiddenError, ValidationError } from '../../src/domain/errors'
import { mayCreatePayments } from '../../src/domain/api-keys'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { validatePaymentInput } from '../../src/domain/payments'
import { problemErrorHandler, problemNotFound } from '../../plugins/http/problem'
import { maxLiteralDecimalPlaces } from '../../plugins/http/json-numbers'
import { jsonResponse } from '../../schemas/common'
import { CreatePaymentBody, IdempotencyHeaders, Payment, PaymentParams, paymentErrors } from '../../schemas/payments'
import { renderSettled, toPublicPayment } from './responses'
import { Type } from '@sinclair/typebox'

const adminRefused = 'This operation needs a merchant API key; the admin key does not act on a merchant\'s behalf.'
const createAuthErrors = problemAuthErrors('the admin key (payments belong to merchants), or a suspended merchant\'s key', '/api/payments', adminRefused)
const readAuthErrors = problemAuthErrors('the admin key (payments belong to merchants)', '/api/payments/3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f', adminRefused)

/** The payments area: RFC 9457 problem documents for every failure. */
const payments: FastifyPluginAsyncTypebox = async (app) => {
  app.setErrorHandler(problemErrorHandler)
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, problemNotFound)

  // The same JSON parser, which also notes the decimals of the numbers as written: JSON.parse turns
  // 10.100000000000000001 into 10.1, and an amount must be judged by what the client sent.
  const writtenDecimals = new WeakMap<FastifyRequest, number>()
  const parseJson = app.getDefaultJsonParser(app.initialConfig.onProtoPoisoning ?? 'error', app.initialConfig.onConstructorPoisoning ?? 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body)
    parseJson(request, text, (err, value) => {
      if (err === null || err === undefined) writtenDecimals.set(request, maxLiteralDecimalPlaces(text))
      done(err, value)
    })
  })

  app.post('/payments', {
    config: { auth: 'merchant' },
    schema: {
      tags: ['payments'],
      operationId: 'createPayment',
      summary: 'Create a payment',
      description: 'Validates the amount and currency, then charges them through the payment gateway. ' +
        'Validation always runs first: an invalid request never reaches the gateway and never consumes an Idempotency-Key. ' +
        'Answers 201 with the payment and `Location: /api/payments/{id}`, 402 when declined, 503 when the gateway is unavailable ' +
        '(the payment stays `pending`; retry with the same Idempotency-Key). ' +
        'Needs a merchant API key; the payment belongs to that merchant. A suspended merchant\'s key is 403; the admin key is 403 ' +
        '(it does not act on a merchant\'s behalf). Idempotency-Keys are scoped to the merchant and this operation.',
      security: requiresKey,
      headers: IdempotencyHeaders,
      body: CreatePaymentBody,
      response: {
        201: jsonResponse('The payment succeeded. `Location` holds its URL; a replay also carries `Idempotent-Replayed: true`.', Type.Ref(Payment)),
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
    }
  }, async (request, reply) => {
    const principal = request.principal
    if (principal?.kind !== 'merchant') throw new ForbiddenError('This operation needs a merchant API key.')
    if (!mayCreatePayments(principal)) {
      throw new ForbiddenError('This merchant is suspended: its keys can read payments but not create them.')
    }
    const errors = validatePaymentInput(request.body, writtenDecimals.get(request))
    if (Object.keys(errors).length > 0) throw new ValidationError(errors)
    const origin = { path: request.url.split('?')[0], traceId: request.id }
    return await app.idempotency.handle(request, reply, async (key) => renderSettled(await app.payments.create(
      { ...request.body, merchantId: principal.merchantId },
      key === undefined ? undefined : { ref: key.ref, resourceId: key.record.resourceId, traceId: request.id }
    ), origin))
  })

  app.get('/payments/:id', {
    config: { auth: 'merchant' },
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
  }, async (request) => {
    // Another merchant's payment is not found, exactly like one that does not exist (OWASP API1).
    const owner = request.principal?.kind === 'merchant' ? request.principal.merchantId : ''
    return toPublicPayment(await app.payments.get(request.params.id, owner))
  })
}

export default payments
