import { GatewayUnavailableError, NotFoundError } from '../domain/errors'
import { ConnectorEventNotMatchedError } from '../domain/connectors'
import { isGuid, newId } from '../domain/ids'
import { ACCEPTED_STAGE, DisputeNotAcceptableError, mergeDispute, unrecordedDisputedMinor, withDisputes, type Dispute } from '../domain/disputes'
import type { EventOf } from '../domain/events'
import type { Page } from '../domain/pagination'
import { awaitsChargeOutcome } from '../domain/payments'
import type { Database, DisputeChange, DisputeListQuery } from '../store/types'
import type { ConnectorDirectory } from '../gateway/connectors'
import { GatewayError, type AcceptDisputeResult } from '../gateway/types'
import { GATEWAY_RETRY_AFTER_SECONDS, type Logger } from './payments'
import type { DisputeReports } from '../gateway/inbound'

export interface DisputeDeps {
  db: Pick<Database, 'disputes'>
  /** The connectors a dispute is accepted at; undefined: accepting is refused as unsupported (core tests). */
  connectors?: Pick<ConnectorDirectory, 'gatewayOf'>
  clock: () => number
  log: Logger
  /** dispute.created / updated / closed, written with the change; undefined: no events (core tests). */
  events?: { dispute: EventOf<DisputeChange> }
}

export interface DisputeService extends DisputeReports {
  /** The dispute, when it is `merchantId`'s (NotFoundError otherwise, another merchant's included). */
  get: (id: string, merchantId: string) => Promise<Dispute>
  /** A merchant's disputes, newest first; UnknownCursorError for a cursor outside the list. */
  list: (query: DisputeListQuery) => Promise<Page<Dispute>>
  /**
   * Concedes `merchantId`'s dispute at its PSP (under a key derived from the dispute, so asking again replays the call)
   * and records it `accepted` (dispute.closed). Accepting an accepted dispute answers it again. NotFoundError;
   * DisputeNotAcceptableError when it is closed, the PSP refuses, or the connector cannot; GatewayUnavailableError when
   * the PSP did not answer (the dispute is unchanged: ask again).
   */
  acceptDispute: (id: string, merchantId: string) => Promise<Dispute>
}

/** The PSP call's key: one per dispute, so a retry, a crash or a second request replays the first call. */
export function acceptDisputeKey (disputeId: string): string {
  return `dispute-${disputeId}:accept`
}

function shortId (id: string): string {
  return id.length <= 64 ? id : `${id.slice(0, 64)}…`
}

export function disputeService (deps: DisputeDeps): DisputeService {
  const nowIso = (): string => new Date(deps.clock()).toISOString()

  async function owned (id: string, merchantId: string): Promise<Dispute> {
    const dispute = isGuid(id) ? await deps.db.disputes.get(id.toLowerCase()) : undefined
    if (dispute === undefined || dispute.merchantId !== merchantId) throw new NotFoundError(`No dispute has the id '${shortId(id)}'.`)
    return dispute
  }

  async function askToAccept (dispute: Dispute): Promise<AcceptDisputeResult> {
    const gateway = await deps.connectors?.gatewayOf(dispute.connector)
    if (gateway?.acceptDispute === undefined) throw new DisputeNotAcceptableError(dispute, 'unsupported')
    try {
      return await gateway.acceptDispute({ disputeReference: dispute.connectorReference, idempotencyKey: acceptDisputeKey(dispute.id) })
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err
      deps.log.warn({ disputeId: dispute.id, paymentId: dispute.paymentId, gatewayFailure: err.code }, 'the PSP did not confirm accepting a dispute; it is unchanged here')
      throw new GatewayUnavailableError('The PSP did not confirm accepting the dispute; it is unchanged here. Ask again (the same call is replayed).',
        dispute.paymentId, GATEWAY_RETRY_AFTER_SECONDS)
    }
  }

  const service: DisputeService = {
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
        if (unrecorded > 0 && (awaitsChargeOutcome(payment.status) || payment.status === 'requires_capture' || payment.refundPendingMinor > 0)) {
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
      return await owned(id, merchantId)
    },

    async list (query) {
      return await deps.db.disputes.list({ ...query, ...(query.paymentId !== undefined ? { paymentId: query.paymentId.toLowerCase() } : {}) })
    },

    async acceptDispute (id, merchantId) {
      const dispute = await owned(id, merchantId)
      if (dispute.status === 'accepted') return dispute
      if (dispute.status === 'won' || dispute.status === 'lost') throw new DisputeNotAcceptableError(dispute, 'closed')
      const result = await askToAccept(dispute)
      if (result.outcome === 'refused') {
        deps.log.info({ disputeId: dispute.id, paymentId: dispute.paymentId, reason: result.reason }, 'the PSP refused to accept a dispute')
        throw new DisputeNotAcceptableError(dispute, result.reason)
      }
      const change = await service.applyConnectorReport(dispute.paymentId, dispute.connector, {
        connectorReference: dispute.connectorReference,
        amountMinor: dispute.amountMinor,
        currency: dispute.currency,
        reason: dispute.reason,
        status: 'accepted',
        stage: ACCEPTED_STAGE,
        evidenceDueBy: dispute.evidenceDueBy
      })
      return change?.dispute ?? await owned(id, merchantId)
    }
  }
  return service
}
