import type { Connector, ConnectorFactory } from '../../src/gateway/connectors'
import {
  GatewayError, type CaptureResult, type ChargeRequest, type ChargeResult, type ChargeState, type PaymentGateway, type RefundResult, type VoidResult
} from '../../src/gateway/types'
import type { Rng } from './rng'

export type PspKind = 'stripe' | 'adyen'

/** What a call meets, chosen by the seed while faults are on. */
export type CallFault = 'none' | 'refused' | 'rate_limited' | 'server_error' | 'timeout_before' | 'lost_after' | 'timeout_after'

/** A charge as the PSP holds it: the truth the service's records must come to equal. */
export interface PspCharge {
  id: string
  paymentId: string
  key: string
  amountMinor: number
  currency: string
  manual: boolean
  /** `action`: waiting for the shopper to authenticate (a customer-present charge), nothing authorized yet. */
  status: 'action' | 'authorized' | 'captured' | 'voided' | 'declined'
  /** Customer-present: where the PSP sends the shopper back (the service's return address). */
  returnUrl?: string
  capturedMinor: number
  refundedMinor: number
  /** Taken back by a dispute and not reinstated. */
  disputedMinor: number
  dispute?: SimDispute
}

/** A cardholder's dispute of a captured charge, as the PSP holds it. */
export interface SimDispute {
  id: string
  amountMinor: number
  status: 'needs_response' | 'won' | 'lost'
}

/** Something the PSP tells the service by itself (Stripe's webhook, Adyen's notification), delivered by the world. */
export type PspReport =
  | { kind: 'charge', psp: PspKind, charge: PspCharge, success: boolean }
  | { kind: 'capture', psp: 'adyen', charge: PspCharge, reference: string, amountMinor: number, success: boolean }
  | { kind: 'refund', psp: 'adyen', charge: PspCharge, reference: string, amountMinor: number, success: boolean }
  /** `byReference`: asked by our payment id (no pspReference known), which Adyen answers with TECHNICAL_CANCEL. */
  | { kind: 'cancel', psp: 'adyen', charge: PspCharge | undefined, paymentId: string, success: boolean, byReference: boolean }
  | { kind: 'dispute', psp: PspKind, charge: PspCharge, dispute: SimDispute }
  /** A refund someone made at the PSP (its dashboard), not through the service. */
  | { kind: 'refund_at_psp', psp: PspKind, charge: PspCharge, refundId: string, amountMinor: number }
  /** A capture or a cancel of an authorization someone made at the PSP (its dashboard), not through the service. */
  | { kind: 'capture_at_psp' | 'cancel_at_psp', psp: PspKind, charge: PspCharge, reference: string }

/** The seeded fault plan shared by the PSPs: off during quiescence. */
export interface FaultPlan {
  enabled: boolean
  rng: Rng
  /** Counts of faults injected, by kind. */
  injected: Record<string, number>
}

/** Amounts whose minor units end in 7 are declined by both PSPs (deterministic, so failover never changes a decline). */
/** Where the PSP's authentication pages live (a charge's id follows). */
const AUTHENTICATION_PAGE = 'https://psp.simulation.example/authenticate/'

export const isDeclinedAmount = (amountMinor: number): boolean => amountMinor % 10 === 7

const FAULT_WEIGHTS: Readonly<Record<CallFault, number>> = {
  none: 70, refused: 6, rate_limited: 3, server_error: 6, timeout_before: 4, lost_after: 7, timeout_after: 4
}

/**
 * A seeded PSP in the service's process: Stripe (synchronous outcomes, webhooks) or Adyen (captures, refunds and
 * cancels only accepted, outcomes by notification; some authorisations answered `Received`). It keeps every key's
 * first answer (a replay gets it again, never a second charge) and records every successful authorisation, so the
 * world can count them. Faults: refused and rate-limited calls do nothing; 5xx and time-outs either before or after
 * the PSP acted (the answer lost).
 */
export class SimPsp {
  readonly charges = new Map<string, PspCharge>()
  readonly reports: PspReport[] = []
  /** Successful authorisations per payment id, ever (a given-back one still counts: it charged the shopper). */
  readonly authorizations = new Map<string, number>()
  private readonly answers = new Map<string, unknown>()
  private readonly cancelledReferences = new Set<string>()
  private sequence = 0
  /** Called when a refund request arrives, before anything is done (the world checks our records then). */
  beforeRefund?: (paymentId: string) => Promise<void>

  /**
   * @param shoppers customer-present charges ask for the shopper's authentication (drawn from this stream, so that
   * a world without them draws the faults it always drew); undefined: every charge is off-session, as before.
   */
  constructor (readonly kind: PspKind, private readonly faults: FaultPlan, private readonly shoppers?: Rng) {}

