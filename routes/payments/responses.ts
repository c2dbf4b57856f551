import { PaymentDeclinedError } from '../../src/domain/errors'
import { fromMinorUnits } from '../../src/domain/money'
import type { Payment } from '../../src/domain/payments'
import { exponentOf, type ResponseOrigin } from '../../src/services/payments'
import type { StoredResponse } from '../../src/store/types'
import type { PaymentType } from '../../schemas/payments'
import { classifyError } from '../../plugins/http/classify-error'
import { JSON_CONTENT_TYPE } from '../../plugins/http/envelope'
import { buildProblem, PROBLEM_CONTENT_TYPE } from '../../plugins/http/problem'

export function toPublicPayment (payment: Payment): PaymentType {
  const publicPayment: PaymentType = {
    id: payment.id,
    status: payment.status,
    amount: fromMinorUnits(payment.amountMinor, exponentOf(payment.currency)),
    currency: payment.currency,
    createdAt: payment.createdAt,
    updatedAt: payment.updatedAt
  }
  if (payment.declineCode !== null) publicPayment.declineCode = payment.declineCode
  return publicPayment
}

/**
 * The response a settled payment answers with, exactly as it is stored for replays: 201 with the
 * payment and its Location (the collection path it was posted to, plus its id), or the 402 problem.
 * The route and the recovery worker (through the payments service) both render with this.
 */
export function renderSettled (payment: Payment, origin: ResponseOrigin): StoredResponse {
  if (payment.status === 'declined') {
    const declined = new PaymentDeclinedError(payment.id, payment.declineCode ?? 'declined')
    const problem = buildProblem(classifyError(declined), { instance: origin.path, traceId: origin.traceId })
    return { statusCode: 402, headers: { 'content-type': PROBLEM_CONTENT_TYPE }, body: JSON.stringify(problem) }
  }
  return {
    statusCode: 201,
    headers: { 'content-type': JSON_CONTENT_TYPE, location: `${origin.path}/${payment.id}` },
    body: JSON.stringify(toPublicPayment(payment))
  }
}
