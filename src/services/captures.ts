import { randomUUID } from 'node:crypto'
import { GatewayUnavailableError, NotFoundError } from '../domain/errors'
import { isGuid } from '../domain/ids'
import { formatMinorUnits } from '../domain/money'
import { PaymentNotCancelableError, transition, DEFAULT_ACTION_TTL_SECONDS, type CancellationReason, type Payment } from '../domain/payments'
import {
  applyCapture, CaptureFailedError, captureDownstreamKey, captureResourceId, PaymentNotCapturableError, isCaptureKeyOf, releaseCapture, reserveCapture, revertCapture
} from '../domain/captures'
import { GatewayError, type CaptureResult, type PaymentGateway } from '../gateway/types'
import type { Database, StoredResponse } from '../store/types'
import { exponentOf } from '../domain/currencies'
import type { EventFactory } from '../domain/event-factory'
import { GATEWAY_RETRY_AFTER_SECONDS, referenceOf, type Logger } from './payments'
import { downstreamKeyFor } from '../domain/payments'
import type { ConnectorDirectory, ConnectorRef } from '../gateway/connectors'
import { singleGatewayDirectory } from '../gateway/directory'
import { unfinishedKeyOf, type OwnedKey, type ResponseOrigin } from './keys'
import type { CaptureReports } from '../gateway/inbound'
import type { ConnectorCaptureOutcome } from '../domain/captures'

/** What a capture answers: the captured payment, or the gateway's refusal. */
export type CaptureOutcome = Payment | CaptureFailedError

export interface CaptureDeps {
  db: Database
  /** The gateway of every payment when there is no `connectors` directory (core tests). */
  gateway: PaymentGateway
  /** The gateway of a payment's connector. */
  connectors?: ConnectorDirectory
  clock: () => number
  log: Logger
  /** How long a void holds an authorization (longer than a gateway call). */
  holdMs: number
  /** ACTION_TTL_SECONDS: a payment waiting for its shopper longer than this was canceled as abandoned (the recovery worker's), else as requested. */
  actionTtlSeconds?: number
  events?: EventFactory
}

export interface CaptureInput {
  paymentId: string
  /** Major units; undefined captures all that is capturable. */
  amount?: number
  /** Decimals of the amount as the client wrote it. */
  writtenDecimalPlaces?: number
}

/** A key the request owns; its resourceId is the capture an earlier attempt under it reserved (if any). */
export type CaptureKey = OwnedKey<CaptureOutcome>

export interface CaptureRecoveryOptions {
  ageSeconds: number
  leaseMs: number
  batchSize?: number
  /** The response stored on the unfinished key of a capture it finishes. */
  respond: (outcome: CaptureOutcome, origin: ResponseOrigin) => StoredResponse
}

export interface CaptureService extends CaptureReports {
  /**
   * Captures (part of) an authorization once: succeeded with `amountCaptured`. Refusals:
   * PaymentNotCapturableError, ValidationError (amount), CaptureFailedError (the gateway refused;
   * still requires_capture), GatewayUnavailableError (the capture stays reserved and is resumed
   * under the same downstream key by a retry with the same key or by the recovery worker).
   * `merchantId`: another merchant's payment is NotFoundError.
   */
  capture: (input: CaptureInput, key?: CaptureKey, merchantId?: string) => Promise<Payment>
  /**
   * Voids an authorization (requires_capture): `canceled` with cancellationReason `requested`.
   * Undefined when the payment is not an authorization (the refund service cancels pending payments).
   */
  cancelAuthorization: (paymentId: string, merchantId?: string) => Promise<Payment | undefined>
  /**
   * The recovery worker's pass: finishes captures left in flight (a crash, an outage) for longer
   * than `ageSeconds`, reading the gateway's state first and capturing again under the same key
   * only while the authorization is uncaptured; then voids authorizations past captureBefore.
   */
  recover: (options: CaptureRecoveryOptions) => Promise<{ captured: number, expired: number, stillPending: number }>
}

function onConnector (payment: Payment, connector: ConnectorRef): boolean {
  return payment.connector.id === connector.id && payment.connector.type === connector.type
}

