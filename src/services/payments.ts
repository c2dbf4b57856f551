import { randomUUID } from 'node:crypto'
import { GatewayUnavailableError, NotFoundError } from '../domain/errors'
import { isGuid, newId } from '../domain/ids'
import { newPendingPayment, transition, type CaptureMethod, type Payment } from '../domain/payments'
import { formatMinorUnits, toMinorUnits } from '../domain/money'
import { exponentOf } from '../domain/currencies'
import { GatewayError, type PaymentGateway } from '../gateway/types'
import type { Database, PaymentListQuery, ResourceCreation, StoredResponse } from '../store/types'
import { unfinishedKeyOf, type OwnedKey, type ResponseOrigin } from './keys'
import { paymentCreation } from '../store/rows'
import type { Metadata } from '../domain/metadata'
import type { Page } from '../domain/pagination'
import type { EventFactory } from '../domain/events'

/** Seconds a client should wait before retrying after the gateway was unavailable. */
export const GATEWAY_RETRY_AFTER_SECONDS = 5

/** The logger the service writes to (pino's shape; Fastify's logger is one). */
export interface Logger {
  info: (details: object, message: string) => void
  warn: (details: object, message: string) => void
  error: (details: object, message: string) => void
}

export interface PaymentDeps {
  db: Database
  gateway: PaymentGateway
  clock: () => number
  log: Logger
  /** The events of payment changes (written with the change); undefined: no events (core tests). */
  events?: EventFactory
  /** Seconds a manual capture's authorization lasts (AUTHORIZATION_TTL_SECONDS); default 7 days. */
  authorizationTtlSeconds?: number
}

export interface PaymentInput {
  amount: number
  currency: string
  merchantId: string
  metadata?: Metadata
  /** automatic (default): charged at once; manual: authorized, captured later (POST /api/payments/{id}/capture). */
  captureMethod?: CaptureMethod
}

/** A pending payment not yet written, and its insert, which can join the claim of the request's key. */
export interface PreparedPayment {
  payment: Payment
  creation: ResourceCreation
}

export interface RecoveryOptions {
  /** Pending payments older than this are considered abandoned. */
  ageSeconds: number
  /** Pending payments older than this are given up: voided at the gateway and settled as `failed`. */
  maxAgeSeconds?: number
  /** How long the worker holds one payment (and its key) while settling it; longer than a gateway call. */
  leaseMs: number
  /** Payments settled at once (RECOVERY_CONCURRENCY). */
  concurrency?: number
  /** Aborted on shutdown: in-flight gateway calls are abandoned and their keys released. */
  signal?: AbortSignal
  /** The response stored on the unfinished key of a payment it settles. */
  respond: (payment: Payment, origin: ResponseOrigin) => StoredResponse
}

export interface PaymentService {
  /** Creates (or resumes under its key) and settles a payment: succeeded or declined; GatewayUnavailableError when unknown. */
  /** `merchantId`: the merchant whose key asked; the payment belongs to it. */
  /**
   * With `prepared` (from `prepare(input)`): when the key's claim wrote that payment (the key's
   * resourceId is its id) it is settled without being read back or written again; without a key
   * it is the payment inserted.
   */
  create: (input: PaymentInput, key?: OwnedKey<Payment>, prepared?: PreparedPayment) => Promise<Payment>
  /**
   * The pending payment `create` would write, built before the request's Idempotency-Key is
   * claimed, so that its insert commits in the claim's transaction (plugins/idempotency `handle`).
   */
  prepare: (input: PaymentInput) => PreparedPayment
  /**
   * The payment with this id; NotFoundError for an unknown id or one that is not a GUID. With
   * `owner` (a merchant id), a payment of another merchant, or of none (created before
   * authentication), is not found: the same NotFoundError as an unknown id.
   */
  get: (id: string, owner?: string) => Promise<Payment>
  /** A page of payments, newest first; UnknownCursorError for a cursor outside the list. */
  list: (query: PaymentListQuery) => Promise<Page<Payment>>
  /** Settles payments left pending by a crash or an outage (the recovery worker's pass). */
  recoverPending: (options: RecoveryOptions) => Promise<{ settled: number, stillPending: number }>
}

export function downstreamKeyFor (paymentId: string): string {
  return `payment-${paymentId}`
}

