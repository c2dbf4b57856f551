import type { Database, IdempotencyKeyRef } from '../store/types'
import { settlePayment, type PaymentDeps } from './payments'
import { GatewayUnavailableError } from '../domain/errors'

export interface RecoveryOptions {
  /** Pending payments older than this are considered abandoned. */
  ageSeconds: number
  /** How long one worker holds a payment (and its key) while settling it. */
  leaseMs: number
  batchSize?: number
}

/** Deletes idempotency keys past retention (never one whose payment is pending). */
export async function reapExpiredKeys (db: Database, now: number): Promise<number> {
  return await db.idempotency.reap(now)
}

/**
 * Finishes payments left pending by a crash or an outage: charges them again
 * under the same downstream key (the gateway never charges twice) and stores
 * the final response on their idempotency key, if they have one.
 */
export async function recoverPendingPayments (deps: PaymentDeps, options: RecoveryOptions): Promise<{ settled: number, stillPending: number }> {
  const now = deps.clock()
  const leased = await deps.db.payments.leaseAbandoned({
    createdBefore: new Date(now - options.ageSeconds * 1000).toISOString(),
    now,
    leaseUntil: now + options.leaseMs,
    limit: options.batchSize ?? 50
  })
  let settled = 0
  for (const payment of leased) {
    const key = await deps.db.idempotency.findByResource(payment.id)
    const ref: IdempotencyKeyRef | undefined = key === undefined || key.recoveryPoint === 'finished'
      ? undefined
      : { scope: key.scope, method: key.method, path: key.path, key: key.key }
    try {
      await settlePayment(deps, payment, { instance: key?.path ?? '/api/payments', traceId: `recovery-${payment.id}` }, ref)
      settled++
    } catch (err) {
      if (!(err instanceof GatewayUnavailableError)) deps.log.error({ err, paymentId: payment.id }, 'recovery of a pending payment failed')
    }
  }
  if (leased.length > 0) deps.log.info({ settled, stillPending: leased.length - settled }, 'recovery worker pass')
  return { settled, stillPending: leased.length - settled }
}