function shortId (id: string): string {
  return id.length <= 64 ? id : `${id.slice(0, 64)}…`
}

export function captureService (deps: CaptureDeps): CaptureService {
  const directory = deps.connectors ?? singleGatewayDirectory(deps.gateway)
  const gatewayOf = async (payment: Payment): Promise<PaymentGateway> => await directory.gatewayOf(payment.connector)
  const nowIso = (): string => new Date(deps.clock()).toISOString()
  type Keyed = CaptureKey | undefined

  async function visiblePayment (paymentId: string, merchantId: string | undefined): Promise<Payment> {
    const payment = isGuid(paymentId) ? await deps.db.payments.get(paymentId.toLowerCase()) : undefined
    if (payment === undefined || (merchantId !== undefined && payment.merchantId !== merchantId)) {
      throw new NotFoundError(`No payment has the id '${shortId(paymentId)}'.`)
    }
    return payment
  }

  const render = (outcome: CaptureOutcome, key: Keyed): StoredResponse | undefined => key?.respond(outcome)

  /**
   * A capture outcome the connector reports with no capture of ours in flight (issue 40): a capture made at the PSP
   * (its dashboard, Customer Area) of an authorization → succeeded, as if captured here; a capture the PSP had
   * confirmed that failed later (Adyen's CAPTURE_FAILED after CAPTURE) → requires capture again, payment.capture_failed.
   * The same report again, or one that contradicts a payment money already left, changes nothing (the latter logged).
   */
  async function applyMadeAtConnector (payment: Payment, outcome: ConnectorCaptureOutcome): Promise<Payment> {
    const at = nowIso()
    const context = { paymentId: payment.id, reference: outcome.reference, status: payment.status }
    // Adyen names our captures by their key: the last one is the capture that took (or was to take) the money.
    const ours = outcome.reference !== undefined && isCaptureKeyOf(payment.id, outcome.reference)
    const last = outcome.reference === captureDownstreamKey(payment.id, payment.captureAttempts)
    const captured = payment.status === 'succeeded' || payment.status === 'partially_refunded' || payment.status === 'refunded'
    if (outcome.captured && payment.status === 'requires_capture') {
      if (ours && !last) {
        deps.log.warn(context, 'a connector reports an earlier capture of ours after a later one was asked for; left unchanged, needs follow-up')
        return payment
      }
      if (outcome.amountMinor <= 0 || outcome.amountMinor > payment.amountMinor) {
        deps.log.error({ ...context, amountMinor: outcome.amountMinor }, 'a connector reports a capture this authorization cannot hold; left unchanged, needs follow-up')
        return payment
      }
      // Not ours: made at the PSP. Ours: its failure was recorded, and the PSP took it after all (Adyen re-captures after a technical failure).
      const stored = await deps.db.captures.applyConnectorChange(applyCapture(payment, outcome.amountMinor, at), { status: 'requires_capture', amountCapturedMinor: 0 }, deps.events?.payment)
      deps.log.info({ ...context, status: stored.status, amountCapturedMinor: stored.amountCapturedMinor },
        ours ? 'a capture of ours whose failure was recorded was taken after all' : 'a capture made at the connector was recorded')
      return stored
    }
    if (outcome.captured && captured && !ours) {
      deps.log.error({ ...context, amountMinor: outcome.amountMinor }, 'a connector reports a capture beyond the one recorded; left unchanged, needs follow-up')
      return payment
    }
    if (outcome.captured || !captured) return payment
    if (ours && !last) {
      // An earlier attempt's failure, repeated or late: not the capture that took the money, nothing to undo.
      deps.log.info(context, 'a connector reports the failure of a capture that is not the one recorded; nothing changed')
      return payment
    }
    const reverted = (ours || payment.captureAttempts === 0) ? revertCapture(payment, at) : undefined
    if (reverted === undefined) {
      deps.log.error({ ...context, failureCode: outcome.failureCode },
        'a connector reports a confirmed capture failed, of an automatic payment, of one money went out of, or not the one recorded; left unchanged, needs follow-up')
      return payment
    }
    const stored = await deps.db.captures.applyConnectorChange(reverted, { status: 'succeeded', amountCapturedMinor: payment.amountCapturedMinor }, deps.events?.captureFailed)
    deps.log.warn({ ...context, failureCode: outcome.failureCode, status: stored.status },
      'a capture the connector had confirmed failed later: the payment requires capture again while its authorization lasts')
    return stored
  }

  /** Asks the gateway to capture the reserved amount under the capture's downstream key, then records the outcome. */
  async function captureReserved (payment: Payment, key: Keyed): Promise<Payment> {
    const amountMinor = payment.capturePendingMinor as number
    let result: CaptureResult
    try {
      result = await (await gatewayOf(payment)).capture({
        idempotencyKey: captureDownstreamKey(payment.id, payment.captureAttempts),
        chargeIdempotencyKey: downstreamKeyFor(payment.id),
        ...referenceOf(payment),
        amountMinor,
        amount: formatMinorUnits(amountMinor, exponentOf(payment.currency)),
        currency: payment.currency
      })
    } catch (err) {
      if (err instanceof GatewayError) {
        throw new GatewayUnavailableError(
          'The payment gateway did not confirm the capture; the capture is in progress and the payment still requires capture. ' +
            'Retry with the same Idempotency-Key to resume it.',
          payment.id,
          GATEWAY_RETRY_AFTER_SECONDS
        )
      }
      throw err
    }
    return await record(payment, result, key)
  }

  /**
   * Records a capture's outcome on the payment, with the key's response and (when captured) the
   * payment.succeeded event, in one transaction. A refusal is thrown as CaptureFailedError.
   */
  async function record (payment: Payment, result: CaptureResult, key: Keyed): Promise<Payment> {
    if (result.outcome === 'received') {
      // Accepted; the connector's notification settles it. The reservation stays (no second capture, no refund meanwhile).
      const response = render(payment, key)
      if (key !== undefined && response !== undefined) await deps.db.idempotency.finish(key.ref, response)
      deps.log.info({ paymentId: payment.id, amountMinor: payment.capturePendingMinor }, 'capture received by the connector; its outcome arrives by notification')
      return payment
    }
    const at = nowIso()
    const refusal = result.outcome === 'failed' ? new CaptureFailedError(payment.id, result.failureCode) : undefined
    const final = result.outcome === 'captured' ? applyCapture(payment, result.amountMinor, at) : releaseCapture(payment, at)
    const response = render(refusal ?? final, key)
    const stored = await deps.db.captures.settle(final, key === undefined || response === undefined ? undefined : { ref: key.ref, response },
      refusal === undefined ? deps.events?.payment : undefined)
    if (stored === final) {
      deps.log.info({ paymentId: payment.id, status: final.status, amountCapturedMinor: final.amountCapturedMinor, failureCode: refusal?.failureCode }, 'capture settled')
      if (refusal !== undefined) throw refusal
      return stored
    }
    // Another attempt recorded it first: answer (and store) what it recorded.
    return await answerRecorded(stored, key)
  }

  /** A capture recorded by another attempt (or the recovery worker): the payment as it is, stored on the key. */
  async function answerRecorded (payment: Payment, key: Keyed): Promise<Payment> {
    if (payment.status !== 'succeeded' && payment.status !== 'partially_refunded' && payment.status !== 'refunded') {
      throw new PaymentNotCapturableError(payment.id, payment.status)
    }
    const response = render(payment, key)
    if (key !== undefined && response !== undefined) await deps.db.idempotency.finish(key.ref, response)
    return payment
  }

  /** Voids a held authorization and records it `canceled` (with its event); the hold is released when the gateway cannot be asked. */
  async function voidHeld (payment: Payment, reason: CancellationReason): Promise<Payment> {
    let outcome
    try {
      outcome = (await (await gatewayOf(payment)).void({ chargeIdempotencyKey: downstreamKeyFor(payment.id), paymentId: payment.id, ...referenceOf(payment) })).outcome
    } catch (err) {
      await deps.db.captures.releaseHold(payment.id)
      if (!(err instanceof GatewayError)) throw err
      throw new GatewayUnavailableError('The payment gateway did not confirm the void; the payment still requires capture. Retry the cancel after Retry-After.',
        payment.id, GATEWAY_RETRY_AFTER_SECONDS)
    }
    if (outcome === 'received') {
      // Accepted; the connector's notification cancels it. The hold stays until then (or until it lapses).
      deps.log.info({ paymentId: payment.id }, 'void received by the connector; its outcome arrives by notification')
      return payment
    }
    if (outcome === 'charged') {
      // The gateway captured what this service never recorded: nothing is changed, an operator must look.
      await deps.db.captures.releaseHold(payment.id)
      deps.log.error({ paymentId: payment.id }, 'the gateway reports a capture of an authorization this service did not record; the payment is left as it is')
      throw new PaymentNotCancelableError(payment.id, payment.status)
    }
    const stored = await deps.db.captures.finishVoid(transition(payment, 'canceled', nowIso(), reason), deps.events?.payment)
    deps.log.info({ paymentId: payment.id, status: stored.status, cancellationReason: stored.cancellationReason }, 'authorization voided')
    return stored
  }

  /** Finishes one capture left in flight: the gateway's state first, a capture under the same key only while it is uncaptured. */
  async function resume (payment: Payment, key: Keyed): Promise<Payment> {
    let state
    try {
      state = await (await gatewayOf(payment)).retrieve({ chargeIdempotencyKey: downstreamKeyFor(payment.id), paymentId: payment.id, ...referenceOf(payment) })
    } catch (err) {
      if (err instanceof GatewayError) throw new GatewayUnavailableError('the gateway could not be read', payment.id, GATEWAY_RETRY_AFTER_SECONDS)
      throw err
    }
    switch (state.state) {
      case 'captured': return await record(payment, { outcome: 'captured', captureId: state.chargeId, amountMinor: state.amountCapturedMinor }, key)
      case 'authorized': return await captureReserved(payment, key)
      default: return await record(payment, { outcome: 'failed', failureCode: `authorization_${state.state}` }, key)
    }
  }

  return {
    async capture (input, key, merchantId) {
      const paymentId = input.paymentId.toLowerCase()
      if (key?.resourceId != null) {
        // An earlier attempt under this key reserved a capture: resume it, or answer what was recorded.
        const existing = await visiblePayment(paymentId, merchantId)
        if (existing.capturePendingMinor !== null && captureResourceId(existing.id, existing.captureAttempts) === key.resourceId) {
          return await captureReserved(existing, key)
        }
        return await answerRecorded(existing, key)
      }
      if (!isGuid(paymentId)) throw new NotFoundError(`No payment has the id '${shortId(input.paymentId)}'.`)
      const now = deps.clock()
      const at = new Date(now).toISOString()
      const reserved = await deps.db.captures.reserve(paymentId, (payment, state) =>
        reserveCapture(payment, { amount: input.amount, writtenDecimalPlaces: input.writtenDecimalPlaces, voidInFlight: state.voidInFlight, now }, at),
      { now, ...(key === undefined ? {} : { key: key.ref }), ...(merchantId === undefined ? {} : { merchantId }) })
      if (reserved === undefined) throw new NotFoundError(`No payment has the id '${shortId(input.paymentId)}'.`)
      deps.log.info({ paymentId, amountMinor: reserved.capturePendingMinor, attempt: reserved.captureAttempts }, 'capture reserved')
      return await captureReserved(reserved, key)
    },

    async cancelAuthorization (paymentId, merchantId) {
      const payment = await visiblePayment(paymentId, merchantId)
      if (payment.status !== 'requires_capture') return undefined
      const now = deps.clock()
      const hold = await deps.db.captures.holdForVoid(payment.id, { now, leaseUntil: now + deps.holdMs })
      if (hold === undefined) throw new NotFoundError(`No payment has the id '${shortId(paymentId)}'.`)
      if (!hold.held) {
        if (hold.payment.status === 'canceled') return hold.payment
        // A capture in flight (or recorded), or another void holding it.
        throw new PaymentNotCancelableError(hold.payment.id, hold.payment.status)
      }
      return await voidHeld(hold.payment, 'requested')
    },

    async applyConnectorCapture (paymentId, connector, outcome) {
      const payment = await deps.db.payments.get(paymentId)
      if (payment === undefined || !onConnector(payment, connector)) return payment
      if (payment.capturePendingMinor === null) return await applyMadeAtConnector(payment, outcome)
      const at = nowIso()
      const final = outcome.captured ? applyCapture(payment, outcome.amountMinor, at) : releaseCapture(payment, at)
      const stored = await deps.db.captures.settle(final, undefined, outcome.captured ? deps.events?.payment : undefined)
      deps.log.info({ paymentId, status: stored.status, amountCapturedMinor: stored.amountCapturedMinor, failureCode: outcome.captured ? undefined : outcome.failureCode },
        'connector reported the capture\'s outcome')
      return stored
    },

    async applyConnectorVoid (paymentId, connector, options = {}) {
      const payment = await deps.db.payments.get(paymentId)
      if (payment === undefined || !onConnector(payment, connector)) return payment
      const at = nowIso()
      if (payment.status === 'pending') return await deps.db.payments.complete(transition(payment, 'canceled', at), undefined, deps.events?.payment)
      if (payment.status === 'requires_action') {
        // A cancel accepted by the PSP (the merchant's, or the recovery worker's for a shopper who never came back) of a payment waiting for its shopper.
        const abandoned = deps.clock() - Date.parse(payment.createdAt) >= (deps.actionTtlSeconds ?? DEFAULT_ACTION_TTL_SECONDS) * 1000
        return await deps.db.payments.complete({ ...transition(payment, 'canceled', at, abandoned ? 'abandoned' : 'requested'), nextAction: null }, undefined, deps.events?.payment, 'requires_action')
      }
      if (payment.status !== 'requires_capture' || payment.capturePendingMinor !== null) return payment
      // A void is asked for by a cancel or by the expiry: past captureBefore it was the expiry's.
      const expired = payment.captureBefore !== null && Date.parse(payment.captureBefore) <= deps.clock()
      // Past captureBefore the authorization expired whoever released it (Stripe cancels uncaptured PaymentIntents itself after 7 days).
      const reason = expired ? 'authorization_expired' : options.madeAtConnector === true ? 'connector' : 'requested'
      return await deps.db.captures.finishVoid(transition(payment, 'canceled', at, reason), deps.events?.payment)
    },

    async recover (options) {
      const now = deps.clock()
      const traceId = `recovery-${randomUUID()}`
      const limit = options.batchSize ?? 50
      let captured = 0
      let expired = 0
      let stillPending = 0
      const inFlight = await deps.db.captures.leaseInFlight({
        updatedBefore: new Date(now - options.ageSeconds * 1000).toISOString(), now, leaseUntil: now + options.leaseMs, limit
      })
      for (const payment of inFlight) {
        const key = await unfinishedKeyOf(deps.db, captureResourceId(payment.id, payment.captureAttempts), traceId, options.respond)
        const ref = key?.ref
        try {
          const settled = await resume(payment, key)
          captured++
          deps.log.info({ paymentId: payment.id, status: settled.status, traceId }, 'recovery finished a capture')
        } catch (err) {
          if (err instanceof CaptureFailedError) {
            captured++
            continue
          }
          stillPending++
          if (!(err instanceof GatewayUnavailableError)) deps.log.error({ err, paymentId: payment.id, traceId }, 'recovery of a capture failed')
          if (ref !== undefined) await deps.db.idempotency.release(ref)
        }
      }
      const due = await deps.db.captures.holdExpired({ now, leaseUntil: now + options.leaseMs, limit })
      for (const payment of due) {
        try {
          await voidHeld(payment, 'authorization_expired')
          expired++
        } catch (err) {
          stillPending++
          if (!(err instanceof GatewayUnavailableError)) deps.log.error({ err, paymentId: payment.id, traceId }, 'expiry of an authorization failed')
        }
      }
      return { captured, expired, stillPending }
    }
  }
}
