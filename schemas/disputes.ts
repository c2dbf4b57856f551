import { Type, type Static } from '@sinclair/typebox'
import { DISPUTE_STATUSES, type Dispute as StoredDispute, type DisputeStatus as StoredDisputeStatus } from '../src/domain/disputes'
import { exponentOf } from '../src/domain/currencies'
import { fromMinorUnits } from '../src/domain/money'
import { problemResponse } from './common'
import { pageOf, pageQueryProperties } from './listing'
import { MAX_PARAM_LENGTH } from './patterns'
import { ConnectorType } from './connector-types'

const exampleBase = {
  paymentId: '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f',
  amount: 10.1,
  currency: 'USD',
  connector: { id: '019aa9e0-4c1d-7e2f-8a3b-4c5d6e7f8091', type: 'stripe' },
  connectorReference: 'dp_1QJk2bLkdIwHu7ix0aBcDeFg',
  createdAt: '2026-01-20T08:00:00.000Z'
}

/** One example per status (the dispute's life at Stripe: needs a response, under review, then closed). */
export const disputeExamples: Record<StoredDisputeStatus, Record<string, unknown>> = {
  needs_response: { id: '019aaa10-0b1c-7d2e-8f30-415263748596', ...exampleBase, reason: 'fraudulent', status: 'needs_response', fundsWithdrawn: true, evidenceDueBy: '2026-01-30T23:59:59.000Z', updatedAt: exampleBase.createdAt },
  under_review: { id: '019aaa10-0b1c-7d2e-8f30-415263748597', ...exampleBase, reason: 'product_not_received', status: 'under_review', fundsWithdrawn: true, evidenceDueBy: '2026-01-30T23:59:59.000Z', updatedAt: '2026-01-25T10:00:00.000Z' },
  won: { id: '019aaa10-0b1c-7d2e-8f30-415263748598', ...exampleBase, reason: 'fraudulent', status: 'won', fundsWithdrawn: false, updatedAt: '2026-03-02T12:00:00.000Z' },
  lost: { id: '019aaa10-0b1c-7d2e-8f30-415263748599', ...exampleBase, connector: { id: '019aa9e0-4c1d-7e2f-8a3b-4c5d6e7f8092', type: 'adyen' }, connectorReference: 'ZB8K9L7M6N5P4Q3R', reason: '10.4', status: 'lost', fundsWithdrawn: true, updatedAt: '2026-03-02T12:00:00.000Z' },
  accepted: { id: '019aaa10-0b1c-7d2e-8f30-41526374859a', ...exampleBase, reason: 'duplicate', status: 'accepted', fundsWithdrawn: true, updatedAt: '2026-01-21T09:00:00.000Z' }
}

export const DisputeStatus = Type.Unsafe<StoredDisputeStatus>({
  type: 'string',
  enum: [...DISPUTE_STATUSES],
  description: '`needs_response`: you may answer the dispute at your PSP until `evidenceDueBy`; `under_review`: the evidence is with the cardholder\'s bank; ' +
    '`won`: decided in your favour (money taken back is reinstated); `lost`: decided for the cardholder (the money stays taken back); `accepted`: conceded. ' +
    'An Adyen dispute may be reopened by a second chargeback or pre-arbitration (won → lost → …); the Disputes section of docs/connectors.md maps every PSP event to these.',
  examples: ['needs_response']
})

export const Dispute = Type.Object({
  id: Type.String({ format: 'uuid', maxLength: 36, description: 'Dispute identifier (a GUID assigned by the service).', examples: [disputeExamples.needs_response.id] }),
  paymentId: Type.String({ format: 'uuid', maxLength: 36, description: 'The disputed payment.', examples: [exampleBase.paymentId] }),
  amount: Type.Number({ description: 'The disputed amount in major units of `currency`.', examples: [10.1] }),
  currency: Type.String({ maxLength: 3, pattern: '^[A-Z]{3}$', description: 'The dispute\'s currency, as the PSP reports it.', examples: ['USD'] }),
  reason: Type.Optional(Type.String({ maxLength: 255, description: 'The PSP\'s reason, kept as given: Stripe\'s `reason` (fraudulent, product_not_received, …), Adyen\'s `chargebackReasonCode` (the scheme\'s code, e.g. 10.4). Absent when the PSP gave none.', examples: ['fraudulent'] })),
  status: DisputeStatus,
  fundsWithdrawn: Type.Boolean({ description: 'True while the PSP holds the disputed money back from you (withdrawn and not reinstated); it counts in the payment\'s `amountDisputed`.', examples: [true] }),
  evidenceDueBy: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Until when you may answer, when the PSP says (Stripe: evidence_details.due_by; Adyen: defensePeriodEndsAt).', examples: ['2026-01-30T23:59:59.000Z'] })),
  connector: Type.Object({
    id: Type.String({ format: 'uuid', maxLength: 36, description: 'The connector account that reported it.' }),
    type: ConnectorType
  }, { additionalProperties: false, description: 'The connector account of the disputed payment.' }),
  connectorReference: Type.String({ maxLength: 255, description: 'The PSP\'s id of the dispute (Stripe: `dp_…`; Adyen: the dispute\'s pspReference).', examples: [exampleBase.connectorReference] }),
  createdAt: Type.String({ format: 'date-time', maxLength: 64, description: 'When the service learned of it.', examples: [exampleBase.createdAt] }),
  updatedAt: Type.String({ format: 'date-time', maxLength: 64, examples: [exampleBase.createdAt] })
}, {
  $id: 'Dispute',
  title: 'Dispute',
  description: 'A cardholder contested a payment at the card scheme and the PSP reported it (Stripe: charge.dispute.*; Adyen: chargeback notifications). ' +
    'Read-only here: answer it at the PSP.',
  additionalProperties: false,
  examples: Object.values(disputeExamples)
})
export type DisputeType = Static<typeof Dispute>

/** A dispute as the API shows it (responses and event data). */
export function toPublicDispute (dispute: StoredDispute): DisputeType {
  return {
    id: dispute.id,
    paymentId: dispute.paymentId,
    amount: fromMinorUnits(dispute.amountMinor, exponentOf(dispute.currency)),
    currency: dispute.currency,
    ...(dispute.reason !== null ? { reason: dispute.reason } : {}),
    status: dispute.status,
    fundsWithdrawn: dispute.fundsWithdrawn,
    ...(dispute.evidenceDueBy !== null ? { evidenceDueBy: dispute.evidenceDueBy } : {}),
    connector: { id: dispute.connector.id, type: dispute.connector.type },
    connectorReference: dispute.connectorReference,
    createdAt: dispute.createdAt,
    updatedAt: dispute.updatedAt
  }
}

export const DisputeList = pageOf(Dispute, 'Dispute list', disputeExamples.needs_response)

export const DisputeListQuery = Type.Object({
  ...pageQueryProperties,
  status: Type.Optional(DisputeStatus),
  paymentId: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only the disputes of this payment (any letter case).', examples: [exampleBase.paymentId] }))
}, { additionalProperties: false })

export const DisputeParams = Type.Object({
  id: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The dispute id. Anything that is not a GUID is answered 404.', examples: [disputeExamples.needs_response.id] })
})

export const disputeErrors = {
  validation: problemResponse('Validation failure: an unknown query member, a bad `status`, `paymentId` or `limit`, or a cursor that is not in this list.'),
  notFound: problemResponse('No such dispute, or not yours.')
}
