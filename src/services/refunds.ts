import { randomUUID } from 'node:crypto'
import { DomainError, GatewayUnavailableError, NotFoundError, ValidationError } from '../domain/errors'
import { isGuid, newId } from '../domain/ids'
import { formatMinorUnits } from '../domain/money'
import {
  applyConnectorRefund, applySucceededRefund, awaitsChargeOutcome, isCancelRequested, PaymentNotCancelableError, refundableMinor, releaseFailedRefund, reserveRefund, transition,
  type Payment, type PaymentAttempt
} from '../domain/payments'
import { ConnectorEventNotMatchedError } from '../domain/connectors'
import { refundAmountMinor, transitionRefund, type Refund } from '../domain/refunds'
import type { Metadata } from '../domain/metadata'
import type { Page, PageRequest } from '../domain/pagination'
import { GatewayError, type PaymentGateway, type RefundResult } from '../gateway/types'
import type { Database, MerchantRefundQuery, StoredResponse } from '../store/types'
import { exponentOf } from '../domain/currencies'
import { GATEWAY_RETRY_AFTER_SECONDS, referenceOf, type Logger } from './payments'
import { downstreamKeyFor } from '../domain/payments'
import type { ConnectorDirectory } from '../gateway/connectors'
import { singleGatewayDirectory } from '../gateway/directory'
import { unfinishedKeyOf, type OwnedKey, type ResponseOrigin } from './keys'
import type { EventFactory } from '../domain/event-factory'
import type { RefundReports } from '../gateway/inbound'

export interface RefundDeps {
  db: Database
  /** The gateway of every payment when there is no `connectors` directory (core tests). */
  gateway: PaymentGateway
  /** The gateway of a payment's connector: a refund goes where its payment was charged. */
  connectors?: ConnectorDirectory
  clock: () => number
  log: Logger
  /** The events of refund and payment changes (written with the change); undefined: no events (core tests). */
  events?: EventFactory
}

export interface RefundInput {
  paymentId: string
  /** Major units; undefined refunds everything that remains. */
  amount?: number
  /** Decimals of the amount as the client wrote it (JSON can carry more than the double keeps). */
  writtenDecimalPlaces?: number
  reason?: string
  metadata?: Metadata
}

export interface RefundRecoveryOptions {
  /** Pending refunds older than this are asked again. */
  ageSeconds: number
  leaseMs: number
  batchSize?: number
  /** The response stored on the unfinished key of a refund it settles. */
  respond: (refund: Refund, origin: ResponseOrigin) => StoredResponse
}

/** `merchantId`: the owner the request acts for; the routes always pass the request's merchant (another merchant's payment is NotFoundError); undefined only in core tests (no tenancy). */
export interface RefundService extends RefundReports {
  /** Refunds (part of) a payment: the refund succeeded or failed; GatewayUnavailableError leaves it pending. */
  create: (input: RefundInput, key?: OwnedKey<Refund>, merchantId?: string) => Promise<Refund>
  get: (paymentId: string, refundId: string, merchantId?: string) => Promise<Refund>
  /** The merchant's refunds, of all its payments, newest first; UnknownCursorError for a cursor outside the list. */
  listForMerchant: (query: MerchantRefundQuery) => Promise<Page<Refund>>
  list: (paymentId: string, page: PageRequest, merchantId?: string) => Promise<Page<Refund>>
  /**
   * Cancels a pending payment: the gateway voids its charge. When the charge had in
   * fact gone through, it is refunded in full (the payment ends `refunded`, the
   * refund listed with reason CANCEL_REFUND_REASON); otherwise the payment ends
   * `canceled`. Idempotent; PaymentNotCancelableError for any other settled payment.
   */
  cancelPayment: (paymentId: string, merchantId?: string) => Promise<Payment>
  /** Settles refunds left pending by an outage or a crash (the recovery worker's pass). */
  recoverPending: (options: RefundRecoveryOptions) => Promise<{ settled: number, stillPending: number }>
}

