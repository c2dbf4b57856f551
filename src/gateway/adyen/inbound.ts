import { ConnectorEventNotMatchedError } from '../../domain/connectors'
import { isGuid } from '../../domain/ids'
import { askedOf, awaitsChargeOutcome, isCancelRequested, type Payment } from '../../domain/payments'
import type { AwaitingOutcome } from '../../store/types'
import type { InboundAccount, InboundPorts } from '../inbound'
import {
  AdyenNotificationFormatError, AdyenNotificationUnverifiedError, captureFailureIdsOf, effectOf, hasValidSignature, notificationIdOf, notificationItemsOf, reasonCodeOf,
  type AdyenNotificationEffect, type AdyenNotificationItem
} from './notifications'

export interface AdyenNotificationReceipt {
  /** The items' inbox ids (`pspReference:eventCode:success`). */
  ids: string[]
  /** How many had been processed already (a repeated notification): nothing was done again for them. */
  duplicates: number
}

export interface AdyenNotificationService {
  /**
   * Verifies every item of an Adyen notification batch for connector account `connectorId` with the
   * account's hmacKey (AdyenNotificationUnverifiedError when any fails: nothing recorded), records them
   * all in the inbox with their payload, then acts on each not processed yet and marks it processed.
   */
  receive: (connectorId: string, body: unknown) => Promise<AdyenNotificationReceipt>
  /**
   * The recovery worker's pass: acts on the items recorded more than `ageSeconds` ago and never
   * processed (a crash between receipt and processing), and marks them processed.
   */
  drainInbox: (options: { ageSeconds: number, batchSize?: number }) => Promise<{ processed: number }>
  /**
   * What Adyen accepted more than `ageSeconds` ago and never reported on (captures in flight, pending
   * refunds, authorizations past captureBefore whose void was received), counted by kind for the
   * operators' metric, with one warning line per item the first time a pass sees it. Adyen offers no
   * read of a modification's outcome, so nothing here is settled: a person looks (Customer Area), or
   * the notification is re-sent from there.
   */
  awaitingNotification: (options: { ageSeconds: number, limit?: number }) => Promise<Record<AwaitingOutcome['kind'], number>>
}

/** Adyen notifications usually arrive within minutes; after this a modification is reported as awaiting one. */
export const AWAITING_NOTIFICATION_AFTER_SECONDS = 3600

type Effect<K extends AdyenNotificationEffect['kind']> = Extract<AdyenNotificationEffect, { kind: K }>

/** The `type` an item is recorded under in the inbox (the connector_events table serves every PSP). */
const INBOX_TYPE_PREFIX = 'adyen:'

/**
 * Adyen's notifications settle what Adyen accepted and decided later: captures, refunds and cancels
 * answered `received`, and authorisations whose answer we never recorded. Only our records still
 * waiting on this account move, through the services' own transitions; everything else is recorded,
 * logged and left alone (Adyen retries anything but `[accepted]`, so nothing here is an error to it).
 */
