import { MAX_PARAM_LENGTH } from './patterns'
import { amountInput } from './amounts'
import { Type, type Static } from '@sinclair/typebox'
import { REFUND_REASON_MAX_LENGTH, REFUND_STATUSES, type Refund as StoredRefund } from '../src/domain/refunds'
import { exponentOf } from '../src/domain/currencies'
import { fromMinorUnits } from '../src/domain/money'
import { problemResponse } from './common'
import { Metadata, metadataMember, PageQuery, pageOf } from './listing'

export const exampleRefund = {
  id: '019aa9f4-1e2d-7c3b-8a49-5d6e7f8091a2',
  paymentId: '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f',
  amount: 2.5,
  currency: 'USD',
  status: 'succeeded',
  reason: 'requested_by_customer',
  metadata: { returnId: 'R-77' },
  createdAt: '2026-01-15T09:35:00.000Z',
  updatedAt: '2026-01-15T09:35:00.000Z'
}

export const RefundStatus = Type.Unsafe<typeof REFUND_STATUSES[number]>({
  type: 'string',
  enum: [...REFUND_STATUSES],
  description: '`pending` while the gateway has not confirmed it (its amount is held on the payment), then `succeeded` or ' +
    '`failed` (the gateway refused it; the amount is refundable again).'
})

export const Refund = Type.Object({
  id: Type.String({ format: 'uuid', maxLength: 36, description: 'Refund identifier (a GUID assigned by the service).', examples: [exampleRefund.id] }),
  paymentId: Type.String({ format: 'uuid', maxLength: 36, description: 'The refunded payment.', examples: [exampleRefund.paymentId] }),
  amount: Type.Number({ description: 'The refunded amount in major units of `currency`.', examples: [2.5] }),
  currency: Type.String({ maxLength: 3, pattern: '^[A-Z]{3}$', description: 'The payment\'s currency.', examples: ['USD'] }),
  status: RefundStatus,
  reason: Type.Optional(Type.String({ maxLength: REFUND_REASON_MAX_LENGTH, description: 'The reason sent with the refund. `payment_canceled` marks the refund a cancel made.', examples: ['requested_by_customer'] })),
  failureCode: Type.Optional(Type.String({ maxLength: 64, pattern: '^[a-z0-9_]+$', description: 'Present when `status` is `failed`.', examples: ['refund_declined'] })),
  metadata: Type.Optional(Metadata),
  createdAt: Type.String({ format: 'date-time', maxLength: 64, examples: [exampleRefund.createdAt] }),
  updatedAt: Type.String({ format: 'date-time', maxLength: 64, examples: [exampleRefund.updatedAt] })
}, { $id: 'Refund', title: 'Refund', additionalProperties: false, examples: [exampleRefund] })
export type RefundType = Static<typeof Refund>

/** A refund as the API shows it (responses, stored replays, event data). */
export function toPublicRefund (refund: StoredRefund): RefundType {
  return {
    id: refund.id,
    paymentId: refund.paymentId,
    amount: fromMinorUnits(refund.amountMinor, exponentOf(refund.currency)),
    currency: refund.currency,
    status: refund.status,
    ...(refund.reason !== null ? { reason: refund.reason } : {}),
    ...(refund.failureCode !== null ? { failureCode: refund.failureCode } : {}),
    ...metadataMember(refund.metadata),
    createdAt: refund.createdAt,
    updatedAt: refund.updatedAt
  }
}

export const CreateRefundBody = Type.Object({
  amount: Type.Optional(amountInput('How much to refund, in major units, with no more decimals than the currency allows; at most what remains ' +
    'refundable (the amount less succeeded and pending refunds), else 409 `refund-exceeds-remaining`. ' +
    'Omitted: everything that remains. Simulated gateway: 4001.00 is unavailable, 4002.00 times out, 4003.00 is refused.', { number: 2.5, string: '2.50' })),
  reason: Type.Optional(Type.String({ minLength: 1, maxLength: REFUND_REASON_MAX_LENGTH, description: 'Free text, stored and returned.', examples: ['requested_by_customer'] })),
  metadata: Type.Optional(Metadata)
}, { $id: 'CreateRefundRequest', title: 'Refund request', additionalProperties: false, examples: [{ amount: 2.5, reason: 'requested_by_customer', metadata: { returnId: 'R-77' } }] })
export type CreateRefundBodyType = Static<typeof CreateRefundBody>

export const RefundParams = Type.Object({
  id: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The payment id. Anything that is not a GUID is answered 404.', examples: [exampleRefund.paymentId] }),
  refundId: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The refund id. Anything that is not a GUID is answered 404.', examples: [exampleRefund.id] })
})

export const RefundListQuery = PageQuery

export const RefundList = pageOf(Refund, 'Refund list', exampleRefund)

export const refundErrors = {
  validation: problemResponse('Validation failure: `errors` names each field (e.g. `amount` ≤ 0 or with too many decimals for the currency, `metadata`).'),
  notFound: problemResponse('No such payment (or refund), or not yours.'),
  failed: problemResponse('The gateway refused the refund: `type` urn:problem-type:refund-failed, with `refundId` and `failureCode`. The refund is stored as `failed` and its amount is refundable again.'),
  conflict: problemResponse('The payment cannot be refunded (`type` urn:problem-type:payment-not-refundable: it is pending, declined, failed, ' +
    'canceled or already refunded), the amount exceeds what remains refundable (urn:problem-type:refund-exceeds-remaining, with ' +
    '`remainingAmount`), or the Idempotency-Key was reused with another body or is in flight.'),
  unavailable: problemResponse('The gateway did not confirm the refund: it is stored `pending` (`refundId`), its amount stays held. ' +
    'Retry with the same Idempotency-Key after Retry-After, or let the recovery worker finish it.')
}
