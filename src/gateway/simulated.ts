import { setTimeout as sleep } from 'node:timers/promises'
import { randomUUID } from 'node:crypto'
import type { LedgerStore } from '../store/types'
import { GatewayError, type ChargeResult, type PaymentGateway } from './types'

export const SIMULATED_DECLINE_CODE = 'card_declined'

/**
 * Deterministic outcomes by amount, after Braintree's sandbox:
 * 2000.00–2999.99 declined, 5001.00 unavailable, 5002.00 times out, anything else succeeds.
 */
export function simulatedOutcome (amount: string): 'succeeded' | 'declined' | 'unavailable' | 'timeout' {
  const value = Number(amount)
  if (value >= 2000 && value < 3000) return 'declined'
  if (value === 5001) return 'unavailable'
  if (value === 5002) return 'timeout'
  return 'succeeded'
}

/**
 * A gateway that behaves like a real external one: its ledger lives in the
 * service's database keyed by the downstream idempotency key, so repeating a
 * charge under the same key returns the first result and never charges twice,
 * across restarts too.
 */
export function simulatedGateway (ledger: LedgerStore, options: { latencyMs: number }): PaymentGateway {
  return {
    async charge (request, { signal } = {}) {
      if (options.latencyMs > 0) await sleep(options.latencyMs, undefined, { signal }).catch(() => {})
      if (signal?.aborted === true) throw new GatewayError('aborted', 'the charge was abandoned (shutting down)')
      const previous = await ledger.get(request.idempotencyKey)
      if (previous !== undefined) return resultOf(previous)
      const outcome = simulatedOutcome(request.amount)
      if (outcome === 'unavailable') throw new GatewayError('unavailable', 'the simulated gateway is unavailable (amount 5001.00)')
      const entry = await ledger.recordOnce({
        idempotencyKey: request.idempotencyKey,
        chargeId: `ch_${randomUUID()}`,
        amountMinor: request.amountMinor,
        currency: request.currency,
        outcome: outcome === 'declined' ? 'declined' : 'succeeded',
        declineCode: outcome === 'declined' ? SIMULATED_DECLINE_CODE : null
      })
      // 5002.00: the charge is made but the answer never arrives, like a real
      // timeout after the gateway did its work; a retry with the same key sees it.
      if (outcome === 'timeout') return await new Promise<never>(() => {})
      return resultOf(entry)
    }
  }
}

function resultOf (entry: { chargeId: string, outcome: 'succeeded' | 'declined', declineCode: string | null }): ChargeResult {
  return entry.outcome === 'declined'
    ? { outcome: 'declined', chargeId: entry.chargeId, declineCode: entry.declineCode ?? SIMULATED_DECLINE_CODE }
    : { outcome: 'succeeded', chargeId: entry.chargeId }
}