  private fault (): CallFault {
    if (!this.faults.enabled) return 'none'
    const fault = this.faults.rng.weighted(FAULT_WEIGHTS)
    if (fault !== 'none') this.faults.injected[`psp_${fault}`] = (this.faults.injected[`psp_${fault}`] ?? 0) + 1
    return fault
  }

  /** Runs `act` under `key` with a fault: nothing done, or done and the answer lost, or answered. */
  private async call<T> (key: string, act: () => T): Promise<T> {
    const fault = this.fault()
    await Promise.resolve()
    if (fault === 'refused') throw new GatewayError('not_processed', 'connection refused', 'connection_refused')
    if (fault === 'rate_limited') throw new GatewayError('not_processed', 'rate limited', 'rate_limited')
    if (fault === 'server_error') throw new GatewayError('unavailable', 'PSP 500', 'server_error')
    if (fault === 'timeout_before') throw new GatewayError('timeout', 'no answer', 'timeout')
    const answer = (this.answers.has(key) ? this.answers.get(key) : (() => { const made = act(); this.answers.set(key, made); return made })()) as T
    await Promise.resolve()
    if (fault === 'lost_after') throw new GatewayError('unavailable', 'connection lost', 'connection_lost')
    if (fault === 'timeout_after') throw new GatewayError('timeout', 'no answer', 'timeout')
    return answer
  }

  private nextId (prefix: string): string {
    this.sequence++
    return `${prefix}_${this.kind}_${this.sequence}`
  }

  private chargeOf (reference: string | undefined, paymentId: string | undefined): PspCharge | undefined {
    if (reference !== undefined) return this.charges.get(reference)
    return [...this.charges.values()].find((charge) => charge.paymentId === paymentId && charge.status !== 'declined')
  }

  private charge (request: ChargeRequest): ChargeResult | 'received' {
    const manual = request.captureMethod === 'manual'
    const declined = isDeclinedAmount(request.amountMinor) || this.cancelledReferences.has(request.paymentId)
    // Most customer-present charges ask the shopper to authenticate (3-D Secure); the rest are frictionless.
    if (!declined && request.returnUrl !== undefined && this.shoppers?.chance(0.75) === true) return this.askShopper(request)
    const charge = this.newCharge(request, declined ? 'declined' : manual ? 'authorized' : 'captured')
    if (!declined) this.authorizations.set(charge.paymentId, (this.authorizations.get(charge.paymentId) ?? 0) + 1)
    this.reports.push({ kind: 'charge', psp: this.kind, charge: { ...charge }, success: !declined })
    // Adyen answers some authorisations `Received`: the outcome comes by notification only.
    if (this.kind === 'adyen' && this.faults.enabled && this.faults.rng.chance(0.15)) return 'received'
    return declined ? { outcome: 'declined', chargeId: charge.id, declineCode: 'card_declined' } : { outcome: manual ? 'authorized' : 'succeeded', chargeId: charge.id }
  }

  /** A charge made now under the request's key (an automatic one captured at once), kept by the PSP. */
  private newCharge (request: ChargeRequest, status: PspCharge['status']): PspCharge {
    const charge: PspCharge = {
      id: this.nextId('ch'),
      paymentId: request.paymentId,
      key: request.idempotencyKey,
      amountMinor: request.amountMinor,
      currency: request.currency,
      manual: request.captureMethod === 'manual',
      status,
      capturedMinor: status === 'captured' ? request.amountMinor : 0,
      refundedMinor: 0,
      disputedMinor: 0,
      ...(status === 'action' && request.returnUrl !== undefined ? { returnUrl: request.returnUrl } : {})
    }
    this.charges.set(charge.id, charge)
    return charge
  }

  /** A charge waiting for the shopper: nothing authorized until they authenticate at the PSP's page. */
  private askShopper (request: ChargeRequest): ChargeResult {
    const charge = this.newCharge(request, 'action')
    return { outcome: 'requires_action', chargeId: charge.id, nextAction: { type: 'redirect', url: `${AUTHENTICATION_PAGE}${charge.id}`, method: 'GET' } }
  }

  /** The charge a shopper authenticates at this PSP's page, if the address is one of its. */
  chargeAtPage (url: string): PspCharge | undefined {
    return url.startsWith(AUTHENTICATION_PAGE) ? this.charges.get(url.slice(AUTHENTICATION_PAGE.length)) : undefined
  }