export function paymentService (deps: PaymentDeps): PaymentService {
  function pendingPayment (input: PaymentInput): Payment {
    return newPendingPayment({
      id: newId(),
      merchantId: input.merchantId,
      amountMinor: toMinorUnits(input.amount, exponentOf(input.currency)),
      currency: input.currency,
      metadata: input.metadata,
      captureMethod: input.captureMethod,
      authorizationTtlSeconds: deps.authorizationTtlSeconds,
      at: new Date(deps.clock()).toISOString()
    })
  }

  /**
   * Charges a pending payment under its downstream key and records the outcome
   * (with the key's response, in one transaction). A settled payment is returned
   * as it is (its key finished). When the gateway's answer is unknown the payment
   * stays pending and GatewayUnavailableError is thrown: freeing the key is the
   * caller's (the idempotency plugin's) job.
   */
  async function settle (payment: Payment, key?: OwnedKey<Payment>, signal?: AbortSignal, options: { quiet?: boolean } = {}): Promise<Payment> {
    const completion = (settled: Payment) => key === undefined ? undefined : { ref: key.ref, response: key.respond(settled) }
    if (payment.status !== 'pending') {
      const done = completion(payment)
      if (done !== undefined) await deps.db.idempotency.finish(done.ref, done.response)
      return payment
    }
    let result
    try {
      result = await deps.gateway.charge({
        idempotencyKey: downstreamKeyFor(payment.id),
        paymentId: payment.id,
        amountMinor: payment.amountMinor,
        amount: formatMinorUnits(payment.amountMinor, exponentOf(payment.currency)),
        currency: payment.currency,
        captureMethod: payment.captureMethod
      }, { signal })
    } catch (err) {
      if (err instanceof GatewayError) {
        if (options.quiet !== true) deps.log.warn({ paymentId: payment.id, gatewayFailure: err.kind }, 'gateway failed; payment left pending')
        await recordPending(payment)
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
    const final = result.outcome === 'declined'
      ? transition(payment, 'declined', at, result.declineCode)
      : transition(payment, result.outcome === 'authorized' ? 'requires_capture' : 'succeeded', at)
    return await deps.db.payments.complete(final, completion(final), deps.events?.payment)
  }

  /** payment.pending, once per payment: the gateway's outcome is unknown. Its own write (no state changed); a failure is logged, never thrown. */
  async function recordPending (payment: Payment): Promise<void> {
    const event = deps.events?.payment(payment)
    if (event === undefined) return
    try {
      await deps.db.events.appendPaymentPending(event)
    } catch (err) {
      deps.log.error({ err, paymentId: payment.id }, 'the payment.pending event could not be recorded')
    }
  }

  /**
   * Gives up on a payment pending past PENDING_PAYMENT_MAX_AGE: the gateway is
   * asked to void its charge (so a late charge under the key cannot go through).
   * No charge existed → `failed` (pending_expired); the charge had gone through
   * → `succeeded` (the truth; the merchant may refund it); declined → `declined`.
   * A gateway still unreachable after the maximum age cannot tell: the payment is
   * settled `failed` (gateway_unreachable) and an error is logged for follow-up.
   */
  async function expire (payment: Payment, key?: OwnedKey<Payment>): Promise<Payment> {
    const at = new Date(deps.clock()).toISOString()
    let final: Payment
    try {
      const result = await deps.gateway.void({ chargeIdempotencyKey: downstreamKeyFor(payment.id) })
      final = result.outcome === 'voided'
        ? transition(payment, 'failed', at, 'pending_expired')
        : result.outcome === 'charged' ? transition(payment, 'succeeded', at) : transition(payment, 'declined', at, result.declineCode)
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err
      deps.log.error({ paymentId: payment.id, gatewayFailure: err.kind }, 'pending payment expired while the gateway is unreachable; its outcome at the gateway is unverified')
      final = transition(payment, 'failed', at, 'gateway_unreachable')
    }
    return await deps.db.payments.complete(final, key === undefined ? undefined : { ref: key.ref, response: key.respond(final) }, deps.events?.payment)
  }

  return {
    /**
     * Creates a payment (or resumes the one an earlier attempt under the same key
     * created) and settles it with the gateway. The pending payment and the key's
     * recovery point are written in one transaction before the gateway is called.
     */
    async create (input, key, prepared) {
      if (key?.resourceId != null) {
        // Written by this request's claim (one transaction with the key): settle it as built.
        if (prepared !== undefined && prepared.payment.id === key.resourceId) return await settle(prepared.payment, key)
        const existing = await deps.db.payments.get(key.resourceId)
        if (existing !== undefined) return await settle(existing, key)
      }
      const payment = prepared?.payment ?? pendingPayment(input)
      await deps.db.payments.create(payment, key?.ref)
      return await settle(payment, key)
    },

    prepare (input) {
      const payment = pendingPayment(input)
      return { payment, creation: paymentCreation(payment) }
    },

    async get (id, owner) {
      const found = isGuid(id) ? await deps.db.payments.get(id.toLowerCase()) : undefined
      const payment = owner === undefined || (found !== undefined && found.merchantId !== null && found.merchantId === owner.toLowerCase()) ? found : undefined
      if (payment === undefined) throw new NotFoundError(`No payment has the id '${id.length <= 64 ? id : `${id.slice(0, 64)}…`}'.`)
      return payment
    },

    async list (query) {
      return await deps.db.payments.list(query)
    },

    /**
     * Charges abandoned pending payments again under the same downstream key (the
     * gateway never charges twice) and stores the final response on their key.
     *
     * `concurrency` lanes each lease ONE payment (and its key), settle it, and lease
     * the next, so a lease is taken just before its payment is worked on and always
     * outlives that work (one gateway call, bounded by GATEWAY_TIMEOUT_MS): a slow
     * payment delays only its own lane and never holds other payments' keys, and no
     * other instance can lease a payment while it is being settled. On another outage
     * the lane frees the key it leased at once (the client's own retry need not wait
     * for the lease) and the pass stops (the next one tries again); the payment keeps
     * its lease, so it is not retried before the lease ends. When `signal` aborts
     * (shutdown) the gateway calls in flight are abandoned the same way, at once.
     * A stored response's traceId is the id of the pass, logged with the payment.
     */
    async recoverPending (options) {
      const { signal } = options
      const createdBefore = new Date(deps.clock() - options.ageSeconds * 1000).toISOString()
      const traceId = `recovery-${randomUUID()}`
      let settled = 0
      let stillPending = 0
      let gatewayDown = false
      const recoverOne = async (payment: Payment): Promise<void> => {
        let key: OwnedKey<Payment> | undefined
        const ageMs = deps.clock() - Date.parse(payment.createdAt)
        try {
          key = await unfinishedKeyOf(deps.db, payment.id, traceId, options.respond)
          const final = options.maxAgeSeconds !== undefined && ageMs >= options.maxAgeSeconds * 1000
            ? await expire(payment, key)
            : await settle(payment, key, signal, { quiet: true })
          settled++
          // One line per state change; attempts that change nothing log nothing.
          deps.log.info({ paymentId: payment.id, status: final.status, failureCode: final.failureCode ?? undefined, traceId }, 'recovery settled a pending payment')
        } catch (err) {
          stillPending++
          if (err instanceof GatewayUnavailableError) {
            gatewayDown = true
            // Still unknown: not again before the back-off (about its age: attempts grow geometrically).
            await deps.db.payments.deferRecovery(payment.id, deps.clock() + recoveryBackoffMs(ageMs, options.leaseMs))
          } else {
            deps.log.error({ err, paymentId: payment.id, traceId }, 'recovery of a pending payment failed')
          }
          if (key !== undefined) await deps.db.idempotency.release(key.ref)
        }
      }
      const lane = async (): Promise<void> => {
        for (;;) {
          // gatewayDown is set by recoverOne, in this or another lane.
          if (signal?.aborted === true || gatewayDown) return
          const now = deps.clock()
          const [payment] = await deps.db.payments.leaseAbandoned({ createdBefore, now, leaseUntil: now + options.leaseMs, limit: 1 })
          if (payment === undefined) return
          await recoverOne(payment)
        }
      }
      const lanes = await Promise.allSettled(Array.from({ length: options.concurrency ?? 4 }, lane))
      if (signal?.aborted === true && settled + stillPending > 0) deps.log.info({ settled, stillPending, aborted: true, traceId }, 'recovery worker pass')
      const failure = lanes.find((result): result is PromiseRejectedResult => result.status === 'rejected')
      if (failure !== undefined) throw failure.reason
      return { settled, stillPending }
    }
  }
}

/** Back-off of the recovery worker: about the payment's age (so attempts grow geometrically), from one lease to an hour. */
export function recoveryBackoffMs (ageMs: number, leaseMs: number): number {
  return Math.min(Math.max(ageMs, leaseMs), 3_600_000)
}
