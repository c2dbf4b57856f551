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
  status: 'authorized' | 'captured' | 'voided' | 'declined'
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

/** The seeded fault plan shared by the PSPs: off during quiescence. */
export interface FaultPlan {
  enabled: boolean
  rng: Rng
  /** Counts of faults injected, by kind. */
  injected: Record<string, number>
}

/** Amounts whose minor units end in 7 are declined by both PSPs (deterministic, so failover never changes a decline). */
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

  constructor (readonly kind: PspKind, private readonly faults: FaultPlan) {}

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
    const charge: PspCharge = {
      id: this.nextId('ch'),
      paymentId: request.paymentId,
      key: request.idempotencyKey,
      amountMinor: request.amountMinor,
      currency: request.currency,
      manual,
      status: declined ? 'declined' : manual ? 'authorized' : 'captured',
      capturedMinor: declined || manual ? 0 : request.amountMinor,
      refundedMinor: 0,
      disputedMinor: 0
    }
    this.charges.set(charge.id, charge)
    if (!declined) this.authorizations.set(charge.paymentId, (this.authorizations.get(charge.paymentId) ?? 0) + 1)
    this.reports.push({ kind: 'charge', psp: this.kind, charge: { ...charge }, success: !declined })
    // Adyen answers some authorisations `Received`: the outcome comes by notification only.
    if (this.kind === 'adyen' && this.faults.enabled && this.faults.rng.chance(0.15)) return 'received'
    return declined ? { outcome: 'declined', chargeId: charge.id, declineCode: 'card_declined' } : { outcome: manual ? 'authorized' : 'succeeded', chargeId: charge.id }
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
            if (charge.status === 'captured') return { outcome: 'charged', chargeId: charge.id }
            if (charge.status === 'declined') return { outcome: 'declined', chargeId: charge.id, declineCode: 'card_declined' }
            charge.status = 'voided'
            return { outcome: 'voided' }
          }
          // Adyen: a cancel is only accepted; by merchant reference it also stops a later authorisation.
          if (charge === undefined && request.paymentId !== undefined) this.cancelledReferences.add(request.paymentId)
          const cancelable = charge === undefined || charge.status === 'authorized'
          if (charge !== undefined && cancelable) charge.status = 'voided'
          this.reports.push({ kind: 'cancel', psp: 'adyen', charge: charge === undefined ? undefined : { ...charge }, paymentId: request.paymentId ?? charge?.paymentId ?? '', success: cancelable, byReference: request.chargeReference === undefined })
          return { outcome: 'received' }
        })
      },
      retrieve: async (request) => {
        check()
        if (this.kind === 'adyen') throw new GatewayError('unavailable', 'Adyen has no read of a payment', 'retrieve_not_supported')
        return await this.call<ChargeState>(this.nextId('retrieve'), () => {
          const charge = this.chargeOf(request.chargeReference, request.paymentId)
          if (charge === undefined) return request.chargeReference === undefined ? { state: 'none', lagMs: 120_000 } : { state: 'none' }
          switch (charge.status) {
            case 'captured': return { state: 'captured', chargeId: charge.id, amountCapturedMinor: charge.capturedMinor }
            case 'authorized': return { state: 'authorized', chargeId: charge.id, amountMinor: charge.amountMinor }
            case 'voided': return { state: 'voided' }
            case 'declined': return { state: 'declined', chargeId: charge.id, declineCode: 'card_declined' }
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
