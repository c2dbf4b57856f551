import { setTimeout as sleep } from 'node:timers/promises'
import { randomUUID } from 'node:crypto'
import type { LedgerEntry, LedgerStore } from '../../store/types'
import type { PaymentMethodDetails } from '../../domain/customers'
import { GatewayError, type ChargeRequest, type ChargeResult, type ChargeState, type PaymentGateway, type RefundResult, type VoidResult } from '../types'

export const SIMULATED_DECLINE_CODE = 'card_declined'
export const SIMULATED_REFUND_FAILURE_CODE = 'refund_declined'
/** What a charge under a key that was voided first answers. */
export const VOIDED_DECLINE_CODE = 'payment_voided'
export const SIMULATED_CAPTURE_FAILURE_CODE = 'capture_declined'

/**
 * Deterministic capture outcomes by capture amount (in the 3000s, which authorizations always
 * pass): 3001.00 unavailable, 3002.00 times out (the capture is made, the answer lost), 3003.00
 * refused by the gateway; anything else is captured.
 */
export function simulatedCaptureOutcome (amount: string): 'captured' | 'failed' | 'unavailable' | 'timeout' {
  const value = Number(amount)
  if (value === 3001) return 'unavailable'
  if (value === 3002) return 'timeout'
  if (value === 3003) return 'failed'
  return 'captured'
}

/**
 * The ledger key under which an authorization's settlement is recorded once: its capture or its
 * void, whichever comes first (one insert decides: an authorization is captured or released, never both).
 */
function settlementKey (chargeIdempotencyKey: string): string {
  return `${chargeIdempotencyKey}:settlement`
}

/** The amount whose charge asks for the shopper's authentication (3-D Secure): customer-present, `requires_action`; off-session, declined. */
export const SIMULATED_ACTION_AMOUNT = 6001
/** The decline of a charge that needs the shopper, made off-session (Stripe's code). */
export const AUTHENTICATION_REQUIRED = 'authentication_required'

/** The ledger key of a charge that waits for its shopper: what it will be once authenticated (authorized or succeeded). */
function challengeKey (chargeIdempotencyKey: string): string {
  return `${chargeIdempotencyKey}:challenge`
}

/** Where a simulated charge that waits for its shopper sends them: the simulated bank's page, with the charge's ledger key and the return address. */
export type SimulatedBankUrl = (page: { key: string, returnUrl: string }) => string

/**
 * The simulated bank's decision on a charge waiting for its shopper (`ledger`: the simulated connector's own):
 * authenticated → the charge is made (succeeded, or authorized for a manual capture); failed → declined
 * (`authentication_failed`). Recorded once under the charge's key: a second decision, or one after a void,
 * answers the first. Undefined when no charge under `key` waits for a shopper.
 */
export async function simulatedBankDecision (ledger: LedgerStore, key: string, authenticated: boolean): Promise<LedgerEntry | undefined> {
  const challenge = await ledger.get(challengeKey(key))
  if (challenge === undefined) return undefined
  return await ledger.recordOnce({
    idempotencyKey: key,
    chargeId: challenge.chargeId,
    amountMinor: challenge.amountMinor,
    currency: challenge.currency,
    outcome: authenticated ? challenge.outcome : 'declined',
    declineCode: authenticated ? null : 'authentication_failed'
  })
}

/**
 * Deterministic charge outcomes by amount, after Braintree's sandbox:
 * 2000.00–2999.99 declined, 5001.00 unavailable, 5002.00 times out, 6001.00 asks for the shopper, anything else succeeds.
 */
export function simulatedOutcome (amount: string): 'succeeded' | 'declined' | 'unavailable' | 'timeout' | 'requires_action' {
  const value = Number(amount)
  if (value >= 2000 && value < 3000) return 'declined'
  if (value === SIMULATED_ACTION_AMOUNT) return 'requires_action'
  if (value === 5001) return 'unavailable'
  if (value === 5002) return 'timeout'
  return 'succeeded'
}