  /** The shopper authenticates (or fails to): the charge is authorized (captured when automatic) or declined, and the PSP tells. */
  authenticate (charge: PspCharge, success: boolean): void {
    if (charge.status !== 'action') return
    if (success) {
      charge.status = charge.manual ? 'authorized' : 'captured'
      charge.capturedMinor = charge.manual ? 0 : charge.amountMinor
      this.authorizations.set(charge.paymentId, (this.authorizations.get(charge.paymentId) ?? 0) + 1)
    } else {
      charge.status = 'declined'
    }
    this.reports.push({ kind: 'charge', psp: this.kind, charge: { ...charge }, success })
  }

  /** What the PSP adds to the shopper's way back (Stripe: the PaymentIntent; Adyen: a redirectResult for /payments/details). */
  returnParams (charge: PspCharge): Record<string, string> {
    return this.kind === 'stripe'
      ? { payment_intent: charge.id, redirect_status: charge.status === 'declined' ? 'failed' : 'succeeded' }
      : { redirectResult: Buffer.from(charge.id).toString('base64url') }
  }

  /** Someone captures an authorization in the PSP's dashboard (all of it, or part: the rest is released), and the PSP tells. */
  captureAtPsp (charge: PspCharge, fraction = 1): void {
    if (charge.status !== 'authorized') return
    charge.status = 'captured'
    charge.capturedMinor = Math.max(1, Math.round(charge.amountMinor * fraction))
    this.reports.push({ kind: 'capture_at_psp', psp: this.kind, charge: { ...charge }, reference: this.nextId('dashboard_capture') })
  }

  /** Someone cancels an authorization (or a charge waiting for its shopper) in the PSP's dashboard, and the PSP tells. */
  cancelAtPsp (charge: PspCharge): void {
    if (charge.status !== 'authorized' && charge.status !== 'action') return
    charge.status = 'voided'
    this.reports.push({ kind: 'cancel_at_psp', psp: this.kind, charge: { ...charge }, reference: this.nextId('dashboard_cancel') })
  }

  /** A cardholder disputes what is left of a captured charge: the PSP takes it back at once (funds withdrawn). */
  openDispute (charge: PspCharge): void {
    const amountMinor = charge.capturedMinor - charge.refundedMinor
    if (charge.status !== 'captured' || charge.dispute !== undefined || amountMinor <= 0) return
    charge.dispute = { id: this.nextId('dp'), amountMinor, status: 'needs_response' }
    charge.disputedMinor = amountMinor
    this.reports.push({ kind: 'dispute', psp: this.kind, charge: { ...charge }, dispute: { ...charge.dispute } })
  }

  /** A support agent refunds part or all of what is left of a captured charge in the PSP's dashboard. */
  refundAtPsp (charge: PspCharge, fraction: number): void {
    const left = charge.capturedMinor - charge.refundedMinor - charge.disputedMinor
    const amountMinor = Math.max(1, Math.round(left * fraction))
    if (charge.status !== 'captured' || left <= 0 || (charge.dispute !== undefined && charge.dispute.status !== 'won')) return
    charge.refundedMinor += amountMinor
    this.reports.push({ kind: 'refund_at_psp', psp: this.kind, charge: { ...charge }, refundId: this.nextId('re_dashboard'), amountMinor })
  }

  /** The dispute ends: won (the money comes back) or lost (it stays with the cardholder). */
  closeDispute (charge: PspCharge, won: boolean): void {
    if (charge.dispute?.status !== 'needs_response') return
    charge.dispute.status = won ? 'won' : 'lost'
    if (won) charge.disputedMinor = 0
    this.reports.push({ kind: 'dispute', psp: this.kind, charge: { ...charge }, dispute: { ...charge.dispute } })
  }

