import { ConnectorEventNotMatchedError, ConnectorEventUnverifiedError } from '../../domain/connectors'
import { isGuid } from '../../domain/ids'
import { askedOf, downstreamKeyFor, type Payment } from '../../domain/payments'
import type { InboundAccount, InboundPorts } from '../inbound'
import { GatewayError, type ChargeResult } from '../types'
import { StripeEventVerificationError, verifyStripeEvent, type StripeEventEffect, type VerifiedStripeEvent } from './events'

export interface StripeEventReceipt {
  eventId: string
  type: string
  /** True when the event had been processed already: nothing was done again. */
  duplicate: boolean
}

export interface StripeEventService {
  /**
   * Verifies a Stripe webhook delivery for connector account `connectorId` with the account's signing
   * secret (ConnectorEventUnverifiedError otherwise: nothing recorded), records it in the inbox, acts on
   * it unless it was processed already, and marks it processed.
   */
  receive: (connectorId: string, rawBody: Buffer, signature: string | undefined) => Promise<StripeEventReceipt>
}

type ChargeEffect = Extract<StripeEventEffect, { kind: 'charge' }>
type RefundEffect = Extract<StripeEventEffect, { kind: 'refund' }>
type DisputeEffect = Extract<StripeEventEffect, { kind: 'dispute' }>
type ChargeRefundedEffect = Extract<StripeEventEffect, { kind: 'charge_refunded' }>

/** One message for every cause of an unverified Stripe event (the log says which): a caller learns nothing about accounts. */
const UNVERIFIED = 'The event could not be verified: unknown connector account, no webhookSecret in its credentials, or a Stripe-Signature that is ' +
  'missing, does not match the body, or is older than 5 minutes. Nothing was recorded.'

/**
 * Stripe's own webhooks: what changed at Stripe after we stopped asking (a PaymentIntent settled while
 * our payment was pending, a refund that settles or fails later). Only our records still pending move,
 * through the same transitions as the connector's answers; anything else is recorded and left alone.
 */
