import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { CaptureFailedError } from '../../src/domain/captures'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { jsonResponse } from '../../schemas/common'
import { IdempotencyHeaders, Payment, PaymentParams, paymentErrors } from '../../schemas/payments'
import { authorizedPaymentExample, CaptureBody, capturedPaymentExample, captureErrors } from '../../schemas/captures'
import { captureResponse } from '../../plugins/stored-responses'

export interface CaptureRoutesOptions {
  /** The decimals of `amount` as the client wrote it (noted by the payments area's JSON parser). */
  writtenDecimals: WeakMap<FastifyRequest, number>
  /** The merchant the request acts for (the payments area's ownership seam). */
  ownerOf: (request: FastifyRequest) => string
}

const adminRefused = 'This operation needs a merchant API key; the admin key does not act on a merchant\'s behalf.'
const captureAuthErrors = problemAuthErrors('the admin key (payments belong to merchants)', '/api/payments/3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f/capture', adminRefused)

/** POST /api/payments/{id}/capture: manual capture of an authorization (issue 24). */
const captureRoutes: FastifyPluginAsyncTypebox<CaptureRoutesOptions> = async (app, options) => {
  app.post('/payments/:id/capture', {
    config: { auth: 'merchant', roles: 'operate', audit: { action: 'payment.capture', resourceParam: 'id' } },
    schema: {
      tags: ['payments'],
      operationId: 'capturePayment',
      summary: 'Capture an authorized payment',
      description: 'Captures a `requires_capture` payment (created with `captureMethod: manual`): all of `amountCapturable` (no `amount`, ' +
        'or no body) or part of it. An authorization is captured once: a partial capture releases the rest. 200 with the payment, ' +
        '`succeeded`, its `amountCaptured` set (refunds are bounded by it). The gateway is asked under a downstream key derived ' +
        'from the payment, so a capture is never made twice; 20 concurrent captures with different keys give one 200 and 19 × 409. ' +
        'Refusals: any other status, a capture or cancel in flight, or `captureBefore` passed → 409 `payment-not-capturable` with ' +
        '`paymentStatus`; `amount` ≤ 0, with too many decimals or above `amountCapturable` → 400 (`errors.amount`); the gateway ' +
        'refusing → 402 `capture-failed` (still `requires_capture`); a gateway outage → 503 with Retry-After (the capture stays in ' +
        'progress: retry with the same Idempotency-Key, or the recovery worker finishes it). `Idempotency-Key` works exactly as on refunds.',
      params: PaymentParams,
      headers: IdempotencyHeaders,
      body: Type.Optional(Type.Ref(CaptureBody)),
      security: requiresKey,
      response: {
        200: jsonResponse('The payment, captured (`succeeded`); a replay also carries `Idempotent-Replayed: true`.', Type.Ref(Payment), capturedPaymentExample),
        202: jsonResponse('The connector accepted the capture and tells its outcome later (Adyen: by notification): the payment stays ' +
          '`requires_capture` with `amountCapturePending` (and `amountCapturable` 0, no refund yet) until `payment.succeeded`, or until ' +
          'a refused capture makes it capturable again.', Type.Ref(Payment), { ...authorizedPaymentExample, amountCapturable: 0, amountCapturePending: 7.5 }),
        400: captureErrors.validation,
        ...captureAuthErrors,
        402: captureErrors.failed,
        404: paymentErrors.notFound,
        409: captureErrors.notCapturable,
        413: paymentErrors.tooLarge,
        415: paymentErrors.unsupportedMediaType,
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal,
        503: captureErrors.unavailable
      }
    },
    // A body-less POST (capture everything) is an empty request object, fingerprinted as such.
    preValidation: async (request) => { if (request.body === undefined || request.body === null) request.body = {} }
  }, async (request, reply) => {
    const owner = options.ownerOf(request)
    const amount = request.body?.amount
    const writtenDecimalPlaces = options.writtenDecimals.get(request)
    const input = { paymentId: request.params.id, ...(amount === undefined ? {} : { amount }), ...(writtenDecimalPlaces === undefined ? {} : { writtenDecimalPlaces }) }
    return await app.idempotency.handle(request, reply, {
      work: async (key) => {
        try {
          return await app.captures.capture(input, key, owner)
        } catch (err) {
          // The refusal is the request's answer (stored on its key with the refusal): sent, not thrown.
          if (err instanceof CaptureFailedError) return err
          throw err
        }
      },
      respond: captureResponse
    })
  })
}

export default captureRoutes
