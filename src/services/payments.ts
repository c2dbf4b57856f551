import { randomUUID } from 'node:crypto'
import { GatewayUnavailableError, NotFoundError, ValidationError } from '../domain/errors'
import { isGuid, newId } from '../domain/ids'
import {
  isPinnedToConnector, newPendingPayment, paymentMethodFor, NoConnectorError, transition, withAttempt, type AttemptOutcome, type CaptureMethod, type Payment
} from '../domain/payments'
import { formatMinorUnits, toMinorUnits } from '../domain/money'
import { exponentOf } from '../domain/currencies'
import { GatewayError, type ChargeResult, type PaymentGateway } from '../gateway/types'
import type { ConnectorDirectory, ConnectorRef, RoutedConnector } from '../gateway/connectors'
import { singleGatewayDirectory } from '../gateway/directory'
import type { Database, PaymentListQuery, ResourceCreation, StoredResponse } from '../store/types'
import { unfinishedKeyOf, type OwnedKey, type ResponseOrigin } from './keys'
import { paymentCreation } from '../store/rows'
import type { Metadata } from '../domain/metadata'
import type { Page } from '../domain/pagination'
import type { EventFactory } from '../domain/events'
import { summarize, summaryRange, type PaymentSummary } from '../domain/payment-summary'

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
  /** The gateway of every payment when there is no `connectors` directory (core tests). */
  gateway: PaymentGateway
  /** Routing to the merchants' connector accounts (plugins/connectors). */
  connectors?: ConnectorDirectory
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
  /** The connector's payment method token (Stripe: `pm_…`). */
  paymentMethod?: string
  /** Tokens per connector account id or connector type, for payments that may fail over between PSPs. */
  paymentMethods?: Readonly<Record<string, string>>
  /** The shopper whose stored payment method is charged (Adyen). */
  shopperReference?: string
}

/** A pending payment not yet written, and its insert, which can join the claim of the request's key. */
export interface PreparedPayment {
  payment: Payment
  creation: ResourceCreation
  /** The merchant's connectors in routing order as read to prepare it: its settlement starts from them instead of reading them again. */
  connectors?: RoutedConnector[]
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
  /**
   * Creates (or resumes under its key) and settles a payment of `input.merchantId`: succeeded,
   * requires_capture or declined; GatewayUnavailableError when the outcome is unknown. Under a key:
   * `key.created` (the claim wrote it) is settled as it is; an earlier attempt's payment
   * (`key.resourceId`) is resumed; otherwise a payment is written and settled. `prepared` (from
   * `prepare(input)`) is the payment written when nothing under the key has one.
   */
  create: (input: PaymentInput, key?: OwnedKey<Payment>, prepared?: PreparedPayment) => Promise<Payment>
  /**
   * The pending payment `create` would write, routed to the merchant's first connector (NoConnectorError
   * when it has none) and built before the request's Idempotency-Key is claimed, so that its insert
   * commits in the claim's transaction (create-under-key, plugins/idempotency `handle`).
   */
  prepare: (input: PaymentInput) => Promise<PreparedPayment>
  /**
   * The payment with this id; NotFoundError for an unknown id or one that is not a GUID. With
   * `owner` (a merchant id), a payment of another merchant, or of none (created before
   * authentication), is not found: the same NotFoundError as an unknown id.
   */
  get: (id: string, owner?: string) => Promise<Payment>
  /** A page of payments, newest first; UnknownCursorError for a cursor outside the list. */
  list: (query: PaymentListQuery) => Promise<Page<Payment>>
  /**
   * The merchant's daily figures over whole UTC days (`to` included; default the 30 days ending today
   * by the clock); ValidationError for a date that is not one, `from` after `to` or over 366 days.
   */
  summary: (query: { merchantId: string, from?: string, to?: string }) => Promise<PaymentSummary>
  /** Settles payments left pending by a crash or an outage (the recovery worker's pass). */
  recoverPending: (options: RecoveryOptions) => Promise<{ settled: number, stillPending: number }>
  /**
   * Settles a payment still pending on `connector` with an outcome the connector reported by itself
   * (a PSP's webhook), exactly as an answer to the charge would: connector reference, attempt,
   * transition and event. A payment settled already, or on another connector, is returned unchanged;
   * undefined when there is no such payment.
   */
  applyConnectorOutcome: (paymentId: string, connector: ConnectorRef, result: ChargeResult) => Promise<Payment | undefined>
}

/** Connector account ids are GUIDs: compared in lower case, like every id. */
function normalizedMethodKeys (methods: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(methods).map(([key, value]) => [key.toLowerCase(), value]))
}

/** Thrown inside a settlement when the payment was settled by another writer meanwhile. */
class SettledElsewhere extends Error {
  constructor (readonly payment: Payment) { super('settled elsewhere') }
}

function connectorKey (connector: ConnectorRef): string {
  return `${connector.type}:${connector.id ?? 'default'}`
}

function sameConnector (a: ConnectorRef, b: ConnectorRef): boolean {
  return a.id === b.id && a.type === b.type
}