export function stripeEventService (deps: InboundPorts): StripeEventService {
  const nowIso = (): string => new Date(deps.clock()).toISOString()

  async function verifiedFor (connectorId: string, rawBody: Buffer, signature: string | undefined): Promise<{ account: InboundAccount, event: VerifiedStripeEvent }> {
    const account = isGuid(connectorId) ? await deps.accounts.byId(connectorId.toLowerCase()) : undefined
    const secret = account?.type === 'stripe' ? account.credentials.webhookSecret : undefined
    if (account === undefined || secret === undefined || secret === '') {
      deps.log.info({ connectorId: connectorId.slice(0, 64), reason: account === undefined ? 'unknown_connector' : 'no_webhook_secret' }, 'Stripe event refused')
      throw new ConnectorEventUnverifiedError(UNVERIFIED)
    }
    try {
      return { account, event: verifyStripeEvent(rawBody, signature, secret, deps.clock()) }
    } catch (err) {
      if (!(err instanceof StripeEventVerificationError)) throw err
      deps.log.info({ connectorId: account.id, reason: err.message }, 'Stripe event refused')
      throw new ConnectorEventUnverifiedError(UNVERIFIED)
    }
  }

  /** The payment a PaymentIntent belongs to: by its reference, else by the payment id in its metadata (a payment this connector was asked to charge). */
  async function paymentOf (account: InboundAccount, effect: ChargeEffect): Promise<Payment | undefined> {
    const byReference = await deps.db.payments.findByConnectorReference(account.id, effect.reference)
    if (byReference !== undefined) return byReference
    if (effect.paymentId === undefined || !isGuid(effect.paymentId)) return undefined
    const byMetadata = await deps.db.payments.get(effect.paymentId.toLowerCase())
    return byMetadata !== undefined && askedOf(byMetadata, account.id) ? byMetadata : undefined
  }

  async function applyCharge (account: InboundAccount, event: VerifiedStripeEvent, effect: ChargeEffect): Promise<void> {
    const context = { connectorId: account.id, eventId: event.id, eventType: event.type, paymentIntent: effect.reference }
    const payment = await paymentOf(account, effect)
    if (payment === undefined) {
      deps.log.info(context, 'Stripe event names no payment of ours on this connector; ignored')
      return
    }
    if (payment.amountMinor !== effect.amountMinor || payment.currency !== effect.currency) {
      deps.log.error({ ...context, paymentId: payment.id }, 'Stripe event\'s PaymentIntent amount or currency differs from the payment; not applied, needs follow-up')
      return
    }
    if (effect.result.outcome === 'succeeded' && (payment.status === 'requires_capture' || payment.capturePendingMinor !== null) && payment.connectorReference === effect.reference) {
      // The authorization was captured: ours in flight settles with what Stripe took; none in flight, a capture made in Stripe's Dashboard (issue 40).
      const captured = await deps.captures.applyConnectorCapture(payment.id, { id: account.id, type: account.type }, { captured: true, amountMinor: effect.amountReceivedMinor })
      deps.log.info({ ...context, paymentId: payment.id, status: captured?.status }, 'Stripe event applied to an authorization')
      return
    }
    if (event.type === 'payment_intent.canceled' && payment.status === 'requires_capture' && payment.connectorReference === effect.reference) {
      // The authorization was canceled in Stripe's Dashboard (ours record themselves when Stripe answers): released, canceled here too.
      const canceled = await deps.captures.applyConnectorVoid(payment.id, { id: account.id, type: account.type }, { madeAtConnector: true })
      deps.log.info({ ...context, paymentId: payment.id, status: canceled?.status }, 'Stripe event canceled an authorization')
      return
    }
    // Every report is applied: it settles a payment pending here, and money reported for an attempt the payment left is given back.
    const result = await withPaymentMethodDetails(account, payment, effect, context)
    const applied = await deps.payments.applyConnectorOutcome(payment.id, { id: account.id, type: account.type }, result)
    if (payment.status === 'pending') deps.log.info({ ...context, paymentId: payment.id, status: applied?.status }, 'Stripe event applied to a pending payment')
  }

  /**
   * An event's object is the PaymentIntent as it was, its expandable members left as ids (Stripe expands nothing in an
   * event): `latest_charge` names the charge, whose payment_method_details say the card. When the event is about to
   * settle a payment still waiting here (pending, or waiting for its shopper) with money taken or held, the PaymentIntent
   * is retrieved with its charge expanded, as the return and the recovery worker read it: a GET, never a write. Only the
   * details are taken from it (the outcome stays the event's); Stripe not answering, the payment settles without them.
   */
  async function withPaymentMethodDetails (account: InboundAccount, payment: Payment, effect: ChargeEffect, context: object): Promise<ChargeResult> {
    const { result } = effect
    if (result.paymentMethodDetails !== undefined || payment.paymentMethodDetails !== undefined) return result
    if ((result.outcome !== 'succeeded' && result.outcome !== 'authorized') || (payment.status !== 'pending' && payment.status !== 'requires_action')) return result
    try {
      const gateway = await deps.connectors.gatewayOf({ id: account.id, type: account.type })
      const state = await gateway.retrieve({ chargeIdempotencyKey: downstreamKeyFor(payment.id), paymentId: payment.id, chargeReference: effect.reference })
      const sameCharge = (state.state === 'captured' || state.state === 'authorized') && state.chargeId === effect.reference
      return sameCharge && state.paymentMethodDetails !== undefined ? { ...result, paymentMethodDetails: state.paymentMethodDetails } : result
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err
      deps.log.warn({ ...context, paymentId: payment.id, gatewayFailure: err.code }, 'the PaymentIntent\'s charge could not be read at Stripe; the payment settles without its payment method details')
      return result
    }
  }

  async function applyRefund (account: InboundAccount, event: VerifiedStripeEvent, effect: RefundEffect): Promise<void> {
    const context = { connectorId: account.id, eventId: event.id, eventType: event.type, stripeRefund: effect.gatewayRefundId }
    const { refundId, paymentId } = effect
    const refund = refundId !== undefined && paymentId !== undefined && isGuid(refundId) && isGuid(paymentId)
      ? await deps.db.refunds.get(paymentId.toLowerCase(), refundId.toLowerCase())
      : undefined
    const payment = refund === undefined ? undefined : await deps.db.payments.get(refund.paymentId)
    if (refund === undefined && refundId === undefined) {
      // No refund of ours (we name every refund we create): one made at Stripe, recorded once it succeeded.
      await applyRefundMadeAtStripe(account, effect, context)
      return
    }
    if (refund === undefined || payment?.connector.id !== account.id) {
      deps.log.info(context, 'Stripe event names no refund of ours on this connector; ignored')
      return
    }
    const reported = effect.result.outcome
    // Not an outcome yet (Stripe's refunds are never 'received'; the type allows it for asynchronous connectors).
    if (reported === 'received') return
    if (refund.status === 'pending') {
      const settled = await deps.refunds.applyConnectorOutcome(refund.paymentId, refund.id,
        reported === 'succeeded' ? { status: 'succeeded' } : { status: 'failed', failureCode: effect.result.outcome === 'failed' ? effect.result.failureCode : 'refund_failed' })
      deps.log.info({ ...context, refundId: refund.id, paymentId: refund.paymentId, status: settled?.status }, 'Stripe event settled a pending refund')
      return
    }
    if (refund.status === reported) return
    // Our refunds end where they end (succeeded and failed are terminal): a later contrary report is for a person to resolve.
    deps.log.error({ ...context, refundId: refund.id, paymentId: refund.paymentId, recorded: refund.status, reported },
      'Stripe reports a refund outcome contrary to the one recorded; left unchanged, needs follow-up')
  }

  /** A refund made in the Stripe Dashboard (or by another integration) of a payment of ours on this account (issue 40). */
  async function applyRefundMadeAtStripe (account: InboundAccount, effect: RefundEffect, context: object): Promise<void> {
    if (effect.result.outcome !== 'succeeded') return
    if (effect.amountMinor === undefined || effect.currency === undefined) return deps.log.info(context, 'Stripe refund event without an amount; ignored')
    if (effect.paymentIntent !== undefined && effect.amountMinor > 0) {
      // Of any charge, ours or an extra one a payment gives back (whose release then refunds only what is left), whenever it arrives.
      await deps.db.connectorEvents.recordRefundAtConnector({
        connectorId: account.id, refundReference: effect.gatewayRefundId, chargeReference: effect.paymentIntent, amountMinor: effect.amountMinor, currency: effect.currency, receivedAt: nowIso()
      })
    }
    const payment = effect.paymentIntent === undefined ? undefined : await deps.db.payments.findByConnectorReference(account.id, effect.paymentIntent)
    if (payment === undefined) {
      // The payment may be ours with its answer lost (no reference recorded yet): Stripe sends the event again later.
      if (await deps.db.payments.countPending() > 0) throw new ConnectorEventNotMatchedError()
      deps.log.info(context, 'Stripe event names no refund or payment of ours on this connector; ignored')
      return
    }
    const recorded = await deps.refunds.recordConnectorRefund(payment.id, { connectorReference: effect.gatewayRefundId, amountMinor: effect.amountMinor, currency: effect.currency })
    deps.log.info({ ...context, paymentId: payment.id, refundId: recorded?.id }, 'Stripe event names no refund of ours: a refund made at Stripe, recorded if it fits the payment')
  }

  /**
   * charge.refunded: the refunds the charge lists go the way of refund.* events (ours settle, one made at Stripe is
   * recorded). A charge that lists none (API versions since 2022-11-15) says only how much Stripe took back in all: each
   * refund arrives as its own refund.* event, which records it; a total beyond what is recorded here is logged.
   */
  async function applyChargeRefunded (account: InboundAccount, event: VerifiedStripeEvent, effect: ChargeRefundedEffect): Promise<void> {
    for (const refund of effect.refunds) await applyRefund(account, event, refund)
    const payment = effect.paymentIntent === undefined ? undefined : await deps.db.payments.findByConnectorReference(account.id, effect.paymentIntent)
    if (payment === undefined || payment.currency !== effect.currency) return
    const recorded = payment.amountRefundedMinor + payment.refundPendingMinor
    if (effect.amountRefundedMinor > recorded) {
      deps.log.warn({ connectorId: account.id, eventId: event.id, paymentId: payment.id, stripeRefundedMinor: effect.amountRefundedMinor, recordedMinor: recorded },
        'Stripe reports more refunded on the charge than recorded here; its refund.created events record each refund (the endpoint must receive them)')
    }
  }

  /** A dispute of a charge of ours on this account: recorded, merged with what is recorded (any order of events ends in the same state). */
  async function applyDispute (account: InboundAccount, event: VerifiedStripeEvent, effect: DisputeEffect): Promise<void> {
    const context = { connectorId: account.id, eventId: event.id, eventType: event.type, stripeDispute: effect.report.connectorReference, paymentIntent: effect.paymentIntent }
    const payment = effect.paymentIntent === undefined ? undefined : await deps.db.payments.findByConnectorReference(account.id, effect.paymentIntent)
    if (payment === undefined) {
      // The payment may be ours with its answer lost (no reference recorded yet): Stripe sends the event again later.
      if (await deps.db.payments.countPending() > 0) {
        deps.log.warn(context, 'Stripe dispute names no payment of ours yet while a payment is pending; answered 503 for Stripe to send it again')
        throw new ConnectorEventNotMatchedError()
      }
      deps.log.warn(context, 'Stripe dispute names no payment of ours on this connector; ignored')
      return
    }
    await deps.disputes.applyConnectorReport(payment.id, { id: account.id, type: account.type }, effect.report)
  }

  return {
    async receive (connectorId, rawBody, signature) {
      const { account, event } = await verifiedFor(connectorId, rawBody, signature)
      const recorded = await deps.db.connectorEvents.record({ connectorId: account.id, eventId: event.id, type: event.type, receivedAt: nowIso() })
      if (recorded.processedAt !== null) return { eventId: event.id, type: event.type, duplicate: true }
      if (event.effect.kind === 'charge') await applyCharge(account, event, event.effect)
      if (event.effect.kind === 'refund') await applyRefund(account, event, event.effect)
      if (event.effect.kind === 'dispute') await applyDispute(account, event, event.effect)
      if (event.effect.kind === 'charge_refunded') await applyChargeRefunded(account, event, event.effect)
      await deps.db.connectorEvents.markProcessed(account.id, event.id, nowIso())
      return { eventId: event.id, type: event.type, duplicate: false }
    }
  }
}