  gateway (alive: () => boolean): PaymentGateway {
    const check = (): void => { if (!alive()) throw new GatewayError('aborted', 'the instance is gone') }
    return {
      charge: async (request) => {
        check()
        const answer = await this.call(`charge:${request.idempotencyKey}`, () => this.charge(request))
        if (answer === 'received') throw new GatewayError('unavailable', 'Adyen answered Received', 'charge_pending')
        return answer
      },
      capture: async (request) => {
        check()
        return await this.call<CaptureResult>(`capture:${request.idempotencyKey}`, () => {
          const charge = this.chargeOf(request.chargeReference, undefined)
          if (charge?.status !== 'authorized' || request.amountMinor > charge.amountMinor) return { outcome: 'failed', failureCode: 'not_capturable' }
          charge.status = 'captured'
          charge.capturedMinor = request.amountMinor
          if (this.kind === 'stripe') return { outcome: 'captured', captureId: this.nextId('cap'), amountMinor: request.amountMinor }
          this.reports.push({ kind: 'capture', psp: 'adyen', charge: { ...charge }, reference: request.idempotencyKey, amountMinor: request.amountMinor, success: true })
          return { outcome: 'received', captureId: this.nextId('cap') }
        })
      },
      refund: async (request) => {
        check()
        if (request.paymentId !== undefined) await this.beforeRefund?.(request.paymentId)
        return await this.call<RefundResult>(`refund:${request.idempotencyKey}`, () => {
          const charge = this.chargeOf(request.chargeReference, undefined)
          if (charge === undefined || charge.status !== 'captured' || charge.refundedMinor + charge.disputedMinor + request.amountMinor > charge.capturedMinor) {
            return { outcome: 'failed', gatewayRefundId: '', failureCode: 'not_refundable' }
          }
          // Both PSPs refuse to refund a charge under a dispute that is not won (the money is the dispute's).
          if (charge.dispute !== undefined && charge.dispute.status !== 'won') return { outcome: 'failed', gatewayRefundId: '', failureCode: 'charge_disputed' }
          charge.refundedMinor += request.amountMinor
          if (this.kind === 'stripe') return { outcome: 'succeeded', gatewayRefundId: this.nextId('re') }
          this.reports.push({ kind: 'refund', psp: 'adyen', charge: { ...charge }, reference: request.refundId ?? request.idempotencyKey, amountMinor: request.amountMinor, success: true })
          return { outcome: 'received', gatewayRefundId: this.nextId('re') }
        })
      },
      void: async (request) => {
        check()
        return await this.call<VoidResult>(`void:${request.chargeIdempotencyKey}:${request.chargeReference ?? ''}`, () => {
          const charge = this.chargeOf(request.chargeReference, request.paymentId)
          if (this.kind === 'stripe') {
            if (charge === undefined) return { outcome: 'voided' }
            if (charge.status === 'captured') {
              return charge.capturedMinor < charge.amountMinor
                ? { outcome: 'charged', chargeId: charge.id, amountCapturedMinor: charge.capturedMinor }
                : { outcome: 'charged', chargeId: charge.id }
            }
            if (charge.status === 'declined') return { outcome: 'declined', chargeId: charge.id, declineCode: 'card_declined' }
            charge.status = 'voided'
            return { outcome: 'voided' }
          }
          // Adyen: a cancel is only accepted; by merchant reference it also stops a later authorisation.
          if (charge === undefined && request.paymentId !== undefined) this.cancelledReferences.add(request.paymentId)
          const cancelable = charge === undefined || charge.status === 'authorized' || charge.status === 'action'
          if (charge !== undefined && cancelable) charge.status = 'voided'
          this.reports.push({ kind: 'cancel', psp: 'adyen', charge: charge === undefined ? undefined : { ...charge }, paymentId: request.paymentId ?? charge?.paymentId ?? '', success: cancelable, byReference: request.chargeReference === undefined })
          return { outcome: 'received' }
        })
      },
      retrieve: async (request) => {
        check()
        // Adyen reads a payment only through the shopper's return (/payments/details with its redirectResult).
        const redirectResult = request.returnParams?.redirectResult
        if (this.kind === 'adyen' && redirectResult === undefined) throw new GatewayError('unavailable', 'Adyen has no read of a payment', 'retrieve_not_supported')
        return await this.call<ChargeState>(this.nextId('retrieve'), () => {
          const charge = redirectResult === undefined ? this.chargeOf(request.chargeReference, request.paymentId) : this.charges.get(Buffer.from(redirectResult, 'base64url').toString())
          if (redirectResult !== undefined && charge?.paymentId !== request.paymentId) return { state: 'none' }
          if (charge === undefined) return request.chargeReference === undefined ? { state: 'none', lagMs: 120_000 } : { state: 'none' }
          switch (charge.status) {
            case 'captured': return { state: 'captured', chargeId: charge.id, amountCapturedMinor: charge.capturedMinor }
            case 'authorized': return { state: 'authorized', chargeId: charge.id, amountMinor: charge.amountMinor }
            case 'voided': return { state: 'voided' }
            case 'declined': return { state: 'declined', chargeId: charge.id, declineCode: 'card_declined' }
            case 'action': return { state: 'requires_action', chargeId: charge.id }
          }
        })
      }
    }
  }
}

/** The connector factory of one service instance: its gateways stop when the instance is gone (a crash). */
export function simulatedConnectors (psps: Record<PspKind, SimPsp>, alive: () => boolean): ConnectorFactory {
  return (type): Connector => {
    if (type !== 'stripe' && type !== 'adyen') throw new Error(`the simulation has no ${type} PSP`)
    return { gateway: psps[type].gateway(alive), verify: async () => {} }
  }
}