/**
 * Deterministic refund outcomes by refund amount (in the 4000s, which charges
 * always succeed): 4001.00 unavailable, 4002.00 times out (the refund is made,
 * the answer lost), 4003.00 refused by the gateway; anything else succeeds.
 */
export function simulatedRefundOutcome (amount: string): 'succeeded' | 'failed' | 'unavailable' | 'timeout' {
  const value = Number(amount)
  if (value === 4001) return 'unavailable'
  if (value === 4002) return 'timeout'
  if (value === 4003) return 'failed'
  return 'succeeded'
}

/** The simulated gateway's test cards, by the tokens Stripe's test mode also knows (no token: the Visa). */
const SIMULATED_CARDS: Readonly<Record<string, { brand: string, last4: string, country: string }>> = {
  pm_card_visa: { brand: 'visa', last4: '4242', country: 'US' },
  pm_card_visa_debit: { brand: 'visa', last4: '5556', country: 'US' },
  pm_card_mastercard: { brand: 'mastercard', last4: '4444', country: 'US' },
  pm_card_amex: { brand: 'amex', last4: '8431', country: 'US' },
  pm_card_discover: { brand: 'discover', last4: '1117', country: 'US' },
  pm_card_jcb: { brand: 'jcb', last4: '0505', country: 'JP' },
  pm_card_de: { brand: 'visa', last4: '3184', country: 'DE' },
  pm_card_fr: { brand: 'visa', last4: '0003', country: 'FR' },
  pm_card_gb: { brand: 'visa', last4: '0002', country: 'GB' }
}

/** The card a simulated charge is made with: a test token's card, the Visa without a token, nothing for other tokens. */
export function simulatedCardOf (paymentMethod: string | undefined): PaymentMethodDetails | undefined {
  const card = SIMULATED_CARDS[paymentMethod ?? 'pm_card_visa']
  return card === undefined ? undefined : { type: 'card', card: { ...card, expMonth: 12, expYear: 2034 } }
}

function withCard (result: ChargeResult, request: ChargeRequest): ChargeResult {
  const details = result.outcome === 'declined' && result.declineCode === VOIDED_DECLINE_CODE ? undefined : simulatedCardOf(request.paymentMethod)
  return details === undefined ? result : { ...result, paymentMethodDetails: details }
}

/**
 * A gateway that behaves like a real external one: its ledger lives in the
 * service's database keyed by the downstream idempotency key, so repeating a
 * charge, refund or void under the same key returns the first result and never
 * moves money twice, across restarts too.
 */
