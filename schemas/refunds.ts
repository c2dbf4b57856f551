import { MAX_PARAM_LENGTH } from './patterns'
import { amountInput } from './amounts'
import { Type, type Static } from '@sinclair/typebox'
import { REFUND_REASON_MAX_LENGTH, REFUND_STATUSES, type Refund as StoredRefund } from '../src/domain/refunds'
import { exponentOf } from '../src/domain/currencies'
import { fromMinorUnits } from '../src/domain/money'
import { problemResponse } from './common'
import { csvRecord } from '../src/domain/csv'
import { Metadata, metadataMember, PageQuery, pageOf, pageQueryProperties } from './listing'

export const exampleRefund = {
  id: '019aa9f4-1e2d-7c3b-8a49-5d6e7f8091a2',
  paymentId: '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f',
  amount: 2.5,
  currency: 'USD',
  status: 'succeeded',
  reason: 'requested_by_customer',
  metadata: { returnId: 'R-77' },
  origin: 'api',
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
  origin: Type.Unsafe<'api' | 'connector'>({
    type: 'string',
    enum: ['api', 'connector'],
    description: '`api`: made through this API (or by a cancel); `connector`: made at the PSP without us (Stripe Dashboard, Adyen Customer Area) and recorded from the PSP\'s report, so the payment\'s amounts match the PSP\'s.',
    examples: ['api']
  }),
  connectorReference: Type.Optional(Type.String({ maxLength: 255, description: 'Present when `origin` is `connector`: the PSP\'s id of the refund (Stripe: `re_…`; Adyen: its pspReference).', examples: ['re_3QJk2bLkdIwHu7ix1a2b3c4d'] })),
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
    origin: refund.origin ?? 'api',
    ...(refund.connectorReference !== undefined ? { connectorReference: refund.connectorReference } : {}),
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

/** The filters of a merchant's refunds (GET /api/refunds and its export). */
const merchantRefundFilters = {
  status: Type.Optional(RefundStatus),
  createdGte: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Only refunds created at or after this instant (ISO 8601).', examples: ['2026-01-01T00:00:00Z'] })),
  createdLt: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Only refunds created before this instant (ISO 8601).', examples: ['2026-02-01T00:00:00Z'] }))
}

export const MerchantRefundListQuery = Type.Object({ ...pageQueryProperties, ...merchantRefundFilters }, { additionalProperties: false })
export const RefundExportQuery = Type.Object(merchantRefundFilters, { additionalProperties: false })

export const REFUND_CSV_HEADER = ['id', 'payment_id', 'created_at', 'updated_at', 'status', 'amount', 'currency', 'reason', 'failure_code', 'metadata'] as const

/** One refund as a CSV record, in REFUND_CSV_HEADER's order. */
export function refundCsvRow (refund: RefundType): Array<string | number | undefined> {
  return [refund.id, refund.paymentId, refund.createdAt, refund.updatedAt, refund.status, refund.amount, refund.currency, refund.reason, refund.failureCode,
    refund.metadata === undefined ? undefined : JSON.stringify(refund.metadata)]
}

export const refundExportResponse = {
  description: 'The CSV (RFC 4180, UTF-8, header record) of every refund the filters select, newest first, streamed one page at a time ' +
    '(constant memory). Text cells a spreadsheet would run as a formula are prefixed with a single quote.',
  headers: { 'content-disposition': { type: 'string', maxLength: 100, description: '`attachment; filename="refunds-<UTC day>.csv"`.' } },
  content: {
    'text/csv': {
      schema: Type.String({ description: 'CSV text.' }),
      example: csvRecord(REFUND_CSV_HEADER) + csvRecord(refundCsvRow(exampleRefund as RefundType))
    }
  }
}

export const refundErrors = {
  validation: problemResponse('Validation failure: `errors` names each field (e.g. `amount` ≤ 0 or with too many decimals for the currency, `metadata`).'),
  notFound: problemResponse('No such payment (or refund), or not yours.'),
  failed: problemResponse('The gateway refused the refund: `type` urn:problem-type:refund-failed, with `refundId` and `failureCode`. The refund is stored as `failed` and its amount is refundable again.'),
  conflict: problemResponse('The payment cannot be refunded (`type` urn:problem-type:payment-not-refundable: it is pending, declined, failed, ' +
    'canceled or already refunded), the payment has a dispute that is not won (urn:problem-type:payment-disputed; GET /api/disputes?paymentId=…), the amount exceeds what remains refundable (urn:problem-type:refund-exceeds-remaining, with ' +
    '`remainingAmount`), or the Idempotency-Key was reused with another body or is in flight.'),
  unavailable: problemResponse('The gateway did not confirm the refund: it is stored `pending` (`refundId`), its amount stays held. ' +
    'Retry with the same Idempotency-Key after Retry-After, or let the recovery worker finish it.')
}
