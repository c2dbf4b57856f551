import { randomBytes, randomUUID } from 'node:crypto'
import { GatewayUnavailableError, NotFoundError, ValidationError } from '../domain/errors'
import { isGuid, newId } from '../domain/ids'
import { ConnectorEventNotMatchedError } from '../domain/connectors'
import {
  downstreamKeyFor, heldCaptureOf, moneyHeldBy, newPendingPayment, paymentMethodFor, pinnedConnector, pinnedSince, NoConnectorError, transition, wasAskedOf, withAttempt,
  CustomerPresentUnsupportedError, PublicBaseUrlRequiredError, DEFAULT_ACTION_TTL_SECONDS, HELD_CAPTURED,
  type AttemptOutcome, type CaptureMethod, type Payment, type PaymentAttempt, type PaymentStatus,
  type CheckoutData
} from '../domain/payments'
import { formatMinorUnits, toMinorUnits } from '../domain/money'
import { exponentOf } from '../domain/currencies'
import { GatewayError, type ChargeResult, type ChargeState, type PaymentGateway } from '../gateway/types'
import type { ConnectorDirectory, ConnectorRef, RoutedConnector } from '../gateway/connectors'
import { singleGatewayDirectory } from '../gateway/directory'
import type { ConnectorRegistry } from '../gateway/connector'
import type { Database, PaymentListQuery, ResourceCreation, StoredResponse } from '../store/types'
import { unfinishedKeyOf, type OwnedKey, type ResponseOrigin } from './keys'
import { failureSummary, type FailureSummary } from './failure-summary'
import { paymentCreation } from '../store/rows'
import type { Metadata } from '../domain/metadata'
import type { Customer } from '../domain/customers'
import type { Page } from '../domain/pagination'
import type { EventFactory } from '../domain/event-factory'
import { summarize, summaryRange, type PaymentSummary } from '../domain/payment-summary'
import type { CallOutcome, ConnectorCall } from '../domain/connector-stats'
import type { PaymentReports } from '../gateway/inbound'
import type { Logger } from '../logger'

/** Seconds a client should wait before retrying after the gateway was unavailable. */
export const GATEWAY_RETRY_AFTER_SECONDS = 5

/**
 * After a payment's request was answered 503 (Retry-After: GATEWAY_RETRY_AFTER_SECONDS), the recovery worker leaves
 * the payment to its client this long: a retry up to twice the Retry-After never meets the worker's hold (409).
 */
export const CLIENT_RETRY_WINDOW_SECONDS = 2 * GATEWAY_RETRY_AFTER_SECONDS

export type { Logger } from '../logger'

export interface PaymentDeps {
  db: Database
  /** The gateway of every payment when there is no `connectors` directory (core tests). */
  gateway: PaymentGateway
  /** Routing to the merchants' connector accounts (plugins/connectors). */
  connectors?: ConnectorDirectory
  /** What each connector type can do (customer-present payments, payment method tokens): the instance's connector modules. */
  registry: ConnectorRegistry
  clock: () => number
  log: Logger
  /** The events of payment changes (written with the change); undefined: no events (core tests). */
  events?: EventFactory
  /** Seconds a manual capture's authorization lasts (AUTHORIZATION_TTL_SECONDS); default 7 days. */
  authorizationTtlSeconds?: number
  /**
   * The response stored on a payment's unfinished Idempotency-Key when something other than its request settles
   * it (a PSP's event or notification), so the client's retry gets the outcome; undefined: keys wait for the retry.
   */
  respond?: (payment: Payment, origin: ResponseOrigin) => StoredResponse
  /** Failed gateway calls are logged as one summary per connector per this many ms (the single lines at debug); default 10 s. */
  failureLogIntervalMs?: number
  /**
   * The return address on this service of a customer-present payment, from its action token (PUBLIC_BASE_URL and the
   * return endpoint's path, supplied by the edge); undefined: no PUBLIC_BASE_URL, customer-present payments are refused.
   */
  returnAddress?: (actionToken: string) => string
}

export interface PaymentInput {
  amount: number
  currency: string
  merchantId: string
  metadata?: Metadata
  /** automatic (default): charged at once; manual: authorized, captured later (POST /api/payments/{id}/capture). */
  captureMethod?: CaptureMethod
  /** The connector's payment method token (Stripe: `pm_…`). */
  /** A token, or (customer-present Adyen payments) the object Adyen's Web Components produce. */
  paymentMethod?: string | Readonly<Record<string, unknown>>
  /** Customer-present: the shopper's browser (Adyen's browserInfo) and the page's origin, passed on to a connector that takes them. */
  browserInfo?: Readonly<Record<string, unknown>>
  origin?: string
  /** Tokens per connector account id or connector type, for payments that may fail over between PSPs. */
  paymentMethods?: Readonly<Record<string, string>>
  /** The shopper whose stored payment method is charged (Adyen). */
  shopperReference?: string
  /** Who pays (issue 44). */
  customer?: Customer
  /** Customer-present: where the shopper is sent back after the connector's authentication (the merchant's page). */
  returnUrl?: string
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

export interface PaymentService extends PaymentReports {
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
  /** Gives back money still `held` at connectors (a release that failed or could not be asked); the recovery worker's pass. */
  releaseHeldMoney: (options?: { limit?: number }) => Promise<{ released: number, stillHeld: number }>
  /**
   * The shopper came back from the connector's authentication to the return address of `actionToken`: the
   * connector is asked (never the query or form, which only `returnParams` passes on to a connector that needs
   * them) and its answer recorded in one transaction. A payment no longer waiting is returned as it is; one the
   * connector cannot tell about yet (or cannot be asked) stays `requires_action` (its webhook or the recovery
   * worker settles it). NotFoundError for an unknown token.
   */
  completeAction: (actionToken: string, returnParams?: Readonly<Record<string, string>>) => Promise<Payment>
  /** The merchant's returnUrl of the payment whose return address carries this token; undefined for an unknown token. */
  returnUrlOfAction: (actionToken: string) => Promise<string | undefined>
  /**
   * The recovery worker's pass over payments waiting for their shopper: those unchanged for `askAfterSeconds` are
   * asked about at their connector; those older than `ttlSeconds` (ACTION_TTL_SECONDS) are canceled there and end
   * `canceled` (`abandoned`), unless the connector says the money was taken meanwhile (success wins).
   */
  recoverActions: (options?: { askAfterSeconds?: number, ttlSeconds?: number, limit?: number }) => Promise<{ settled: number, abandoned: number, waiting: number }>
  /** Writes the failure summaries still open at once (on shutdown, so the last interval's failures are not lost). */
  flushFailureLog: () => void
}

/** An action token: 32 random bytes, base64url (43 characters). */
const ACTION_TOKEN = /^[A-Za-z0-9_-]{43}$/

/** Connector account ids are GUIDs: compared in lower case, like every id. */
function normalizedMethodKeys (methods: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(methods).map(([key, value]) => [key.toLowerCase(), value]))
}