export function adyenNotificationService (deps: InboundPorts): AdyenNotificationService {
  const nowIso = (): string => new Date(deps.clock()).toISOString()
  /** The items the last pass warned about: each is warned about once while it keeps waiting (bounded by the pass's limit). */
  let warned = new Set<string>()

  async function verifiedItems (connectorId: string, body: unknown): Promise<{ account: InboundAccount, items: AdyenNotificationItem[] }> {
    const refuse = (reason: string, id = connectorId.slice(0, 64)): never => {
      deps.log.info({ connectorId: id, reason }, 'Adyen notification refused')
      throw new AdyenNotificationUnverifiedError()
    }
    const account = isGuid(connectorId) ? await deps.accounts.byId(connectorId.toLowerCase()) : undefined
    if (account === undefined) return refuse('unknown_connector')
    const hmacKey = account.type === 'adyen' ? account.credentials.hmacKey : undefined
    if (hmacKey === undefined || hmacKey === '') return refuse(account.type === 'adyen' ? 'no_hmac_key' : 'not_adyen', account.id)
    let items: AdyenNotificationItem[]
    try {
      items = notificationItemsOf(body)
    } catch (err) {
      if (err instanceof AdyenNotificationFormatError) return refuse(err.message, account.id)
      throw err
    }
    const forged = items.findIndex((item) => !hasValidSignature(item, hmacKey))
    if (forged !== -1) return refuse(`notificationItems[${forged}]: HMAC signature missing or wrong`, account.id)
    return { account, items }
  }

  /** Our payment on this account: by Adyen's pspReference of the payment when given, else by our id in the reference. */
  async function paymentOf (account: InboundAccount, pspReference: string | undefined, paymentId: string | undefined): Promise<Payment | undefined> {
    const byReference = pspReference === undefined ? undefined : await deps.db.payments.findByConnectorReference(account.id, pspReference)
    if (byReference !== undefined) return byReference
    if (paymentId === undefined || !isGuid(paymentId)) return undefined
    const byId = await deps.db.payments.get(paymentId.toLowerCase())
    return byId?.connector.id === account.id ? byId : undefined
  }

  async function applyAuthorisation (account: InboundAccount, effect: Effect<'authorisation'>, context: object): Promise<void> {
    const byId = isGuid(effect.paymentId) ? await deps.db.payments.get(effect.paymentId.toLowerCase()) : undefined
    const payment = byId !== undefined && askedOf(byId, account.id) ? byId : undefined
    if (payment === undefined) return deps.log.info(context, 'Adyen notification names no payment of ours on this connector; ignored')
    if (payment.amountMinor !== effect.amountMinor || payment.currency !== effect.currency) {
      return deps.log.error({ ...context, paymentId: payment.id }, 'Adyen AUTHORISATION amount or currency differs from the payment; not applied, needs follow-up')
    }
    // A shopper's authentication that failed (or that they canceled) reads as the return reads it: authentication_failed.
    const authentication = payment.status === 'requires_action' && /^(3D Not Authenticated|Cancelled)/i.test(effect.reason ?? '')
    const result = !effect.success
      ? { outcome: 'declined' as const, chargeId: effect.pspReference, declineCode: authentication ? 'authentication_failed' : reasonCodeOf(effect.reason, 'refused') }
      : {
          outcome: payment.captureMethod === 'manual' ? 'authorized' as const : 'succeeded' as const,
          chargeId: effect.pspReference,
          ...(effect.paymentMethodDetails === undefined ? {} : { paymentMethodDetails: effect.paymentMethodDetails })
        }
    // Every report is applied: it settles a payment pending here, and an authorisation for an attempt the payment left is given back.
    const applied = await deps.payments.applyConnectorOutcome(payment.id, { id: account.id, type: account.type }, result)
    if (payment.status === 'pending') deps.log.info({ ...context, paymentId: payment.id, status: applied?.status }, 'Adyen notification applied to a pending payment')
  }

  /** True when the inbox holds the CAPTURE_FAILED of this capture (the same pspReference). */
  async function capturedFailedFirst (account: InboundAccount, capturePspReference: string): Promise<boolean> {
    for (const id of captureFailureIdsOf(capturePspReference)) {
      if (await deps.db.connectorEvents.get(account.id, id) !== undefined) return true
    }
    return false
  }

  async function applyCapture (account: InboundAccount, effect: Effect<'capture'>, context: object): Promise<void> {
    const connector = { id: account.id, type: account.type }
    const charge = effect.paymentReference
    const payment = await paymentOf(account, charge, effect.reference) ?? (charge === undefined ? undefined : await deps.db.payments.findHoldingCharge(account.id, charge))
    if (payment !== undefined && charge !== undefined && effect.success && effect.currency === payment.currency) {
      // An authorization the payment gives back, captured in the Customer Area meanwhile: what it took is refunded.
      const held = await deps.payments.applyHeldCapture(payment.id, connector, charge, effect.amountMinor)
      if (held !== undefined) return deps.log.warn({ ...context, paymentId: payment.id }, 'Adyen CAPTURE of an authorization this payment gives back; refunded what it took')
    }
    // A capture made in the Customer Area of a payment whose pspReference is not recorded yet (its answer lost): Adyen sends it again.
    if (payment === undefined && effect.success && await deps.db.payments.countPending() > 0) throw new ConnectorEventNotMatchedError()
    if (payment === undefined) return deps.log.info(context, 'Adyen notification names no payment of ours on this connector; ignored')
    if (effect.success && effect.currency !== payment.currency) {
      return deps.log.error({ ...context, paymentId: payment.id }, 'Adyen CAPTURE currency differs from the payment; not settled, needs follow-up')
    }
    if (effect.success && awaitsChargeOutcome(payment.status)) {
      // It overtook the AUTHORISATION (a capture made in the Customer Area at once): applied when Adyen sends it again, once
      // the authorisation is recorded. The wait is bounded by the payment, which leaves these states by itself (recorded,
      // expired or abandoned); past them the capture applies or is ignored as any other.
      deps.log.info({ ...context, paymentId: payment.id, status: payment.status }, 'Adyen CAPTURE of a payment whose authorisation is not recorded yet; answered 503 for Adyen to send it again')
      throw new ConnectorEventNotMatchedError()
    }
    if (effect.success && !effect.recaptured && await capturedFailedFirst(account, effect.pspReference)) {
      // Its CAPTURE_FAILED overtook it: the failure came after the capture at Adyen and stands (a re-capture says so itself).
      return deps.log.warn({ ...context, paymentId: payment.id }, 'Adyen CAPTURE arrived after the failure of the same capture; the failure stands, nothing changed')
    }
    const outcome = effect.success
      ? { captured: true as const, amountMinor: effect.amountMinor, reference: effect.reference }
      : { captured: false as const, failureCode: reasonCodeOf(effect.reason, 'capture_failed'), reference: effect.reference }
    // Ours in flight settles; with none in flight, a capture made in the Customer Area, or a confirmed one that failed later (issue 40).
    const stored = await deps.captures.applyConnectorCapture(payment.id, connector, outcome)
    if (!effect.success && payment.capturePendingMinor !== null) deps.log.warn({ ...context, paymentId: payment.id, reason: effect.reason }, 'Adyen refused a capture; the payment still requires capture')
    deps.log.info({ ...context, paymentId: payment.id, status: stored?.status }, 'Adyen notification settled a capture')
  }

  async function applyRefund (account: InboundAccount, effect: Effect<'refund'>, context: object): Promise<void> {
    const payment = await paymentOf(account, effect.paymentReference, undefined)
    const refund = payment === undefined || !isGuid(effect.reference) ? undefined : await deps.db.refunds.get(payment.id, effect.reference.toLowerCase())
    if (refund === undefined && !effect.success && effect.paymentReference !== undefined) {
      // The refund that gave back money a payment holds (its reference our release key) failed: the release is asked again.
      const holder = payment ?? await deps.db.payments.findHoldingCharge(account.id, effect.paymentReference)
      const failed = holder === undefined
        ? undefined
        : await deps.payments.applyReleaseRefundFailed(holder.id, { id: account.id, type: account.type }, effect.paymentReference, effect.reference, reasonCodeOf(effect.reason, 'refund_failed'))
      if (failed !== undefined) return deps.log.warn({ ...context, paymentId: failed.id }, 'Adyen refused the refund that gave back money a payment holds; asked again later')
    }
    if (refund === undefined && effect.success && effect.paymentReference !== undefined && effect.amountMinor > 0) {
      // Of any charge, ours or an extra one a payment gives back (whose release then refunds only what is left), whenever it arrives.
      await deps.db.connectorEvents.recordRefundAtConnector({
        connectorId: account.id, refundReference: effect.pspReference, chargeReference: effect.paymentReference, amountMinor: effect.amountMinor, currency: effect.currency, receivedAt: nowIso()
      })
    }
    if (payment !== undefined && refund === undefined && effect.success) {
      // A refund we never asked for (the Customer Area, another integration): recorded once, by its pspReference (issue 40).
      const recorded = await deps.refunds.recordConnectorRefund(payment.id, { connectorReference: effect.pspReference, amountMinor: effect.amountMinor, currency: effect.currency })
      return deps.log.info({ ...context, paymentId: payment.id, refundId: recorded?.id }, 'Adyen notification names no refund of ours: a refund made at Adyen, recorded if it fits the payment')
    }
    // A refund made at Adyen of a payment whose pspReference is not recorded yet (its answer lost): Adyen sends it again.
    if (payment === undefined && effect.success && await deps.db.payments.countPending() > 0) throw new ConnectorEventNotMatchedError()
    if (payment === undefined || refund === undefined) return deps.log.info(context, 'Adyen notification names no refund of ours on this connector; ignored')
    const reported = effect.success ? 'succeeded' : 'failed'
    if (refund.status === reported) return
    if (refund.status !== 'pending') {
      // Succeeded and failed are terminal: a contrary report is for a person to resolve with the merchant.
      return deps.log.error({ ...context, refundId: refund.id, paymentId: payment.id, recorded: refund.status, reported },
        'Adyen reports a refund outcome contrary to the one recorded; left unchanged, needs follow-up')
    }
    const outcome = effect.success ? { status: 'succeeded' as const } : { status: 'failed' as const, failureCode: reasonCodeOf(effect.reason, 'refund_failed') }
    const stored = await deps.refunds.applyConnectorOutcome(payment.id, refund.id, outcome)
    deps.log.info({ ...context, refundId: refund.id, paymentId: payment.id, status: stored?.status }, 'Adyen notification settled a pending refund')
  }

  async function applyCancellation (account: InboundAccount, effect: Effect<'cancellation'>, context: object): Promise<void> {
    const payment = await paymentOf(account, effect.paymentReference, effect.reference)
    if (payment === undefined) return deps.log.info(context, 'Adyen notification names no payment of ours on this connector; ignored')
    if (!effect.success) return await applyRefusedCancel(account, payment, effect, context)
    // Ours carry our payment's id as their reference; a cancel made in the Customer Area does not (issue 40: reason `connector`).
    const stored = await deps.captures.applyConnectorVoid(payment.id, { id: account.id, type: account.type }, { madeAtConnector: effect.reference.toLowerCase() !== payment.id })
    if (stored?.status !== 'canceled') {
      // CANCEL_OR_REFUND of a captured payment refunded it: we never ask for that, so it is for a person.
      deps.log.error({ ...context, paymentId: payment.id, status: stored?.status }, 'Adyen reports a cancel of a payment that cannot be canceled here; left unchanged, needs follow-up')
      return
    }
    deps.log.info({ ...context, paymentId: payment.id, status: stored.status }, 'Adyen notification canceled a payment')
  }

  /**
   * Adyen could not cancel: for an automatic payment the merchant canceled while its outcome was unknown (issue 40), the
   * charge was captured (a cancel cannot undo a capture), so it is refunded in full, as a cancel of a charged payment is on
   * Stripe. Until the AUTHORISATION is recorded the payment is still pending here: the notification waits (503, Adyen and
   * the recovery worker send it again). Anything else is left as it is.
   */
  async function applyRefusedCancel (account: InboundAccount, payment: Payment, effect: Effect<'cancellation'>, context: object): Promise<void> {
    const ours = effect.reference.toLowerCase() === payment.id && isCancelRequested(payment)
    if (ours && payment.captureMethod === 'automatic') {
      if (payment.status === 'pending' || payment.status === 'requires_action') {
        // Adyen sends an AUTHORISATION within minutes; a payment it never received has none to send: the wait is bounded.
        if (deps.clock() - Date.parse(payment.createdAt) >= AWAITING_NOTIFICATION_AFTER_SECONDS * 1000) {
          return deps.log.error({ ...context, paymentId: payment.id, reason: effect.reason },
            'Adyen refused the cancel of a payment whose authorisation never arrived; if Adyen captured it, refund it there; needs follow-up')
        }
        deps.log.info({ ...context, paymentId: payment.id }, 'Adyen refused the cancel of a payment whose authorisation is not recorded yet; answered 503 for Adyen to send it again')
        throw new ConnectorEventNotMatchedError()
      }
      if (payment.status === 'succeeded' || payment.status === 'partially_refunded') {
        const refund = await deps.refunds.refundCanceledCharge(payment.id)
        return deps.log.warn({ ...context, paymentId: payment.id, refundId: refund?.id, reason: effect.reason }, 'Adyen refused the cancel of a captured payment; refunded in full')
      }
    }
    // Ours giving back a held authorization: Adyen could not cancel it because it was captured meanwhile (the Customer Area).
    const released = effect.paymentReference === undefined ? undefined : await deps.payments.releaseRefusedCancel(payment.id, { id: account.id, type: account.type }, effect.paymentReference)
    if (released !== undefined) return
    deps.log.warn({ ...context, paymentId: payment.id, reason: effect.reason }, 'Adyen refused a cancel; the payment is left as it is')
  }

  /** A dispute of a payment of ours on this account (by the disputed payment's pspReference, else our id in merchantReference). */
  async function applyDispute (account: InboundAccount, effect: Effect<'dispute'>, context: object): Promise<void> {
    const payment = await paymentOf(account, effect.paymentReference, effect.paymentId)
    if (payment === undefined) return deps.log.warn(context, 'Adyen dispute notification names no payment of ours on this connector; ignored')
    await deps.disputes.applyConnectorReport(payment.id, { id: account.id, type: account.type }, effect.report)
  }

  async function apply (account: InboundAccount, item: AdyenNotificationItem): Promise<void> {
    const effect = effectOf(item)
    const context = { connectorId: account.id, notification: notificationIdOf(item), merchantReference: item.merchantReference.slice(0, 80) }
    const merchantAccount = account.credentials.merchantAccount
    if (merchantAccount !== undefined && item.merchantAccountCode !== merchantAccount) {
      return deps.log.warn(context, 'Adyen notification is for another merchant account; ignored')
    }
    switch (effect.kind) {
      case 'authorisation': return await applyAuthorisation(account, effect, context)
      case 'capture': return await applyCapture(account, effect, context)
      case 'refund': return await applyRefund(account, effect, context)
      case 'cancellation': return await applyCancellation(account, effect, context)
      case 'dispute': return await applyDispute(account, effect, context)
      case 'none':
    }
  }

  /** Acts on a recorded item and marks it processed. */
  async function process (account: InboundAccount, item: AdyenNotificationItem): Promise<void> {
    await apply(account, item)
    await deps.db.connectorEvents.markProcessed(account.id, notificationIdOf(item), nowIso())
  }

  return {
    async receive (connectorId, body) {
      const { account, items } = await verifiedItems(connectorId, body)
      const receivedAt = nowIso()
      // Every item is stored before any is acted on: a crash meanwhile leaves them for Adyen's retry and the worker.
      const records = []
      for (const item of items) {
        records.push(await deps.db.connectorEvents.record({
          connectorId: account.id, eventId: notificationIdOf(item), type: `${INBOX_TYPE_PREFIX}${item.eventCode}`, receivedAt, payload: JSON.stringify(item)
        }))
      }
      let duplicates = 0
      for (const [index, item] of items.entries()) {
        if (records[index]?.processedAt !== null) {
          duplicates++
          continue
        }
        await process(account, item)
      }
      return { ids: items.map(notificationIdOf), duplicates }
    },

    async drainInbox (options) {
      const receivedBefore = new Date(deps.clock() - options.ageSeconds * 1000).toISOString()
      const waiting = await deps.db.connectorEvents.unprocessed({ receivedBefore, limit: options.batchSize ?? 50 })
      let processed = 0
      for (const record of waiting) {
        if (!record.type.startsWith(INBOX_TYPE_PREFIX)) continue
        const account = await deps.accounts.byId(record.connectorId)
        if (account?.type !== 'adyen') continue
        try {
          await process(account, JSON.parse(record.payload) as AdyenNotificationItem)
          processed++
          deps.log.info({ connectorId: account.id, notification: record.eventId }, 'recovery processed an Adyen notification left unprocessed')
        } catch (err) {
          deps.log.error({ err, connectorId: account.id, notification: record.eventId }, 'recovery of an Adyen notification failed')
        }
      }
      return { processed }
    },

    async awaitingNotification (options) {
      const before = new Date(deps.clock() - options.ageSeconds * 1000).toISOString()
      const waiting = await deps.db.connectorEvents.awaitingOutcomes({ connectorType: 'adyen', before, limit: options.limit ?? 1000 })
      const counts = { capture: 0, refund: 0, void: 0 }
      const seen = new Set<string>()
      for (const item of waiting) {
        counts[item.kind]++
        const key = `${item.kind}:${item.paymentId}:${item.refundId ?? ''}`
        seen.add(key)
        if (!warned.has(key)) {
          deps.log.warn({ kind: item.kind, paymentId: item.paymentId, refundId: item.refundId ?? undefined, since: item.since },
            'Adyen accepted this long ago and sent no notification yet; check it in the Adyen Customer Area')
        }
      }
      warned = seen
      return counts
    }
  }
}
