import { NotFoundError } from '../domain/errors'
import { ConnectorEventNotMatchedError } from '../domain/connectors'
import { isGuid, newId } from '../domain/ids'
import { mergeDispute, unrecordedDisputedMinor, withDisputes, type Dispute, type DisputeReport } from '../domain/disputes'
import type { EventOf } from '../domain/events'
import type { Page } from '../domain/pagination'
import type { ConnectorRef } from '../domain/routing'
import type { Database, DisputeChange, DisputeListQuery } from '../store/types'
import type { Logger } from './payments'

export interface DisputeDeps {
  db: Pick<Database, 'disputes'>
  clock: () => number
  log: Logger
  /** dispute.created / updated / closed, written with the change; undefined: no events (core tests). */
  events?: { dispute: EventOf<DisputeChange> }
}

export interface DisputeService {
  /**
   * Records what a connector reported of a dispute of `paymentId` (issue 40): creates the dispute, or merges the report
   * into the recorded one (a report of an earlier stage changes nothing, so duplicates and any order end in the same
   * state), and sets the payment's amount disputed, in one transaction with its event. Undefined: no such payment.
   */
  applyConnectorReport: (paymentId: string, connector: ConnectorRef & { id: string }, report: DisputeReport) => Promise<DisputeChange | undefined>
  /** The dispute, when it is `merchantId`'s (NotFoundError otherwise, another merchant's included). */
  get: (id: string, merchantId: string) => Promise<Dispute>
  /** A merchant's disputes, newest first; UnknownCursorError for a cursor outside the list. */
  list: (query: DisputeListQuery) => Promise<Page<Dispute>>
}

function shortId (id: string): string {
  return id.length <= 64 ? id : `${id.slice(0, 64)}…`
}

export function disputeService (deps: DisputeDeps): DisputeService {
  const nowIso = (): string => new Date(deps.clock()).toISOString()
  return {
    async applyConnectorReport (paymentId, connector, report) {
      const at = nowIso()
      const change = await deps.db.disputes.record(paymentId, { id: connector.id, reference: report.connectorReference }, (payment, existing, all) => {
        const dispute = mergeDispute(existing, report, { id: newId(), payment, connector, at })
        if (dispute === existing) return undefined
        const disputes = [...all.filter((other) => other.id !== dispute.id), dispute]
        const next = withDisputes(payment, disputes, at)
        const unrecorded = unrecordedDisputedMinor(next, disputes)
        // Money withdrawn from a payment whose charge, capture or refunds are not all recorded here yet (an answer lost, a
        // refund in flight): applied when the PSP sends the report again, once they are (nothing is capped away for good).
        if (unrecorded > 0 && (payment.status === 'pending' || payment.status === 'requires_capture' || payment.refundPendingMinor > 0)) {
          throw new ConnectorEventNotMatchedError()
        }
        if (unrecorded > 0) {
          deps.log.error({ paymentId, paymentStatus: payment.status, disputeId: dispute.id, unrecordedMinor: unrecorded },
            'the PSP withdrew more for disputes than the payment has left after its refunds; the amount disputed is capped, needs follow-up')
        }
        return { dispute, payment: next.amountDisputedMinor === undefined ? { ...next, amountDisputedMinor: 0 } : next }
      }, deps.events?.dispute)
      if (change !== undefined && change.dispute !== change.previous) {
        deps.log.info({ paymentId, disputeId: change.dispute.id, status: change.dispute.status, fundsWithdrawn: change.dispute.fundsWithdrawn, connectorId: connector.id },
          change.previous === undefined ? 'dispute recorded' : 'dispute updated')
      }
      return change
    },

    async get (id, merchantId) {
      const dispute = isGuid(id) ? await deps.db.disputes.get(id.toLowerCase()) : undefined
      if (dispute === undefined || dispute.merchantId !== merchantId) throw new NotFoundError(`No dispute has the id '${shortId(id)}'.`)
      return dispute
    },

    async list (query) {
      return await deps.db.disputes.list({ ...query, ...(query.paymentId !== undefined ? { paymentId: query.paymentId.toLowerCase() } : {}) })
    }
  }
}