/** Thrown inside a settlement when the payment was settled by another writer meanwhile. */
class SettledElsewhere extends Error {
  constructor (readonly payment: Payment) { super('settled elsewhere') }
}

/** What a customer-present charge sends beside a token (kept while pending): undefined when the request has none of it. */
function checkoutDataOf (input: PaymentInput): CheckoutData | undefined {
  if (input.returnUrl === undefined) return undefined
  const data: CheckoutData = {
    ...(input.paymentMethod !== undefined && typeof input.paymentMethod !== 'string' ? { paymentMethod: input.paymentMethod } : {}),
    ...(input.browserInfo !== undefined ? { browserInfo: input.browserInfo } : {}),
    ...(input.origin !== undefined ? { origin: input.origin } : {})
  }
  return Object.keys(data).length === 0 ? undefined : data
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

export function paymentService (deps: PaymentDeps): PaymentService {
  const directory = deps.connectors ?? singleGatewayDirectory(deps.gateway)
  const { registry } = deps
  const failures: FailureSummary = failureSummary(deps.log, deps.clock, deps.failureLogIntervalMs ?? 10_000)

  /** The connector a new payment starts on: the merchant's first by routing; NoConnectorError when there is none. */
  function firstConnector (input: PaymentInput, routed: RoutedConnector[]): ConnectorRef {
    if (input.returnUrl !== undefined && deps.returnAddress === undefined) throw new PublicBaseUrlRequiredError()
    if (routed.length === 0) throw new NoConnectorError()
    const candidates = eligible(input.returnUrl !== undefined, routed)
    const [first] = candidates
    if (first === undefined) throw new CustomerPresentUnsupportedError([...new Set(routed.map((candidate) => candidate.type))], registry.typesWith('customerPresent'))
    const checkoutData = checkoutDataOf(input)
    const methods = {
      paymentMethod: typeof input.paymentMethod === 'string' ? input.paymentMethod : null,
      paymentMethods: normalizedMethodKeys(input.paymentMethods ?? {}),
      ...(checkoutData !== undefined ? { checkoutData } : {})
    }
    if (candidates.every((candidate) => paymentMethodFor(methods, candidate, registry.capabilitiesOf(candidate.type)) === null)) {
      if (checkoutData?.paymentMethod !== undefined) {
        throw new ValidationError({
          paymentMethod: [`A payment method object is charged by ${registry.typesWith('paymentMethodObject').join(' or ')} only, and none of your enabled connectors is: ` +
            `send a token of ${[...new Set(candidates.map((candidate) => candidate.type))].join(' or ')} instead.`]
        })
      }
      throw new ValidationError({
        paymentMethod: [`None of your connectors can charge this payment without a payment method: send paymentMethod (or paymentMethods) with a token of ${
          [...new Set(candidates.map((candidate) => candidate.type))].join(' or ')}.`]
      })
    }
    return { id: first.id, type: first.type }
  }

  /** The connectors that may take the payment: for a customer-present one, only those that can ask for the shopper. */
  function eligible<C extends ConnectorRef> (customerPresent: boolean, candidates: C[]): C[] {
    return customerPresent ? candidates.filter((candidate) => registry.capabilitiesOf(candidate.type).customerPresent) : candidates
  }

  function pendingPayment (input: PaymentInput, connector: ConnectorRef): Payment {
    return newPendingPayment({
      ...(input.returnUrl !== undefined ? { returnUrl: input.returnUrl, actionToken: randomBytes(32).toString('base64url') } : {}),
      paymentMethod: typeof input.paymentMethod === 'string' ? input.paymentMethod : undefined,
      checkoutData: checkoutDataOf(input),
      paymentMethods: input.paymentMethods === undefined ? undefined : normalizedMethodKeys(input.paymentMethods),
      shopperReference: input.shopperReference,
      customer: input.customer,
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
    for (;;) {
      const pinned = pinnedConnector(current)
      if (pinned !== undefined && refused.has(connectorKey(pinned))) {
        // The connector it is pinned to refused this time: only its own word that nothing exists under our key frees the payment.
        const looked = await lookUp(current, pinned, signal)
        if (looked === undefined) {
          await recordPending(current)
          throw unavailable(current.id, 'The payment may have been charged by its connector, which cannot be asked now; the payment is pending on it ' +
            'and is never charged elsewhere before that connector answers. Retry with the same Idempotency-Key.')
        }
        if (looked.status !== 'pending') return await deps.db.payments.complete(looked, completion(looked), deps.events?.payment)
        current = looked
        continue
      }
      const target = pinned !== undefined
        ? { ...pinned, gateway: await directory.gatewayOf(pinned) }
        : eligible(current.returnUrl !== null, options.connectors ?? await directory.candidatesFor(current.merchantId)).find((candidate) => !refused.has(connectorKey(candidate)))
      if (target === undefined) break
      if (pinned === undefined || !sameConnector(target, current.connector)) {
        // Moving on: the move is written before the call, so a crash during it leaves the payment pinned to `target`.
        current = await recordAttempt(current, target, 'pending', null)
      }
      const paymentMethod = paymentMethodFor(current, target, registry.capabilitiesOf(target.type))
      if (paymentMethod === null) {
        // No token this connector can use: not asked, certainly nothing charged there.
        current = await recordAttempt(current, target, 'skipped', 'no_payment_method')
        refused.add(connectorKey(target))
        continue
      }
      let result: ChargeResult
      const startedAt = deps.clock()
      try {
        result = await target.gateway.charge({
          idempotencyKey: downstreamKeyFor(current.id),
          paymentId: current.id,
          ...(paymentMethod !== undefined ? { paymentMethod } : {}),
          ...(current.shopperReference !== null ? { shopperReference: current.shopperReference } : {}),
          amountMinor: current.amountMinor,
          amount: formatMinorUnits(current.amountMinor, exponentOf(current.currency)),
          currency: current.currency,
          captureMethod: current.captureMethod,
          ...(current.actionToken !== null && deps.returnAddress !== undefined ? { returnUrl: deps.returnAddress(current.actionToken) } : {}),
          ...(current.checkoutData !== undefined ? { checkout: current.checkoutData } : {})
        }, signal === undefined ? {} : { signal })
      } catch (err) {
        if (!(err instanceof GatewayError)) throw err
        // Not awaited first: on SQLite the call's row joins the attempt's own write in one group commit.
        const logged = logCall(current, target, err.kind === 'not_processed' ? 'not_processed' : 'unknown', err.code, startedAt)
        if (options.quiet !== true) failures.failed(target, { paymentId: current.id, code: err.code, kind: err.kind === 'not_processed' ? 'not_processed' : 'unknown' })
        if (err.kind === 'not_processed') {
          // Certainly nothing was charged there by this call; the next connector may take it unless an earlier attempt pins the payment here.
          try {
            current = await recordAttempt(current, target, 'not_processed', err.code)
          } finally {
            await logged
          }
          refused.add(connectorKey(target))
          continue
        }
        try {
          await recordAttempt(current, target, 'unknown', err.code)
        } catch (recordError) {
          // Settled meanwhile (a PSP's event, the recovery worker): answer with that outcome.
          if (recordError instanceof SettledElsewhere) throw recordError
          deps.log.error({ err: recordError, paymentId: current.id }, 'the unknown attempt could not be recorded')
        } finally {
          await logged
        }
        await recordPending(current)
        throw unavailable(current.id, err.kind === 'timeout'
          ? 'The payment gateway did not answer in time; the payment is pending. Retry with the same Idempotency-Key to resume it.'
          : 'The payment gateway is unavailable; the payment is pending. Retry with the same Idempotency-Key to resume it.')
      }
      // The call's log row is written with the completion (one write): it cannot fail alone, and the completion and its call stand or fall together.
      const call = callRecord(current, target, result.outcome, result.outcome === 'declined' ? result.declineCode : null, startedAt)
      const final = settledBy(current, target, result)
      return await deps.db.payments.complete(final, completion(final), deps.events?.payment, 'pending', call)
    }
    // Every connector certainly refused: nothing was charged anywhere; the payment waits for a retry.
    await recordPending(current)
    throw unavailable(current.id, 'No connector could process the payment (each refused it without charging); the payment is pending. ' +
      'Retry with the same Idempotency-Key to try again.')
  }

  /**
   * Asks the connector a payment is pinned to what it holds under our key. Nothing (and, for a lookup by search,
   * the pinning attempt older than the search's lag) or a voided charge: the lookup is recorded (`not_found`),
   * which frees the payment. An outcome: the payment as that outcome settles it. A connector that cannot be
   * asked or answered nothing usable: undefined (the payment stays pinned).
   */
  async function lookUp (payment: Payment, connector: ConnectorRef, signal?: AbortSignal): Promise<Payment | undefined> {
    let state: ChargeState
    try {
      const gateway = await directory.gatewayOf(connector)
      state = await gateway.retrieve({ chargeIdempotencyKey: downstreamKeyFor(payment.id), paymentId: payment.id, ...referenceOf(payment) }, signal === undefined ? {} : { signal })
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err
      deps.log.info({ paymentId: payment.id, connectorId: connector.id, connectorType: connector.type, gatewayFailure: err.code },
        'the connector the payment is pinned to could not be asked what it holds; the payment stays on it')
      return undefined
    }
    const at = new Date(deps.clock()).toISOString()
    switch (state.state) {
      case 'none': {
        const since = pinnedSince(payment, connector)
        if (state.lagMs !== undefined && since !== undefined && deps.clock() - Date.parse(since) < state.lagMs) return undefined
        return await recordAttempt(payment, connector, 'not_found', 'lookup_none')
      }
      case 'voided': return await recordAttempt(payment, connector, 'not_found', 'lookup_voided')
      case 'captured': return settledBy(payment, connector, withDetailsOf(state, succeededAs(payment, state)), at)
      case 'authorized': return settledBy(payment, connector, withDetailsOf(state, { outcome: 'authorized', chargeId: state.chargeId }), at)
      case 'declined': return settledBy(payment, connector, { outcome: 'declined', chargeId: state.chargeId, declineCode: state.declineCode }, at)
      // Waiting for a shopper whose redirect we never received (the answer to the charge was lost): still unknown here.
      case 'requires_action': return undefined
    }
  }

  /**
   * Asks the connector of a payment waiting for its shopper what became of it and records a final answer
   * (guarded: only from requires_action, so of a return, a webhook and the recovery worker the first wins).
   * Undefined while the connector still waits (or cannot be asked): the payment stays requires_action.
   */
  async function askAboutAction (payment: Payment, returnParams?: Readonly<Record<string, string>>): Promise<Payment | undefined> {
    let state: ChargeState
    try {
      const gateway = await directory.gatewayOf(payment.connector)
      state = await gateway.retrieve({
        chargeIdempotencyKey: downstreamKeyFor(payment.id),
        paymentId: payment.id,
        ...referenceOf(payment),
        ...(returnParams !== undefined ? { returnParams } : {}),
        captureMethod: payment.captureMethod,
        amountMinor: payment.amountMinor
      })
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err
      deps.log.info({ paymentId: payment.id, gatewayFailure: err.code }, 'the connector of a payment waiting for its shopper could not be asked; it stays requires_action')
      return undefined
    }
    let result: ChargeResult
    switch (state.state) {
      case 'captured': result = succeededAs(payment, state); break
      case 'authorized': result = { outcome: 'authorized', chargeId: state.chargeId }; break
      case 'declined': result = { outcome: 'declined', chargeId: state.chargeId, declineCode: state.declineCode }; break
      case 'voided': {
        // Canceled at the connector (not by us: our own cancels record themselves): the shopper can no longer finish.
        const canceled = { ...transition(payment, 'canceled', new Date(deps.clock()).toISOString(), 'abandoned'), nextAction: null }
        return await deps.db.payments.complete(canceled, undefined, deps.events?.payment, 'requires_action')
      }
      default: return undefined
    }
    const final = settledBy(payment, payment.connector, withDetailsOf(state, result))
    const stored = await deps.db.payments.complete(final, undefined, deps.events?.payment, 'requires_action')
    if (stored === final) deps.log.info({ paymentId: payment.id, status: final.status }, 'a payment waiting for its shopper settled')
    return stored
  }

  /**
   * A payment whose shopper never came back (ACTION_TTL_SECONDS): canceled at its connector → canceled (`abandoned`).
   * Money taken meanwhile wins: the payment records it (succeeded), never canceled over it.
   */
  async function abandon (payment: Payment): Promise<Payment | undefined> {
    let result
    try {
      result = await (await directory.gatewayOf(payment.connector)).void({ chargeIdempotencyKey: downstreamKeyFor(payment.id), paymentId: payment.id, ...referenceOf(payment) })
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err
      deps.log.warn({ paymentId: payment.id, gatewayFailure: err.code }, 'an abandoned payment could not be canceled at its connector yet; asked again on the next pass')
      return undefined
    }
    const at = new Date(deps.clock()).toISOString()
    let final: Payment
    switch (result.outcome) {
      case 'received': return undefined
      case 'voided': final = { ...transition(payment, 'canceled', at, 'abandoned'), nextAction: null }; break
      case 'charged': final = settledBy(payment, payment.connector, payment.captureMethod === 'manual' && result.amountCapturedMinor === undefined ? { outcome: 'authorized', chargeId: result.chargeId } : foundCharged(payment, result), at); break
      case 'declined': final = settledBy(payment, payment.connector, { outcome: 'declined', chargeId: result.chargeId, declineCode: result.declineCode }, at); break
    }
    const stored = await deps.db.payments.complete(final, undefined, deps.events?.payment, 'requires_action')
    deps.log.info({ paymentId: payment.id, status: stored.status, cancellationReason: stored.cancellationReason ?? undefined }, 'a payment whose shopper never came back ended')
    return stored
  }

  /** A payment status under which money a connector reports for the payment is not the payment's own: it is given back. */
  const HOLDS_NO_MONEY: ReadonlySet<PaymentStatus> = new Set(['canceled', 'declined', 'failed'])

  /**
   * Money a connector reported for an attempt the payment left, or for a payment held as canceled, declined or
   * failed: recorded on the payment's attempts (`held`), given back at that connector under a key derived from
   * the payment (void an authorization, refund a charge), and recorded again (`released`). A release the
   * connector cannot be asked for stays `held`, with an error logged for a person to follow. A release the
   * connector refuses (a dispute holds the money, say) is recorded `release_refused` and asked again at least
   * RELEASE_RETRY_AFTER_MS later under a new key (the PSP replays a refused key's answer for good; the count of
   * refusals keeps the key derived from our record), at most MAX_RELEASE_REFUSALS times.
   */
  async function release (payment: Payment, connector: ConnectorRef, result: Exclude<ChargeResult, { outcome: 'declined' }>, learned = false): Promise<Payment> {
    const context = { paymentId: payment.id, connectorId: connector.id, connectorType: connector.type, connectorReference: result.chargeId, status: payment.status }
    const about = payment.attempts.filter((attempt) => attempt.connectorReference === result.chargeId && sameConnector({ id: attempt.connectorId, type: attempt.connectorType }, connector))
    // Released unless a refusal came after (a received cancel refused later, then its refund refused: held again).
    if (about.filter((attempt) => attempt.outcome === 'released' || attempt.outcome === 'release_refused').at(-1)?.outcome === 'released') return payment
    const refusals = about.filter((attempt) => attempt.outcome === 'release_refused')
    const lastRefusal = refusals.at(-1)
    const refundedThere = await refundedAtConnector(payment, connector, result.chargeId)
    // A refund of the charge made at the connector since the last refusal (or what a capture there took: `learned`) changes what is asked for: asked again at once.
    const news = learned || (lastRefusal !== undefined && refundedThere.lastAt !== null && refundedThere.lastAt > lastRefusal.at)
    if (lastRefusal !== undefined && !news && (refusals.length >= MAX_RELEASE_REFUSALS || deps.clock() - Date.parse(lastRefusal.at) < RELEASE_RETRY_AFTER_MS)) return payment
    const reported = about.find((attempt) => attempt.outcome === 'held')
    deps.log.warn(context, 'a connector reports money taken for an attempt this payment left (or a payment that holds none); giving it back')
    let current = reported === undefined ? await appendAttempt(payment, { connectorId: connector.id, connectorType: connector.type, outcome: 'held', code: result.outcome, connectorReference: result.chargeId }) : payment
    const answer = await giveBack(payment, connector, result, context, { refusals: refusals.length, refundedThereMinor: refundedThere.amountMinor })
    if (answer === undefined) return current
    if ('refused' in answer) {
      return await appendAttempt(current, { connectorId: connector.id, connectorType: connector.type, outcome: 'release_refused', code: answer.refused.slice(0, 64), connectorReference: result.chargeId })
    }
    current = await appendAttempt(current, { connectorId: connector.id, connectorType: connector.type, outcome: 'released', code: answer.released, connectorReference: result.chargeId })
    deps.log.warn({ ...context, released: answer.released }, 'money a connector held for this payment was given back')
    return current
  }

  /** What refunds made at the connector itself (its dashboard) took back of a charge of the payment's, and when the last arrived. */
  async function refundedAtConnector (payment: Payment, connector: ConnectorRef, chargeId: string): Promise<{ amountMinor: number, lastAt: string | null }> {
    return connector.id === null ? { amountMinor: 0, lastAt: null } : await deps.db.connectorEvents.refundedAtConnector(connector.id, chargeId, payment.currency)
  }

  /**
   * Voids an authorization or refunds what is left of a charge at `connector` (refunds made at the connector took the
   * rest; the refund's key counts the refusals before it, and names the amount when it is not the whole charge): how it
   * went, its refusal's code, or undefined when the connector could not be asked (logged).
   */
  async function giveBack (payment: Payment, connector: ConnectorRef, result: Exclude<ChargeResult, { outcome: 'declined' }>, context: object,
    asked: { refusals: number, refundedThereMinor: number }): Promise<{ released: string } | { refused: string } | undefined> {
    const chargeIdempotencyKey = downstreamKeyFor(payment.id)
    const { refusals } = asked
    try {
      const gateway = await directory.gatewayOf(connector)
      // What the charge took: the amount, or the part of an authorization captured at the connector.
      let takenMinor = result.outcome === 'succeeded' && result.amountCapturedMinor !== undefined ? result.amountCapturedMinor : payment.amountMinor
      if (result.outcome === 'authorized') {
        const voided = await gateway.void({ chargeIdempotencyKey, paymentId: payment.id, chargeReference: result.chargeId })
        if (voided.outcome !== 'charged') return { released: voided.outcome === 'received' ? 'release_received' : 'voided' }
        if (voided.amountCapturedMinor !== undefined) takenMinor = voided.amountCapturedMinor
      }
      const leftMinor = takenMinor - asked.refundedThereMinor
      if (leftMinor <= 0) return { released: REFUNDED_AT_CONNECTOR }
      const refunded = await gateway.refund({
        // Another amount under a key the connector has seen would be refused as a different request: the amount is in the key.
        idempotencyKey: `${chargeIdempotencyKey}:release:${connector.id ?? connector.type}${refusals === 0 ? '' : `:${refusals}`}${leftMinor === payment.amountMinor ? '' : `:left-${leftMinor}`}`,
        chargeIdempotencyKey,
        chargeReference: result.chargeId,
        paymentId: payment.id,
        amountMinor: leftMinor,
        amount: formatMinorUnits(leftMinor, exponentOf(payment.currency)),
        currency: payment.currency
      })
      if (refunded.outcome !== 'failed') return { released: refunded.outcome === 'received' ? 'release_received' : 'refunded' }
      deps.log.error({ ...context, failureCode: refunded.failureCode, refusals: refusals + 1 }, 'the connector refused to give back money it holds for this payment; asked again later, needs follow-up')
      return { refused: refunded.failureCode }
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err
      deps.log.error({ ...context, gatewayFailure: err.code }, 'money a connector holds for this payment could not be given back yet; needs follow-up')
    }
    return undefined
  }

  /** A captured charge: all of the payment's amount, or `amountMinor` when a capture at the connector took that. */
  function capturedCharge (chargeId: string, amountMinor: number | undefined): ChargeResult & { outcome: 'succeeded' } {
    return amountMinor === undefined ? { outcome: 'succeeded', chargeId } : { outcome: 'succeeded', chargeId, amountCapturedMinor: amountMinor }
  }

  /** The attempts of `payment` about one charge of `connector`'s (held, released and refused money). */
  function attemptsAbout (payment: Payment, connector: ConnectorRef, chargeId: string): PaymentAttempt[] {
    return payment.attempts.filter((attempt) => attempt.connectorReference === chargeId && sameConnector({ id: attempt.connectorId, type: attempt.connectorType }, connector))
  }

  /** The last release outcome (released or refused) of a charge's attempts, and the attempts before it. */
  function lastRelease (about: readonly PaymentAttempt[]): { last: PaymentAttempt | undefined, before: PaymentAttempt[] } {
    const index = about.findLastIndex((attempt) => attempt.outcome === 'released' || attempt.outcome === 'release_refused')
    return { last: about[index], before: about.slice(0, Math.max(index, 0)) }
  }

  /**
   * True when a charge's last release is accepted and reported later (Adyen) and was a cancel: the charge was held
   * as an authorization, with no capture of it reported and no cancel refused before (after those a release refunds).
   */
  function awaitsCancel (about: readonly PaymentAttempt[]): boolean {
    const { last, before } = lastRelease(about)
    return last?.outcome === 'released' && last.code === 'release_received' && before.some((attempt) => attempt.outcome === 'held' && attempt.code === 'authorized') &&
      !before.some((attempt) => attempt.code === CANCEL_REFUSED || (attempt.outcome === 'held' && attempt.code === HELD_CAPTURED))
  }

  /** Adds an attempt to a payment in any status, reading it again when another writer changed its attempts meanwhile. */
  async function appendAttempt (payment: Payment, fields: Omit<PaymentAttempt, 'at'>): Promise<Payment> {
    const at = new Date(deps.clock()).toISOString()
    const attempt: PaymentAttempt = { ...fields, at }
    let current = payment
    for (let tries = 0; tries < 10; tries++) {
      if (await deps.db.payments.appendAttempt(current, attempt)) return { ...current, attempts: [...current.attempts, attempt], updatedAt: at }
      const stored = await deps.db.payments.get(payment.id)
      if (stored === undefined) return current
      current = stored
    }
    throw new Error(`the attempts of payment ${payment.id} kept changing; the attempt was not recorded`)
  }

  /** The pending payment as `connector`'s answer settles it: its reference, the attempt's outcome, the new status. */
  function settledBy (payment: Payment, connector: ConnectorRef, result: ChargeResult, at = new Date(deps.clock()).toISOString()): Payment {
    const outcome: AttemptOutcome = result.outcome
    const charged: Payment = {
      ...payment,
      connector: { id: connector.id, type: connector.type },
      connectorReference: result.chargeId,
      ...(result.paymentMethodDetails !== undefined ? { paymentMethodDetails: result.paymentMethodDetails } : {}),
      attempts: withAttempt(payment, { connectorId: connector.id, connectorType: connector.type, outcome, code: result.outcome === 'declined' ? result.declineCode : null, at })
    }
    switch (result.outcome) {
      case 'declined': return { ...transition(charged, 'declined', at, result.declineCode), nextAction: null }
      case 'requires_action': return { ...transition(charged, 'requires_action', at), nextAction: result.nextAction }
      case 'authorized': return { ...transition(charged, 'requires_capture', at), nextAction: null }
      case 'succeeded': {
        const succeeded = transition(charged, 'succeeded', at)
        const part = result.amountCapturedMinor
        return { ...succeeded, amountCapturedMinor: part !== undefined && part > 0 && part < succeeded.amountCapturedMinor ? part : succeeded.amountCapturedMinor, nextAction: null }
      }
    }
  }

  /** What a cancel found charged: all of it, or the part an authorization captured at the connector took. */
  function foundCharged (payment: Payment, found: { chargeId: string, amountCapturedMinor?: number }): ChargeResult {
    return succeededAs(payment, { chargeId: found.chargeId, amountCapturedMinor: found.amountCapturedMinor ?? payment.amountMinor })
  }

  /** A charge the connector holds as captured: all of it, or the part taken (a capture made at the connector). */
  function succeededAs (payment: Payment, state: { chargeId: string, amountCapturedMinor: number }): ChargeResult {
    return state.amountCapturedMinor > 0 && state.amountCapturedMinor < payment.amountMinor
      ? { outcome: 'succeeded', chargeId: state.chargeId, amountCapturedMinor: state.amountCapturedMinor }
      : { outcome: 'succeeded', chargeId: state.chargeId }
  }

  function unavailable (paymentId: string, message: string): GatewayUnavailableError {
    return new GatewayUnavailableError(message, paymentId, GATEWAY_RETRY_AFTER_SECONDS)
  }

  /** Keeps the recovery worker off a payment whose client was just answered 503 (CLIENT_RETRY_WINDOW_SECONDS); best effort. */
  async function yieldToClient (paymentId: string): Promise<void> {
    try {
      await deps.db.payments.deferRecovery(paymentId, deps.clock() + CLIENT_RETRY_WINDOW_SECONDS * 1000)
    } catch (err) {
      // The 503 stands; at worst the client's retry meets the worker once (409 with Retry-After covering its hold).
      deps.log.debug?.({ err, paymentId }, 'the recovery worker could not be told to leave the payment to its client')
    }
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

  /**
   * The connectors' call log row of a charge call that just ended (issue 44: success rate and latency per connector), its
   * duration by the service's clock; its fields are bounded here (the code's length, a duration never negative), so its
   * insert cannot fail on its own.
   */
  function callRecord (payment: Payment, connector: ConnectorRef, outcome: CallOutcome, code: string | null, startedAt: number): ConnectorCall {
    const answeredAt = deps.clock()
    return {
      id: newId(),
      paymentId: payment.id,
      merchantId: payment.merchantId,
      connectorId: connector.id,
      connectorType: connector.type,
      outcome,
      code: code === null ? null : code.slice(0, 64),
      startedAt: new Date(startedAt).toISOString(),
      answeredAt: new Date(answeredAt).toISOString(),
      durationMs: Math.max(0, answeredAt - startedAt)
    }
  }

  /**
   * Records a charge call that failed (no answer, or refused unprocessed) in the call log, on its own: the payment's own
   * write after it may be none (a payment left pending). Best effort: a failure is logged, never thrown (the payment's
   * outcome matters more than its statistics).
   */
  async function logCall (payment: Payment, connector: ConnectorRef, outcome: CallOutcome, code: string | null, startedAt: number): Promise<void> {
    try {
      await deps.db.connectors.recordAttempt(callRecord(payment, connector, outcome, code, startedAt))
    } catch (err) {
      deps.log.warn({ err, paymentId: payment.id, connectorId: connector.id, connectorType: connector.type }, 'a charge call could not be recorded in the connector call log')
    }
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
      // A charge found is recorded as any answer is (its reference too: a later dispute or refund at the PSP names it).
      final = result.outcome === 'voided'
        ? transition(payment, 'failed', at, 'pending_expired')
        : result.outcome === 'charged'
          ? settledBy(payment, payment.connector, foundCharged(payment, result), at)
          : settledBy(payment, payment.connector, { outcome: 'declined', chargeId: result.chargeId, declineCode: result.declineCode }, at)
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
      try {
        // Create-under-key: this request's claim wrote the payment with the key; settle it as built.
        if (key?.created !== undefined) return await settle(key.created, key, undefined, prepared?.connectors === undefined ? {} : { connectors: prepared.connectors })
        if (key?.resourceId != null) {
          const existing = await deps.db.payments.get(key.resourceId)
          if (existing !== undefined) return await settle(existing, key)
        }
        if (prepared !== undefined) {
          await deps.db.payments.create(prepared.payment, key?.ref)
          return await settle(prepared.payment, key, undefined, prepared.connectors === undefined ? {} : { connectors: prepared.connectors })
        }
        const connectors = await directory.candidatesFor(input.merchantId)
        const payment = pendingPayment(input, firstConnector(input, connectors))
        await deps.db.payments.create(payment, key?.ref)
        return await settle(payment, key, undefined, { connectors })
      } catch (err) {
        // The client was told to come back after Retry-After with its key: the recovery worker yields to it meanwhile
        // (written before the caller frees the key), so the retry never meets the worker's hold (409).
        if (err instanceof GatewayUnavailableError && key !== undefined && err.paymentId !== undefined) await yieldToClient(err.paymentId)
        throw err
      }
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
      const range = summaryRange({ ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) }, deps.clock())
      return summarize(range, await deps.db.payments.dailySummary({ merchantId, createdGte: range.createdGte, createdLt: range.createdLt }))
    },

    async applyConnectorOutcome (paymentId, connector, result) {
      const payment = await deps.db.payments.get(paymentId)
      if (payment === undefined) return undefined
      if (payment.status === 'requires_action' && sameConnector(payment.connector, connector)) {
        // The shopper's authentication ended (a PSP's event): settled as the return would settle it; whichever comes first wins.
        if (result.outcome === 'requires_action') return payment
        return await deps.db.payments.complete(settledBy(payment, connector, result), undefined, deps.events?.payment, 'requires_action')
      }
      if (payment.status === 'pending' && sameConnector(pinnedConnector(payment) ?? payment.connector, connector)) {
        // complete() moves it only from pending: an answer to a concurrent charge (or the recovery worker) may win; both say the same.
        const final = settledBy(payment, connector, result)
        const key = deps.respond === undefined ? undefined : await unfinishedKeyOf(deps.db, payment.id, `connector-event-${randomUUID()}`, deps.respond)
        return await deps.db.payments.complete(final, key === undefined ? undefined : { ref: key.ref, response: key.respond(final) }, deps.events?.payment)
      }
      // Nothing held: a decline (or a wait for the shopper) reported for any attempt changes nothing.
      if (result.outcome === 'declined' || result.outcome === 'requires_action') return payment
      const sameCharge = sameConnector(payment.connector, connector) && (payment.connectorReference === null || payment.connectorReference === result.chargeId)
      // The payment's own charge, reported again (or late, out of order: the authorization of a payment we voided ourselves).
      if (sameCharge && payment.status !== 'pending' && (!HOLDS_NO_MONEY.has(payment.status) || (payment.status === 'canceled' && result.outcome === 'authorized'))) return payment
      if (!wasAskedOf(payment, connector)) {
        deps.log.error({ paymentId: payment.id, connectorId: connector.id, connectorType: connector.type, connectorReference: result.chargeId },
          'a connector reports money for this payment although it was never asked to charge it; giving it back')
      }
      return await release(payment, connector, result)
    },

    async completeAction (actionToken, returnParams) {
      const payment = ACTION_TOKEN.test(actionToken) ? await deps.db.payments.findByActionToken(actionToken) : undefined
      if (payment === undefined) throw new NotFoundError('No payment has this return address.')
      if (payment.status !== 'requires_action') return payment
      return await askAboutAction(payment, returnParams) ?? payment
    },

    async returnUrlOfAction (actionToken) {
      const payment = ACTION_TOKEN.test(actionToken) ? await deps.db.payments.findByActionToken(actionToken) : undefined
      return payment?.returnUrl ?? undefined
    },

    async recoverActions (options = {}) {
      const now = deps.clock()
      const ttlMs = (options.ttlSeconds ?? DEFAULT_ACTION_TTL_SECONDS) * 1000
      const waitingPayments = await deps.db.payments.awaitingAction({
        updatedBefore: new Date(now - (options.askAfterSeconds ?? 60) * 1000).toISOString(), limit: options.limit ?? 50
      })
      let settled = 0
      let abandoned = 0
      let waiting = 0
      for (const payment of waitingPayments) {
        const asked = await askAboutAction(payment)
        if (asked !== undefined) {
          settled++
        } else if (now - Date.parse(payment.createdAt) >= ttlMs) {
          const ended = await abandon(payment)
          if (ended?.status === 'canceled') abandoned++
          else if (ended !== undefined) settled++
          else waiting++
        } else {
          waiting++
        }
      }
      return { settled, abandoned, waiting }
    },

    flushFailureLog () {
      failures.flush()
    },

    async releaseRefusedCancel (paymentId, connector, chargeId) {
      const payment = await deps.db.payments.get(paymentId)
      if (payment === undefined) return undefined
      const about = attemptsAbout(payment, connector, chargeId)
      if (!awaitsCancel(about)) return undefined
      const context = { paymentId, connectorId: connector.id, connectorType: connector.type, connectorReference: chargeId, status: payment.status }
      const refusals = about.filter((attempt) => attempt.outcome === 'release_refused').length
      const refundedThere = await refundedAtConnector(payment, connector, chargeId)
      // What a capture at the connector took when it reported one; else the whole amount (a refusal of more than it took is asked again once it reports).
      const charged = capturedCharge(chargeId, heldCaptureOf(about, { connectorId: connector.id, connectorType: connector.type, connectorReference: chargeId }))
      const answer = await giveBack(payment, connector, charged, context, { refusals, refundedThereMinor: refundedThere.amountMinor })
      // Not asked (the connector unreachable): the notification is applied when the connector sends it again.
      if (answer === undefined) throw new ConnectorEventNotMatchedError()
      let current = await appendAttempt(payment, { connectorId: connector.id, connectorType: connector.type, outcome: 'release_refused', code: CANCEL_REFUSED, connectorReference: chargeId })
      const outcome = 'refused' in answer ? 'release_refused' : 'released'
      current = await appendAttempt(current, { connectorId: connector.id, connectorType: connector.type, outcome, code: 'refused' in answer ? answer.refused.slice(0, 64) : answer.released, connectorReference: chargeId })
      deps.log.warn({ ...context, outcome }, 'the cancel that gave back an authorization was refused (captured meanwhile): refunded instead')
      return current
    },

    async applyHeldCapture (paymentId, connector, chargeId, amountMinor) {
      const payment = await deps.db.payments.get(paymentId)
      if (payment === undefined) return undefined
      const about = attemptsAbout(payment, connector, chargeId)
      const holds = about.some((attempt) => attempt.outcome === 'held') && (HOLDS_NO_MONEY.has(payment.status) || payment.connectorReference !== chargeId)
      if (!holds) return undefined
      const ref = { connectorId: connector.id, connectorType: connector.type, connectorReference: chargeId }
      // The same report again (Adyen repeats a notification until it is answered): recorded and acted on once.
      if (heldCaptureOf(about, ref) === amountMinor) return payment
      const current = await appendAttempt(payment, { ...ref, outcome: 'held', code: HELD_CAPTURED, amountMinor })
      deps.log.warn({ paymentId, connectorId: connector.id, connectorReference: chargeId, amountMinor }, 'a connector reports a capture at its dashboard of money this payment holds; refunding what it took')
      // The cancel that gives it back is still awaited: the connector refuses it (captured), and that refusal refunds this amount.
      if (awaitsCancel(about)) return current
      return await release(current, connector, { outcome: 'succeeded', chargeId, amountCapturedMinor: amountMinor }, true)
    },

    async applyReleaseRefundFailed (paymentId, connector, chargeId, reference, failureCode) {
      const payment = await deps.db.payments.get(paymentId)
      if (payment === undefined || !reference.startsWith(`${downstreamKeyFor(payment.id)}:release:`)) return undefined
      const about = attemptsAbout(payment, connector, chargeId)
      const { last } = lastRelease(about)
      // Only a refund accepted and not settled yet is undone: a refusal already recorded, or a cancel's release, stays.
      if (last?.outcome !== 'released' || last.code !== 'release_received' || awaitsCancel(about)) return undefined
      deps.log.error({ paymentId, connectorId: connector.id, connectorReference: chargeId, failureCode }, 'the connector refused the refund that gave back money it holds for this payment; asked again later, needs follow-up')
      return await appendAttempt(payment, { connectorId: connector.id, connectorType: connector.type, outcome: 'release_refused', code: failureCode.slice(0, 64), connectorReference: chargeId })
    },

    async releaseHeldMoney (options = {}) {
      let released = 0
      let stillHeld = 0
      for (const payment of await deps.db.payments.withMoneyHeld(options.limit ?? 50)) {
        let current = payment
        for (const held of moneyHeldBy(payment.attempts)) {
          const connector = { id: held.connectorId, type: held.connectorType }
          const chargeId = held.connectorReference ?? ''
          // An authorization whose cancel was refused (captured meanwhile) is a charge now: it is refunded, not canceled again.
          const cancelRefused = current.attempts.some((attempt) => attempt.code === CANCEL_REFUSED && attempt.connectorReference === held.connectorReference &&
            sameConnector({ id: attempt.connectorId, type: attempt.connectorType }, connector))
          const capturedThere = heldCaptureOf(current.attempts, held)
          const after = await release(current, connector, held.code === 'authorized' && !cancelRefused && capturedThere === undefined
            ? { outcome: 'authorized', chargeId }
            : capturedCharge(chargeId, capturedThere))
          if (moneyHeldBy(after.attempts).length < moneyHeldBy(current.attempts).length) released++
          else stillHeld++
          current = after
        }
      }
      return { released, stillHeld }
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
/** A charge's outcome with what the connector's lookup said of the payment method, when it said anything. */
function withDetailsOf (state: ChargeState, result: ChargeResult): ChargeResult {
  return state.paymentMethodDetails === undefined ? result : { ...result, paymentMethodDetails: state.paymentMethodDetails }
}

export function referenceOf (payment: Payment): { chargeReference?: string } {
  return payment.connectorReference === null ? {} : { chargeReference: payment.connectorReference }
}

/** The longest the recovery worker waits before asking about a pending payment again. */
export const RECOVERY_BACKOFF_CAP_MS = 3_600_000

/** A release of held money the connector refused is asked again after this long (a dispute may end, a refund settle). */
export const RELEASE_RETRY_AFTER_MS = 15 * 60_000

/** After this many refusals a release is left to a person (the error log says so): money a lost dispute took stays refused. */
export const MAX_RELEASE_REFUSALS = 20

/** The code of the refusal recorded when a connector refused the cancel that gave back a held authorization. */
const CANCEL_REFUSED = 'cancel_refused'

/** The code of a release with nothing left to ask for: refunds made at the connector itself (its dashboard) gave all of it back. */
const REFUNDED_AT_CONNECTOR = 'refunded_at_connector'

/** Back-off of the recovery worker: about the payment's age (so attempts grow geometrically), from one lease to an hour. */
export function recoveryBackoffMs (ageMs: number, leaseMs: number): number {
  return Math.min(Math.max(ageMs, leaseMs), RECOVERY_BACKOFF_CAP_MS)
}
