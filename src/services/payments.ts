import { randomUUID } from 'node:crypto'
import { GatewayUnavailableError, NotFoundError } from '../domain/errors'
import { isGuid } from '../domain/ids'
import { transition, type Payment } from '../domain/payments'
import { formatMinorUnits, toMinorUnits } from '../domain/money'
import { minorUnitsOf } from '../domain/currencies'
import { GatewayError, type PaymentGateway } from '../gateway/types'
import type { Database, IdempotencyKeyRef, StoredResponse } from '../store/types'

/** Seconds a client should wait before retrying after the gateway was unavailable. */
export const GATEWAY_RETRY_AFTER_SECONDS = 5

/** The logger the service writes to (pino's shape; Fastify's logger is one). */
export interface Logger {
  info: (details: object, message: string) => void
  warn: (details: object, message: string) => void
  error: (details: object, message: string) => void
}

/** Where a settled payment's stored response is rendered for: the key's path and the trace id of its log lines. */
export interface ResponseOrigin {
  path: string
  traceId: string
}

/** Renders a settled payment as the response stored on its idempotency key (the payments routes' renderer). */
export type RenderSettled = (payment: Payment, origin: ResponseOrigin) => StoredResponse

export interface PaymentDeps {
  db: Database
  gateway: PaymentGateway
  clock: () => number
  log: Logger
  renderSettled: RenderSettled
}

/** A key the request owns, the payment a previous attempt created under it (if any), and the request's trace id. */
export interface PaymentKey {
  ref: IdempotencyKeyRef
  resourceId: string | null
  traceId: string
}

export interface RecoveryOptions {
  /** Pending payments older than this are considered abandoned. */
  ageSeconds: number
  /** How long one worker holds a payment (and its key) while settling it. */
  leaseMs: number
  batchSize?: number
}

export interface PaymentService {
  /** Creates (or resumes under its key) and settles a payment: succeeded or declined; GatewayUnavailableError when unknown. */
  create: (input: { amount: number, currency: string }, key?: PaymentKey) => Promise<Payment>
  /** The payment with this id; NotFoundError for an unknown id or one that is not a GUID. */
  get: (id: string) => Promise<Payment>
  /** Settles payments left pending by a crash or an outage (the recovery worker's pass). */
  recoverPending: (options: RecoveryOptions) => Promise<{ settled: number, stillPending: number }>
}

export function exponentOf (currency: string): number {
  return minorUnitsOf(currency) ?? 2
}

export function downstreamKeyFor (paymentId: string): string {
  return `payment-${paymentId}`
}

export function paymentService (deps: PaymentDeps): PaymentService {
  /**
   * Charges a pending payment under its downstream key and records the outcome
   * (with the key's response, in one transaction). A settled payment is returned
   * as it is (its key finished). When the gateway's answer is unknown the payment
   * stays pending and GatewayUnavailableError is thrown: freeing the key is the
   * caller's (the idempotency plugin's) job.
   */
  async function settle (payment: Payment, key?: { ref: IdempotencyKeyRef, traceId: string }): Promise<Payment> {
    const completion = (settled: Payment) => key === undefined
      ? undefined
      : { ref: key.ref, response: deps.renderSettled(settled, { path: key.ref.path, traceId: key.traceId }) }
    if (payment.status !== 'pending') {
      const done = completion(payment)
      if (done !== undefined) await deps.db.idempotency.finish(done.ref, done.response)
      return payment
    }
    let result
    try {
      result = await deps.gateway.charge({
        idempotencyKey: downstreamKeyFor(payment.id),
        amountMinor: payment.amountMinor,
        amount: formatMinorUnits(payment.amountMinor, exponentOf(payment.currency)),
        currency: payment.currency
      })
    } catch (err) {
      if (err instanceof GatewayError) {
        deps.log.warn({ paymentId: payment.id, gatewayFailure: err.kind }, 'gateway failed; payment left pending')
        throw new GatewayUnavailableError(
          err.kind === 'timeout'
            ? 'The payment gateway did not answer in time; the payment is pending. Retry with the same Idempotency-Key to resume it.'
            : 'The payment gateway is unavailable; the payment is pending. Retry with the same Idempotency-Key to resume it.',
          payment.id,
          GATEWAY_RETRY_AFTER_SECONDS
        )
      }
      throw err
    }
    const at = new Date(deps.clock()).toISOString()
    const final = result.outcome === 'succeeded'
      ? transition(payment, 'succeeded', at)
      : transition(payment, 'declined', at, result.declineCode)
    return await deps.db.payments.complete(final, completion(final))
  }

  return {
    /**
     * Creates a payment (or resumes the one an earlier attempt under the same key
     * created) and settles it with the gateway. The pending payment and the key's
     * recovery point are written in one transaction before the gateway is called.
     */
    async create (input, key) {
      if (key?.resourceId != null) {
        const existing = await deps.db.payments.get(key.resourceId)
        if (existing !== undefined) return await settle(existing, key)
      }
      const now = new Date(deps.clock()).toISOString()
      const payment: Payment = {
        id: randomUUID(),
        amountMinor: toMinorUnits(input.amount, exponentOf(input.currency)),
        currency: input.currency,
        status: 'pending',
        declineCode: null,
        createdAt: now,
        updatedAt: now
      }
      await deps.db.payments.create(payment, key?.ref)
      return await settle(payment, key)
    },

    async get (id) {
      const payment = isGuid(id) ? await deps.db.payments.get(id.toLowerCase()) : undefined
      if (payment === undefined) throw new NotFoundError(`No payment has the id '${id.length <= 64 ? id : `${id.slice(0, 64)}…`}'.`)
      return payment
    },

    /**
     * Charges abandoned pending payments again under the same downstream key (the
     * gateway never charges twice) and stores the final response on their key.
     * The worker leased each payment and its key; on another outage it frees the
     * key it leased at once, so the client's own retry need not wait for the lease.
     * A stored response's traceId is the id of the pass, logged with the payment.
     */
    async recoverPending (options) {
      const now = deps.clock()
      const leased = await deps.db.payments.leaseAbandoned({
        createdBefore: new Date(now - options.ageSeconds * 1000).toISOString(),
        now,
        leaseUntil: now + options.leaseMs,
        limit: options.batchSize ?? 50
      })
      const traceId = `recovery-${randomUUID()}`
      let settled = 0
      for (const payment of leased) {
        const record = await deps.db.idempotency.findByResource(payment.id)
        const ref: IdempotencyKeyRef | undefined = record === undefined || record.recoveryPoint === 'finished'
          ? undefined
          : { scope: record.scope, method: record.method, path: record.path, key: record.key }
        try {
          await settle(payment, ref === undefined ? undefined : { ref, traceId })
          settled++
        } catch (err) {
          if (ref !== undefined) await deps.db.idempotency.release(ref)
          if (!(err instanceof GatewayUnavailableError)) deps.log.error({ err, paymentId: payment.id, traceId }, 'recovery of a pending payment failed')
        }
      }
      if (leased.length > 0) deps.log.info({ settled, stillPending: leased.length - settled, traceId }, 'recovery worker pass')
      return { settled, stillPending: leased.length - settled }
    }
  }
}