/** The reason of the refund that gives back a charge found to have gone through when its payment was canceled. */
export const CANCEL_REFUND_REASON = 'payment_canceled'

export function refundDownstreamKey (refundId: string): string {
  return `refund-${refundId}`
}

function shortId (id: string): string {
  return id.length <= 64 ? id : `${id.slice(0, 64)}…`
}

export function refundService (deps: RefundDeps): RefundService {
  const directory = deps.connectors ?? singleGatewayDirectory(deps.gateway)
  const nowIso = (): string => new Date(deps.clock()).toISOString()

  async function visiblePayment (paymentId: string, merchantId: string | undefined): Promise<Payment> {
    const payment = isGuid(paymentId) ? await deps.db.payments.get(paymentId.toLowerCase()) : undefined
    if (payment === undefined || (merchantId !== undefined && payment.merchantId !== merchantId)) {
      throw new NotFoundError(`No payment has the id '${shortId(paymentId)}'.`)
    }
    return payment
  }

  function gatewayUnavailable (paymentId: string, message: string): GatewayUnavailableError {
    return new GatewayUnavailableError(message, paymentId, GATEWAY_RETRY_AFTER_SECONDS)
  }

  /** The refund of a cancel whose charge had gone through, unless it failed. */
  async function cancelRefundOf (paymentId: string): Promise<Refund | undefined> {
    const refunds = await deps.db.refunds.list(paymentId, { limit: 100 })
    return refunds.data.find((candidate) => candidate.reason === CANCEL_REFUND_REASON && candidate.status !== 'failed')
  }

  /** Resumes the refund of a cancel whose charge had gone through (a retry of the cancel). */
  async function resumeCancelRefund (payment: Payment): Promise<Payment | undefined> {
    const refund = await cancelRefundOf(payment.id)
    if (refund === undefined) return undefined
    await settle(refund)
    return await deps.db.payments.get(payment.id)
  }

  /**
   * Remembers on the payment that the merchant canceled it while the connector reports the cancel later, so that a
   * report of the charge captured after all (the cancel impossible) is refunded instead of kept (refundCanceledCharge).
   */
  async function recordCancelRequest (payment: Payment): Promise<Payment> {
    let current: Payment | undefined = payment
    for (let tries = 0; tries < 10 && current !== undefined && !isCancelRequested(current); tries++) {
      const attempt: PaymentAttempt = { connectorId: current.connector.id, connectorType: current.connector.type, outcome: 'cancel_requested', code: 'requested', at: nowIso() }
      if (await deps.db.payments.appendAttempt(current, attempt)) return { ...current, attempts: [...current.attempts, attempt], updatedAt: attempt.at }
      // Another writer changed the attempts meanwhile: read them again.
      current = await deps.db.payments.get(payment.id)
    }
    if (current !== undefined && !isCancelRequested(current) && current.status === 'pending') deps.log.error({ paymentId: payment.id }, 'the cancel request could not be recorded on the payment; needs follow-up')
    return current ?? payment
  }

  /**
   * Asks the gateway to refund a pending refund under its own downstream key
   * (so a retry never refunds twice) and records the outcome on the refund and
   * its payment in one transaction, with the key's response.
   */
  async function settle (refund: Refund, key?: OwnedKey<Refund>): Promise<Refund> {
    if (refund.status !== 'pending') {
      if (key !== undefined) await deps.db.idempotency.finish(key.ref, key.respond(refund))
      return refund
    }
    let result: RefundResult
    try {
      const payment = await deps.db.payments.get(refund.paymentId)
      if (payment === undefined) throw new Error(`the payment ${refund.paymentId} of refund ${refund.id} is not recorded`)
      result = await (await directory.gatewayOf(payment.connector)).refund({
        idempotencyKey: refundDownstreamKey(refund.id),
        refundId: refund.id,
        paymentId: refund.paymentId,
        chargeIdempotencyKey: downstreamKeyFor(refund.paymentId),
        ...referenceOf(payment),
        amountMinor: refund.amountMinor,
        amount: formatMinorUnits(refund.amountMinor, exponentOf(refund.currency)),
        currency: refund.currency
      })
    } catch (err) {
      if (err instanceof GatewayError) {
        const unavailable = new GatewayUnavailableError(
          'The payment gateway did not confirm the refund; the refund is pending and its amount stays held. Retry with the same Idempotency-Key to resume it.',
          refund.paymentId,
          GATEWAY_RETRY_AFTER_SECONDS
        )
        unavailable.extensions.refundId = refund.id
        throw unavailable
      }
      throw err
    }
    if (result.outcome === 'received') {
      // Accepted; the connector's notification settles it. The key answers 202 with the pending refund.
      if (key !== undefined) await deps.db.idempotency.finish(key.ref, key.respond(refund))
      deps.log.info({ refundId: refund.id, paymentId: refund.paymentId }, 'refund received by the connector; its outcome arrives by notification')
      return refund
    }
    const at = nowIso()
    const final = result.outcome === 'succeeded'
      ? transitionRefund(refund, 'succeeded', at)
      : transitionRefund(refund, 'failed', at, result.failureCode)
    const stored = await deps.db.refunds.complete(refund.id, (current, payment) => ({
      refund: final,
      payment: final.status === 'succeeded' ? applySucceededRefund(payment, current.amountMinor, at) : releaseFailedRefund(payment, current.amountMinor, at)
    }), key === undefined ? undefined : { ref: key.ref, response: key.respond(final) }, deps.events?.refund)
    if (stored.refund.status === final.status) {
      deps.log.info({ refundId: refund.id, paymentId: refund.paymentId, status: final.status, paymentStatus: stored.payment.status }, 'refund settled')
    } else if (key !== undefined) {
      // Another attempt settled it first: answer (and store) what it recorded.
      await deps.db.idempotency.finish(key.ref, key.respond(stored.refund))
    }
    return stored.refund
  }

  const service: RefundService = {
    async create (input, key, merchantId) {
      if (key?.resourceId != null) {
        const existing = await deps.db.refunds.get(input.paymentId.toLowerCase(), key.resourceId)
        if (existing !== undefined) return await settle(existing, key)
      }
      const paymentId = input.paymentId.toLowerCase()
      if (!isGuid(paymentId)) throw new NotFoundError(`No payment has the id '${shortId(input.paymentId)}'.`)
      const at = nowIso()
      const decision = await deps.db.refunds.create(paymentId, (payment) => {
        const amount = refundAmountMinor(payment, input.amount, input.writtenDecimalPlaces)
        if ('errors' in amount) throw new ValidationError(amount.errors)
        return {
          payment: reserveRefund(payment, amount.amountMinor, at),
          refund: {
            id: newId(),
            paymentId,
            amountMinor: amount.amountMinor,
            currency: payment.currency,
            status: 'pending',
            reason: input.reason ?? null,
            failureCode: null,
            metadata: input.metadata ?? {},
            createdAt: at,
            updatedAt: at
          }
        }
      }, { ...(key === undefined ? {} : { key: key.ref }), ...(merchantId === undefined ? {} : { merchantId }) })
      if (decision === undefined) throw new NotFoundError(`No payment has the id '${shortId(input.paymentId)}'.`)
      deps.log.info({ refundId: decision.refund.id, paymentId, amountMinor: decision.refund.amountMinor }, 'refund created (pending)')
      return await settle(decision.refund, key)
    },

    async cancelPayment (paymentId, merchantId) {
      const payment = await visiblePayment(paymentId, merchantId)
      if (payment.status === 'canceled') return payment
      // A payment waiting for its shopper is canceled at its connector like a pending one (its authentication can no longer complete).
      const from = payment.status === 'requires_action' ? 'requires_action' : 'pending'
      if (payment.status !== 'pending' && payment.status !== 'requires_action') {
        const resumed = await resumeCancelRefund(payment)
        if (resumed !== undefined) return resumed
        throw new PaymentNotCancelableError(payment.id, payment.status)
      }
      let result
      try {
        result = await (await directory.gatewayOf(payment.connector)).void({ chargeIdempotencyKey: downstreamKeyFor(payment.id), paymentId: payment.id, ...referenceOf(payment) })
      } catch (err) {
        if (!(err instanceof GatewayError)) throw err
        throw gatewayUnavailable(payment.id, 'The payment gateway did not confirm the cancel; the payment is still pending. Retry the cancel after Retry-After.')
      }
      const at = nowIso()
      // Accepted; the connector's notification settles it (the payment stays pending meanwhile).
      if (result.outcome === 'received') return await recordCancelRequest(payment)
      if (result.outcome === 'voided') {
        const stored = await deps.db.payments.complete({ ...transition(payment, 'canceled', at), nextAction: null }, undefined, deps.events?.payment, from)
        if (stored.status !== 'canceled') throw new PaymentNotCancelableError(stored.id, stored.status)
        deps.log.info({ paymentId: payment.id, status: 'canceled' }, 'payment canceled')
        return stored
      }
      if (result.outcome === 'declined') {
        const stored = await deps.db.payments.complete({ ...transition(payment, 'declined', at, result.declineCode), connectorReference: result.chargeId, nextAction: null }, undefined, deps.events?.payment, from)
        throw new PaymentNotCancelableError(stored.id, stored.status)
      }
      // The charge went through before the void: record it truthfully (its reference too: a later dispute names it), then give the money back.
      const charged = await deps.db.payments.complete({ ...transition(payment, 'succeeded', at), connectorReference: result.chargeId, nextAction: null }, undefined, deps.events?.payment, from)
      deps.log.info({ paymentId: payment.id, status: charged.status }, 'canceled payment had been charged; refunding it')
      await service.create({ paymentId: payment.id, reason: CANCEL_REFUND_REASON })
      return await visiblePayment(payment.id, merchantId)
    },

    async get (paymentId, refundId, merchantId) {
      await visiblePayment(paymentId, merchantId)
      const refund = isGuid(refundId) ? await deps.db.refunds.get(paymentId.toLowerCase(), refundId.toLowerCase()) : undefined
      if (refund === undefined) throw new NotFoundError(`The payment has no refund with the id '${shortId(refundId)}'.`)
      return refund
    },

    async listForMerchant (query) {
      return await deps.db.refunds.listForMerchant(query)
    },

    async list (paymentId, page, merchantId) {
      await visiblePayment(paymentId, merchantId)
      return await deps.db.refunds.list(paymentId.toLowerCase(), page)
    },

    async applyConnectorOutcome (paymentId, refundId, outcome) {
      const refund = await deps.db.refunds.get(paymentId, refundId)
      if (refund === undefined || refund.status !== 'pending') return refund
      const at = nowIso()
      const final = transitionRefund(refund, outcome.status, at, outcome.status === 'failed' ? outcome.failureCode : null)
      const stored = await deps.db.refunds.complete(refund.id, (current, payment) => ({
        refund: final,
        payment: final.status === 'succeeded' ? applySucceededRefund(payment, current.amountMinor, at) : releaseFailedRefund(payment, current.amountMinor, at)
      }), undefined, deps.events?.refund)
      deps.log.info({ refundId, paymentId, status: stored.refund.status, paymentStatus: stored.payment.status }, 'connector reported the refund\'s outcome')
      return stored.refund
    },

    async recordConnectorRefund (paymentId, report) {
      const recorded = await deps.db.refunds.getByConnectorReference(paymentId, report.connectorReference)
      if (recorded !== undefined) return recorded
      const at = nowIso()
      const context = { paymentId, connectorRefund: report.connectorReference, amountMinor: report.amountMinor, currency: report.currency }
      try {
        const decision = await deps.db.refunds.create(paymentId, (payment) => {
          if (payment.currency !== report.currency) throw new ValidationError({ currency: [`The PSP's refund is in ${report.currency}, the payment in ${payment.currency}.`] })
          // Our records lag the PSP's (a charge or capture answer lost, a refund of ours in flight): the PSP sends it again.
          // A dispute recorded here may have been won at the PSP already (its reinstatement not told yet): the same.
          const inFlight = payment.refundPendingMinor > 0 || (payment.amountDisputedMinor ?? 0) > 0
          const lagging = awaitsChargeOutcome(payment.status) || payment.status === 'requires_capture' || (inFlight && report.amountMinor > refundableMinor(payment))
          if (lagging) throw new ConnectorEventNotMatchedError()
          return {
            payment: applyConnectorRefund(payment, report.amountMinor, at),
            refund: {
              id: newId(),
              paymentId,
              amountMinor: report.amountMinor,
              currency: report.currency,
              status: 'succeeded',
              reason: null,
              failureCode: null,
              metadata: {},
              origin: 'connector',
              connectorReference: report.connectorReference,
              createdAt: at,
              updatedAt: at
            }
          }
        }, deps.events === undefined ? {} : { event: deps.events.refund })
        if (decision !== undefined) deps.log.info({ ...context, refundId: decision.refund.id, paymentStatus: decision.payment.status }, 'refund made at the connector recorded')
        return decision?.refund
      } catch (err) {
        if (err instanceof ConnectorEventNotMatchedError) throw err
        if (err instanceof DomainError) {
          deps.log.error({ ...context, err }, 'the connector reports a refund made there that does not fit the payment; not recorded, needs follow-up')
          return undefined
        }
        // Two reports at once: the unique (payment, PSP id) index kept one.
        const raced = await deps.db.refunds.getByConnectorReference(paymentId, report.connectorReference)
        if (raced !== undefined) return raced
        throw err
      }
    },

    async refundCanceledCharge (paymentId) {
      const existing = await cancelRefundOf(paymentId)
      // Made already: one still pending is the refund recovery worker's to resume (under its own key), never asked twice here.
      if (existing !== undefined) return existing
      const payment = await deps.db.payments.get(paymentId)
      if (payment === undefined || refundableMinor(payment) <= 0) return undefined
      try {
        const refund = await service.create({ paymentId, reason: CANCEL_REFUND_REASON })
        deps.log.warn({ paymentId, refundId: refund.id, status: refund.status }, 'a payment canceled while its outcome was unknown had been captured; refunding it in full')
        return refund
      } catch (err) {
        if (!(err instanceof DomainError)) throw err
        // The same report processed at once elsewhere made the refund (or the gateway left it pending: recovery resumes it).
        const made = await cancelRefundOf(paymentId)
        if (made !== undefined) return made
        // A dispute opened meanwhile (409 payment-disputed), or another refund took the rest: for a person.
        deps.log.error({ paymentId, err }, 'a payment canceled while its outcome was unknown had been captured and cannot be refunded here; needs follow-up')
        return undefined
      }
    },

    /**
     * Refunds pending for longer than `ageSeconds` (an outage, a crash) are
     * asked again under their downstream key: the gateway refunds at most once.
     * Their key, if unfinished, gets the final response.
     */
    async recoverPending (options) {
      const now = deps.clock()
      const leased = await deps.db.refunds.leasePending({
        createdBefore: new Date(now - options.ageSeconds * 1000).toISOString(),
        now,
        leaseUntil: now + options.leaseMs,
        limit: options.batchSize ?? 50
      })
      const traceId = `recovery-${randomUUID()}`
      let settled = 0
      for (const refund of leased) {
        const key = await unfinishedKeyOf(deps.db, refund.id, traceId, options.respond)
        try {
          await settle(refund, key)
          settled++
        } catch (err) {
          if (!(err instanceof GatewayUnavailableError)) deps.log.error({ err, refundId: refund.id, traceId }, 'recovery of a pending refund failed')
        }
      }
      return { settled, stillPending: leased.length - settled }
    }
  }
  return service
}
