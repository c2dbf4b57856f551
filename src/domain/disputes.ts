import { ConflictError } from './errors'
import type { Payment } from './payments'
import type { ConnectorRef } from './routing'

/**
 * Disputes (issue 40): a cardholder contested a payment at the card scheme, and the PSP tells us. The statuses are the contract:
 * - `needs_response`: the merchant may answer (send evidence) until `evidenceDueBy`;
 * - `under_review`: evidence is with the issuer;
 * - `won`: the dispute ended in the merchant's favour (money withdrawn is reinstated);
 * - `lost`: it ended in the cardholder's favour (the money stays withdrawn);
 * - `accepted`: the merchant conceded it.
 */
export const DISPUTE_STATUSES = ['needs_response', 'under_review', 'won', 'lost', 'accepted'] as const
export type DisputeStatus = typeof DISPUTE_STATUSES[number]

/** Statuses after which the PSP reports nothing more in the ordinary course (a later stage may still reopen an Adyen dispute). */
export const CLOSED_DISPUTE_STATUSES: readonly DisputeStatus[] = ['won', 'lost', 'accepted']

export function isClosedDispute (status: DisputeStatus): boolean {
  return CLOSED_DISPUTE_STATUSES.includes(status)
}

export interface Dispute {
  id: string
  /** The merchant of the disputed payment (tenancy; not part of the representation). */
  merchantId: string | null
  paymentId: string
  /** Minor units of `currency` the cardholder disputes. */
  amountMinor: number
  currency: string
  /** The PSP's reason, kept as given (Stripe's `reason`, Adyen's `chargebackReasonCode`); null when it gave none. */
  reason: string | null
  status: DisputeStatus
  /** True while the PSP holds the disputed money back from the merchant (withdrawn and not reinstated). */
  fundsWithdrawn: boolean
  /** Until when the merchant may answer, when the PSP says. */
  evidenceDueBy: string | null
  connector: ConnectorRef & { id: string }
  /** The PSP's id of the dispute (Stripe: `dp_…`; Adyen: the dispute's pspReference). */
  connectorReference: string
  /**
   * How far the dispute got, as the PSP's documented order of events ranks it (see DisputeReport.stage): a report of
   * an earlier stage than the one recorded changes nothing, so any order of arrival ends in the same state.
   */
  stage: number
  /**
   * How many times money moved for the dispute, in the PSP's order: 0 none, 1 withdrawn, 2 reinstated, 3 withdrawn
   * again (Adyen's second chargeback), 4 reinstated again. Odd: withdrawn. Only ever grows.
   */
  fundsStage: number
  createdAt: string
  updatedAt: string
}

/** What one PSP event says about a dispute, in connector-neutral words. */
export interface DisputeReport {
  connectorReference: string
  amountMinor: number
  currency: string
  reason: string | null
  status: DisputeStatus
  /** The event's rank in the PSP's dispute life (a higher stage wins; within one stage a later status in DISPUTE_STATUSES order wins). */
  stage: number
  /** The money movements the event shows (see Dispute.fundsStage); undefined: it says nothing about them. */
  fundsStage?: number
  evidenceDueBy: string | null
}

const statusRank = (status: DisputeStatus): number => DISPUTE_STATUSES.indexOf(status)

/**
 * The dispute after `report`: a new one, or the recorded one merged with it. Monotone in every member that orders
 * (stage and status, money movements), so duplicates and any order of arrival end in the same dispute.
 * Returns the recorded dispute itself (same object) when the report changes nothing.
 */