/** How one settlement runs: `quiet` (the recovery worker logs its own), and the merchant's connectors when already read for this request. */
interface SettleOptions {
  quiet?: boolean
  connectors?: RoutedConnector[]
}

export function downstreamKeyFor (paymentId: string): string {
  return `payment-${paymentId}`
}

export function paymentService (deps: PaymentDeps): PaymentService {
  const directory = deps.connectors ?? singleGatewayDirectory(deps.gateway)

  /** The connector a new payment starts on: the merchant's first by routing; NoConnectorError when there is none. */
  function firstConnector (input: PaymentInput, candidates: RoutedConnector[]): ConnectorRef {
    const [first] = candidates
    if (first === undefined) throw new NoConnectorError()
    const methods = { paymentMethod: input.paymentMethod ?? null, paymentMethods: normalizedMethodKeys(input.paymentMethods ?? {}) }
    if (candidates.every((candidate) => paymentMethodFor(methods, candidate) === null)) {
      throw new ValidationError({
        paymentMethod: [`None of your connectors can charge this payment without a payment method: send paymentMethod (or paymentMethods) with a token of ${
          [...new Set(candidates.map((candidate) => candidate.type))].join(' or ')}.`]
      })
    }
    return { id: first.id, type: first.type }
  }

  function pendingPayment (input: PaymentInput, connector: ConnectorRef): Payment {
    return newPendingPayment({
      paymentMethod: input.paymentMethod,
      paymentMethods: input.paymentMethods === undefined ? undefined : normalizedMethodKeys(input.paymentMethods),
      shopperReference: input.shopperReference,
      connector,
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
  async function settle (payment: Payment, key?: OwnedKey<Payment>, signal?: AbortSignal, options: SettleOptions = {}): Promise<Payment> {
    try {
      return await charge(payment, key, signal, options)
    } catch (err) {
      if (err instanceof SettledElsewhere) return await charge(err.payment, key, signal, options)
      throw err
    }
  }

  async function charge (payment: Payment, key?: OwnedKey<Payment>, signal?: AbortSignal, options: SettleOptions = {}): Promise<Payment> {
    const completion = (settled: Payment) => key === undefined ? undefined : { ref: key.ref, response: key.respond(settled) }
    if (payment.status !== 'pending') {
      const done = completion(payment)
      if (done !== undefined) await deps.db.idempotency.finish(done.ref, done.response)
      return payment
    }
    let current = payment
    const refused = new Set<string>()
    for (let target = await nextConnector(current, refused, options.connectors); target !== undefined; target = await nextConnector(current, refused, options.connectors)) {
      if (!sameConnector(target, current.connector) || !isPinnedToConnector(current)) {
        // Moving on: the move is written before the call, so a crash during it leaves the payment on `target`.
        current = await recordAttempt(current, target, 'pending', null)
      }
      const paymentMethod = paymentMethodFor(current, target)
      if (paymentMethod === null) {
        // No token this connector can use: not asked, certainly nothing charged there.
        current = await recordAttempt(current, target, 'skipped', 'no_payment_method')
        refused.add(connectorKey(target))
        continue
      }
      let result: ChargeResult
      try {
        result = await target.gateway.charge({
          idempotencyKey: downstreamKeyFor(current.id),
          paymentId: current.id,
          ...(paymentMethod !== undefined ? { paymentMethod } : {}),
          ...(current.shopperReference !== null ? { shopperReference: current.shopperReference } : {}),
          amountMinor: current.amountMinor,
          amount: formatMinorUnits(current.amountMinor, exponentOf(current.currency)),
          currency: current.currency,
          captureMethod: current.captureMethod
        }, { signal })
      } catch (err) {
        if (!(err instanceof GatewayError)) throw err
        if (err.kind === 'not_processed') {
          // Certainly nothing was charged there: the next connector may take it.
          deps.log.warn({ paymentId: current.id, connectorId: target.id, connectorType: target.type, gatewayFailure: err.code }, 'connector did not process the charge; trying the next one')
          current = await recordAttempt(current, target, 'not_processed', err.code)
          refused.add(connectorKey(target))
          continue
        }
        if (options.quiet !== true) deps.log.warn({ paymentId: current.id, connectorId: target.id, gatewayFailure: err.kind }, 'gateway failed; payment left pending')
        await recordAttempt(current, target, 'unknown', err.code).catch((recordError: unknown) => {
          deps.log.error({ err: recordError, paymentId: current.id }, 'the unknown attempt could not be recorded')
        })
        await recordPending(current)
        throw unavailable(current.id, err.kind === 'timeout'
          ? 'The payment gateway did not answer in time; the payment is pending. Retry with the same Idempotency-Key to resume it.'
          : 'The payment gateway is unavailable; the payment is pending. Retry with the same Idempotency-Key to resume it.')
      }
      const final = settledBy(current, target, result)
      return await deps.db.payments.complete(final, completion(final), deps.events?.payment)
    }
    // Every connector certainly refused: nothing was charged anywhere; the payment waits for a retry.
    await recordPending(current)
    throw unavailable(current.id, 'No connector could process the payment (each refused it without charging); the payment is pending. ' +
      'Retry with the same Idempotency-Key to try again.')
  }

  /** The pending payment as `connector`'s answer settles it: its reference, the attempt's outcome, the new status. */
  function settledBy (payment: Payment, connector: ConnectorRef, result: ChargeResult): Payment {
    const at = new Date(deps.clock()).toISOString()
    const outcome: AttemptOutcome = result.outcome
    const charged: Payment = {
      ...payment,
      connector: { id: connector.id, type: connector.type },
      connectorReference: result.chargeId,
      attempts: withAttempt(payment, { connectorId: connector.id, connectorType: connector.type, outcome, code: result.outcome === 'declined' ? result.declineCode : null, at })
    }
    return result.outcome === 'declined'
      ? transition(charged, 'declined', at, result.declineCode)
      : transition(charged, result.outcome === 'authorized' ? 'requires_capture' : 'succeeded', at)
  }

  function unavailable (paymentId: string, message: string): GatewayUnavailableError {
    return new GatewayUnavailableError(message, paymentId, GATEWAY_RETRY_AFTER_SECONDS)
  }

  /**
   * The connector to charge next: the payment's own while it is pinned to it (an attempt there may
   * have charged); otherwise the merchant's connectors in routing order, skipping those that
   * refused during this settlement. Undefined when none is left.
   */
  async function nextConnector (payment: Payment, refused: Set<string>, routed?: RoutedConnector[]): Promise<RoutedConnector | undefined> {
    if (isPinnedToConnector(payment)) {
      return { ...payment.connector, gateway: await directory.gatewayOf(payment.connector) }
    }
    const candidates = routed ?? await directory.candidatesFor(payment.merchantId)
    return candidates.find((candidate) => !refused.has(connectorKey(candidate)))
  }

  /** Writes an attempt's outcome (and the connector the payment is on) while the payment is pending. */
  async function recordAttempt (payment: Payment, target: ConnectorRef, outcome: AttemptOutcome, code: string | null): Promise<Payment> {
    const at = new Date(deps.clock()).toISOString()
    const attempt = { connectorId: target.id, connectorType: target.type, outcome, code, at }
    const recorded: Payment = { ...payment, connector: { id: target.id, type: target.type }, attempts: withAttempt(payment, attempt), updatedAt: at }
    if (!await deps.db.payments.recordAttempts(recorded)) {
      // Settled meanwhile (another request or the recovery worker): what is stored stands.
      const stored = await deps.db.payments.get(payment.id)
      if (stored !== undefined && stored.status !== 'pending') throw new SettledElsewhere(stored)
    }
    return recorded
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
      const gateway = await directory.gatewayOf(payment.connector)
      const result = await gateway.void({ chargeIdempotencyKey: downstreamKeyFor(payment.id), paymentId: payment.id, ...referenceOf(payment) })
      // Accepted, outcome by notification: still unknown here, so the payment stays pending (the worker defers it).
      if (result.outcome === 'received') throw unavailable(payment.id, 'The connector accepted the cancel; its outcome arrives by notification.')
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
      // Create-under-key: this request's claim wrote the payment with the key; settle it as built.
      if (key?.created !== undefined) return await settle(key.created, key, undefined, { connectors: prepared?.connectors })
      if (key?.resourceId != null) {
        const existing = await deps.db.payments.get(key.resourceId)
        if (existing !== undefined) return await settle(existing, key)
      }
      if (prepared !== undefined) {
        await deps.db.payments.create(prepared.payment, key?.ref)
        return await settle(prepared.payment, key, undefined, { connectors: prepared.connectors })
      }
      const connectors = await directory.candidatesFor(input.merchantId)
      const payment = pendingPayment(input, firstConnector(input, connectors))
      await deps.db.payments.create(payment, key?.ref)
      return await settle(payment, key, undefined, { connectors })
    },

    async prepare (input) {
      const connectors = await directory.candidatesFor(input.merchantId)
      const payment = pendingPayment(input, firstConnector(input, connectors))
      return { payment, creation: paymentCreation(payment), connectors }
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

    async summary ({ merchantId, from, to }) {
      const range = summaryRange({ from, to }, deps.clock())
      return summarize(range, await deps.db.payments.dailySummary({ merchantId, createdGte: range.createdGte, createdLt: range.createdLt }))
    },

    async applyConnectorOutcome (paymentId, connector, result) {
      const payment = await deps.db.payments.get(paymentId)
      if (payment === undefined || payment.status !== 'pending' || !sameConnector(payment.connector, connector)) return payment
      // complete() moves it only from pending: an answer to a concurrent charge (or the recovery worker) may win; both say the same.
      return await deps.db.payments.complete(settledBy(payment, connector, result), undefined, deps.events?.payment)
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

/** The charge's reference for a gateway request, when the connector gave one. */
export function referenceOf (payment: Payment): { chargeReference?: string } {
  return payment.connectorReference === null ? {} : { chargeReference: payment.connectorReference }
}

/** Back-off of the recovery worker: about the payment's age (so attempts grow geometrically), from one lease to an hour. */
export function recoveryBackoffMs (ageMs: number, leaseMs: number): number {
  return Math.min(Math.max(ageMs, leaseMs), 3_600_000)
}