export function simulatedGateway (ledger: LedgerStore, options: { latencyMs: number, bankUrl?: SimulatedBankUrl }): PaymentGateway {
  const bankUrl: SimulatedBankUrl = options.bankUrl ?? (({ key, returnUrl }) => {
    const url = new URL('/simulated-bank', returnUrl)
    url.searchParams.set('key', key)
    url.searchParams.set('returnUrl', returnUrl)
    return url.toString()
  })
  const latency = async (): Promise<void> => { if (options.latencyMs > 0) await sleep(options.latencyMs) }
  return {
    async charge (request, { signal } = {}) {
      if (options.latencyMs > 0) await sleep(options.latencyMs, undefined, { signal }).catch(() => {})
      if (signal?.aborted === true) throw new GatewayError('aborted', 'the charge was abandoned (shutting down)')
      const outcome = simulatedOutcome(request.amount)
      if (outcome === 'unavailable') {
        // A charge made earlier under the key still answers; otherwise the gateway is down.
        const previous = await ledger.get(request.idempotencyKey)
        if (previous !== undefined) return withCard(chargeResultOf(previous), request)
        throw new GatewayError('unavailable', 'the simulated gateway is unavailable (amount 5001.00)')
      }
      if (outcome === 'requires_action') {
        const previous = await ledger.get(request.idempotencyKey)
        if (previous !== undefined) return withCard(chargeResultOf(previous), request)
        if (request.returnUrl === undefined) {
          // Off-session: the bank wants the shopper, who is not there.
          return withCard(chargeResultOf(await ledger.recordOnce({
            idempotencyKey: request.idempotencyKey, chargeId: `ch_${randomUUID()}`, amountMinor: request.amountMinor, currency: request.currency, outcome: 'declined', declineCode: AUTHENTICATION_REQUIRED
          })), request)
        }
        // What the charge becomes once the shopper authenticates, kept beside it until the bank's page decides.
        const challenge = await ledger.recordOnce({
          idempotencyKey: challengeKey(request.idempotencyKey),
          chargeId: `ch_${randomUUID()}`,
          amountMinor: request.amountMinor,
          currency: request.currency,
          outcome: request.captureMethod === 'manual' ? 'authorized' : 'succeeded',
          declineCode: null
        })
        return { outcome: 'requires_action', chargeId: challenge.chargeId, nextAction: { type: 'redirect', method: 'GET', url: bankUrl({ key: request.idempotencyKey, returnUrl: request.returnUrl }) } }
      }
      // recordOnce answers the entry stored first under the key: a repeated charge gets the first result.
      const chargeId = `ch_${randomUUID()}`
      const entry = await ledger.recordOnce({
        idempotencyKey: request.idempotencyKey,
        chargeId,
        amountMinor: request.amountMinor,
        currency: request.currency,
        outcome: outcome === 'declined' ? 'declined' : request.captureMethod === 'manual' ? 'authorized' : 'succeeded',
        declineCode: outcome === 'declined' ? SIMULATED_DECLINE_CODE : null
      })
      // 5002.00: the charge is made but the answer never arrives, like a real
      // timeout after the gateway did its work; a retry with the same key sees it.
      if (outcome === 'timeout' && entry.chargeId === chargeId) return await new Promise<never>(() => {})
      return withCard(chargeResultOf(entry), request)
    },

    async refund (request) {
      await latency()
      const previous = await ledger.get(request.idempotencyKey)
      if (previous !== undefined) return refundResultOf(previous)
      const outcome = simulatedRefundOutcome(request.amount)
      if (outcome === 'unavailable') throw new GatewayError('unavailable', 'the simulated gateway is unavailable for refunds (amount 4001.00)')
      const charge = await stateOf(request.chargeIdempotencyKey)
      const failureCode = charge.state !== 'captured'
        ? 'charge_not_found'
        : outcome === 'failed' ? SIMULATED_REFUND_FAILURE_CODE : null
      const entry = await ledger.recordOnce({
        idempotencyKey: request.idempotencyKey,
        chargeId: `re_${randomUUID()}`,
        amountMinor: request.amountMinor,
        currency: request.currency,
        outcome: failureCode === null ? 'succeeded' : 'declined',
        declineCode: failureCode
      })
      if (outcome === 'timeout') return await new Promise<never>(() => {})
      return refundResultOf(entry)
    },

    async void (request) {
      await latency()
      const existing = await ledger.get(request.chargeIdempotencyKey)
      if (existing?.outcome === 'authorized') {
        // An authorization is released unless its capture was recorded first.
        const settlement = await ledger.recordOnce({
          idempotencyKey: settlementKey(request.chargeIdempotencyKey),
          chargeId: `void_${randomUUID()}`,
          amountMinor: 0,
          currency: existing.currency,
          outcome: 'voided',
          declineCode: null
        })
        return settlement.outcome === 'voided' ? { outcome: 'voided' } : { outcome: 'charged', chargeId: existing.chargeId }
      }
      // A tombstone under the charge's key: a charge arriving later finds it and is not made.
      const entry = await ledger.recordOnce({
        idempotencyKey: request.chargeIdempotencyKey,
        chargeId: `void_${randomUUID()}`,
        amountMinor: 0,
        currency: 'XXX',
        outcome: 'voided',
        declineCode: null
      })
      return voidResultOf(entry)
    },

    async capture (request) {
      await latency()
      const outcome = simulatedCaptureOutcome(request.amount)
      const previous = await ledger.get(settlementKey(request.chargeIdempotencyKey))
      if (previous?.outcome === 'succeeded') return { outcome: 'captured', captureId: previous.chargeId, amountMinor: previous.amountMinor }
      if (outcome === 'unavailable') throw new GatewayError('unavailable', 'the simulated gateway is unavailable for captures (amount 3001.00)')
      if (outcome === 'failed') return { outcome: 'failed', failureCode: SIMULATED_CAPTURE_FAILURE_CODE }
      const authorization = await ledger.get(request.chargeIdempotencyKey)
      if (authorization?.outcome !== 'authorized') return { outcome: 'failed', failureCode: 'authorization_not_found' }
      if (request.amountMinor <= 0 || request.amountMinor > authorization.amountMinor) return { outcome: 'failed', failureCode: 'amount_too_large' }
      const settlement = await ledger.recordOnce({
        idempotencyKey: settlementKey(request.chargeIdempotencyKey),
        chargeId: `cap_${randomUUID()}`,
        amountMinor: request.amountMinor,
        currency: request.currency,
        outcome: 'succeeded',
        declineCode: null
      })
      if (settlement.outcome === 'voided') return { outcome: 'failed', failureCode: 'authorization_voided' }
      // 3002.00: the capture is made, the answer never arrives; a retry under the same key finds it.
      if (outcome === 'timeout') return await new Promise<never>(() => {})
      return { outcome: 'captured', captureId: settlement.chargeId, amountMinor: settlement.amountMinor }
    },

    async retrieve (request) {
      await latency()
      return await stateOf(request.chargeIdempotencyKey)
    }
  }

  async function stateOf (chargeIdempotencyKey: string): Promise<ChargeState> {
    const charge = await ledger.get(chargeIdempotencyKey)
    if (charge === undefined) {
      const challenge = await ledger.get(challengeKey(chargeIdempotencyKey))
      return challenge === undefined ? { state: 'none' } : { state: 'requires_action', chargeId: challenge.chargeId }
    }
    switch (charge.outcome) {
      case 'voided': return { state: 'voided' }
      case 'declined': return { state: 'declined', chargeId: charge.chargeId, declineCode: charge.declineCode ?? SIMULATED_DECLINE_CODE }
      case 'succeeded': return { state: 'captured', chargeId: charge.chargeId, amountCapturedMinor: charge.amountMinor }
      default: {
        const settlement = await ledger.get(settlementKey(chargeIdempotencyKey))
        if (settlement === undefined) return { state: 'authorized', chargeId: charge.chargeId, amountMinor: charge.amountMinor }
        return settlement.outcome === 'voided' ? { state: 'voided' } : { state: 'captured', chargeId: charge.chargeId, amountCapturedMinor: settlement.amountMinor }
      }
    }
  }
}