export function mergeDispute (existing: Dispute | undefined, report: DisputeReport, fresh: { id: string, payment: Payment, connector: ConnectorRef & { id: string }, at: string }): Dispute {
  const fundsStage = Math.max(existing?.fundsStage ?? 0, report.fundsStage ?? 0)
  if (existing === undefined) {
    return {
      id: fresh.id,
      merchantId: fresh.payment.merchantId,
      paymentId: fresh.payment.id,
      amountMinor: report.amountMinor,
      currency: report.currency,
      reason: report.reason,
      status: report.status,
      fundsWithdrawn: fundsStage % 2 === 1,
      evidenceDueBy: report.evidenceDueBy,
      connector: fresh.connector,
      connectorReference: report.connectorReference,
      stage: report.stage,
      fundsStage,
      createdAt: fresh.at,
      updatedAt: fresh.at
    }
  }
  const newer = report.stage > existing.stage || (report.stage === existing.stage && statusRank(report.status) > statusRank(existing.status))
  const merged: Dispute = {
    ...existing,
    status: newer ? report.status : existing.status,
    stage: Math.max(existing.stage, report.stage),
    amountMinor: newer ? report.amountMinor : existing.amountMinor,
    reason: newer ? report.reason ?? existing.reason : existing.reason ?? report.reason,
    evidenceDueBy: newer ? report.evidenceDueBy ?? existing.evidenceDueBy : existing.evidenceDueBy ?? report.evidenceDueBy,
    fundsStage,
    fundsWithdrawn: fundsStage % 2 === 1
  }
  const same = merged.status === existing.status && merged.stage === existing.stage && merged.amountMinor === existing.amountMinor &&
    merged.reason === existing.reason && merged.evidenceDueBy === existing.evidenceDueBy && merged.fundsStage === existing.fundsStage
  return same ? existing : { ...merged, updatedAt: fresh.at }
}

/**
 * The payment's dispute members from all its disputes: `amountDisputedMinor`, the money withdrawn and not reinstated
 * (in the payment's currency), bounded so that refunded + pending refunds + disputed never exceed what was captured
 * (a refund that raced the withdrawal keeps its money); `disputeOpen` while a dispute is not `won`.
 */
export function withDisputes (payment: Payment, disputes: readonly Dispute[], at: string): Payment {
  const withdrawn = disputes
    .filter((dispute) => dispute.fundsWithdrawn && dispute.currency === payment.currency)
    .reduce((sum, dispute) => sum + dispute.amountMinor, 0)
  const room = Math.max(0, payment.amountCapturedMinor - payment.amountRefundedMinor - payment.refundPendingMinor)
  const amountDisputedMinor = Math.min(withdrawn, room)
  const disputeOpen = disputes.some((dispute) => dispute.status !== 'won')
  if (payment.amountDisputedMinor === amountDisputedMinor && (payment.disputeOpen === true) === disputeOpen) return payment
  const next: Payment = { ...payment, amountDisputedMinor, disputeOpen, updatedAt: at }
  if (!disputeOpen) delete next.disputeOpen
  return next
}

/** The money a dispute reports withdrawn that does not fit on its payment (refunded meanwhile): 0 when it all fits. */
export function unrecordedDisputedMinor (payment: Payment, disputes: readonly Dispute[]): number {
  const withdrawn = disputes.filter((dispute) => dispute.fundsWithdrawn && dispute.currency === payment.currency).reduce((sum, dispute) => sum + dispute.amountMinor, 0)
  return withdrawn - (payment.amountDisputedMinor ?? 0)
}

/** dispute.created for a new dispute, dispute.closed when it reaches won, lost or accepted, dispute.updated for any other change. */
export function disputeEventType (change: { dispute: Dispute, previous: Dispute | undefined }): 'dispute.created' | 'dispute.updated' | 'dispute.closed' {
  if (change.previous === undefined) return 'dispute.created'
  return isClosedDispute(change.dispute.status) && change.dispute.status !== change.previous.status ? 'dispute.closed' : 'dispute.updated'
}

/**
 * The stage an accepted dispute is recorded at: past every stage a PSP reports, so no later report (Stripe's own
 * `lost` for a dispute we closed, a chargeback Adyen sends after the acceptance) turns it back; money movements still merge.
 */
export const ACCEPTED_STAGE = 100

/** A dispute that cannot be accepted: closed already (`won`, `lost`), refused by the PSP, or on a connector that cannot accept one. */
export class DisputeNotAcceptableError extends ConflictError {
  override readonly code = 'DISPUTE_NOT_ACCEPTABLE'
  constructor (dispute: Dispute, reason: string) {
    super(reason === 'closed'
      ? `The dispute is closed (${dispute.status}): there is nothing left to accept.`
      : reason === 'unsupported'
        ? `The dispute's connector (${dispute.connector.type}) cannot accept a dispute; accept it in the PSP's dashboard.`
        : `The PSP refused to accept the dispute (${reason}); its status here is unchanged.`)
    Object.assign(this.extensions, { disputeId: dispute.id, disputeStatus: dispute.status })
  }
}