function chargeResultOf (entry: LedgerEntry): ChargeResult {
  if (entry.outcome === 'voided') return { outcome: 'declined', chargeId: entry.chargeId, declineCode: VOIDED_DECLINE_CODE }
  if (entry.outcome === 'authorized') return { outcome: 'authorized', chargeId: entry.chargeId }
  return entry.outcome === 'declined'
    ? { outcome: 'declined', chargeId: entry.chargeId, declineCode: entry.declineCode ?? SIMULATED_DECLINE_CODE }
    : { outcome: 'succeeded', chargeId: entry.chargeId }
}

function refundResultOf (entry: LedgerEntry): RefundResult {
  return entry.outcome === 'succeeded'
    ? { outcome: 'succeeded', gatewayRefundId: entry.chargeId }
    : { outcome: 'failed', gatewayRefundId: entry.chargeId, failureCode: entry.declineCode ?? SIMULATED_REFUND_FAILURE_CODE }
}

function voidResultOf (entry: LedgerEntry): VoidResult {
  if (entry.outcome === 'voided') return { outcome: 'voided' }
  if (entry.outcome === 'declined') return { outcome: 'declined', chargeId: entry.chargeId, declineCode: entry.declineCode ?? SIMULATED_DECLINE_CODE }
  return { outcome: 'charged', chargeId: entry.chargeId }
}
