/**
 * Storage contracts. Routes and domain code only see these async interfaces;
 * SQLite (embedded default) and PostgreSQL (scale-out) both implement them and
 * share one contract test suite (test/store/contract.ts).
 */
export interface Product {
  id: string
  name: string
  price: number
}

export interface ProductStore {
  get: (id: string) => Promise<Product | undefined>
  /** Replaces the whole product, or creates it. */
  put: (product: Product) => Promise<Product>
}

export type { Payment } from '../domain/payments'
import type { Payment, PaymentAttempt, PaymentStatus } from '../domain/payments'
import type { Refund } from '../domain/refunds'
import type { CreatedRange, Page, PageRequest } from '../domain/pagination'
export type { Refund } from '../domain/refunds'
import type { DashboardSession } from '../domain/dashboard-sessions'
import type { AuditEntry } from '../domain/audit'
import type { User } from '../domain/users'
import type { SummaryFigures } from '../domain/payment-summary'

/** Identifies one idempotency key: (client scope, method, path, key). */
export interface IdempotencyKeyRef {
  scope: string
  method: string
  path: string
  key: string
}

/** A response exactly as it will be replayed. */
export interface StoredResponse {
  statusCode: number
  headers: Record<string, string>
  body: string
}

/** How far the request that owns a key got (a Stripe-style recovery point). */
export type RecoveryPoint = 'started' | 'resource_created' | 'finished'

export interface IdempotencyRecord extends IdempotencyKeyRef {
  fingerprint: string
  recoveryPoint: RecoveryPoint
  resourceId: string | null
  response: StoredResponse | null
  /** Epoch ms until which the owning request holds the key; null when unlocked. */
  lockedUntil: number | null
  /** The instance whose request holds the lock (see InstanceStore); null when unknown or unlocked. */
  lockedBy: string | null
  createdAt: number
  expiresAt: number
}

export type ClaimResult =
  /** The caller owns a fresh key. */
  | { kind: 'new', record: IdempotencyRecord }
  /**
   * Create-under-key: the caller owns the key (fresh, or resumed without a resource) and this claim
   * wrote the resource it was given with it, in one transaction; `record.resourceId` is that resource.
   */
  | { kind: 'created', record: IdempotencyRecord, takenOverFrom?: string }
  /**
   * The caller owns a key whose earlier request stopped before finishing (see recoveryPoint);
   * `takenOverFrom`: that request's instance had stopped beating while it still held the lock.
   */
  | { kind: 'resumed', record: IdempotencyRecord, takenOverFrom?: string }
  | { kind: 'replay', record: IdempotencyRecord & { response: StoredResponse } }
  | { kind: 'mismatch', record: IdempotencyRecord }
  | { kind: 'in_flight', record: IdempotencyRecord }

export interface ClaimRequest {
  ref: IdempotencyKeyRef
  fingerprint: string
  now: number
  lockUntil: number
  expiresAt: number
  /** The claiming instance (InstanceStore id), recorded as the lock's holder. */
  owner?: string
  /**
   * A lock whose holder last beat before this time (or has no heartbeat row) is taken over
   * instead of answering in_flight. Undefined: never take over (this instance cannot judge now).
   */
  takeoverBefore?: number | undefined
}

/** One row to insert: a table, its columns and their values in that order (built by the stores' row mappers). */
export interface RowInsert {
  table: string
  columns: readonly string[]
  values: readonly unknown[]
}

/**
 * The first write of a resource created under an Idempotency-Key, handed to the key's claim so that
 * both commit in ONE transaction: the rows are inserted, and the key records `resourceId` at
 * 'resource_created', only when the claim leaves the caller owning a key without a resource (new,
 * taken afresh after expiry, or resumed at 'started'). More rows written with the resource (an outbox
 * event, say) join the same transaction by being appended to `rows`.
 */
export interface ResourceCreation {
  resourceId: string
  rows: RowInsert[]
}

export interface IdempotencyStore {
  /**
   * Atomically claims, resumes or reports on a key (a unique constraint, not check-then-insert).
   * With `creation` (create-under-key), a claim that owns a key without a resource also writes the
   * resource, in the same transaction, and answers `created` (its record says 'resource_created').
   */
  claim: (request: ClaimRequest, creation?: ResourceCreation) => Promise<ClaimResult>
  /**
   * Unlocks a key, keeping its recovery point, so a retry can resume. With
   * `lockedUntil`, only if the key is still locked until exactly then (a late
   * release that must not free a lock someone else has taken since). True when a lock was freed.
   */
  release: (ref: IdempotencyKeyRef, lockedUntil?: number) => Promise<boolean>
  /**
   * Forgets a key whose request ended before any side effect (a client error). With `lockedUntil`,
   * only if the key is still locked until exactly then (another instance may have taken it over).
   */
  abandon: (ref: IdempotencyKeyRef, lockedUntil?: number) => Promise<void>
  /** Stores the final response and unlocks (for areas without a resource-specific completion). */
  finish: (ref: IdempotencyKeyRef, response: StoredResponse) => Promise<void>
  get: (ref: IdempotencyKeyRef) => Promise<IdempotencyRecord | undefined>
  findByResource: (resourceId: string) => Promise<IdempotencyRecord | undefined>
  /** Deletes keys past retention, except those whose payment is still pending. Returns how many. */
  reap: (now: number) => Promise<number>
}

/** Completes an idempotency key in the same transaction as a resource write. */
export interface KeyCompletion {
  ref: IdempotencyKeyRef
  response: StoredResponse
}

export interface PaymentStore {
  /** Inserts a pending payment; with `key`, records the key's recovery point in the same transaction. */
  create: (payment: Payment, key?: IdempotencyKeyRef) => Promise<void>
  get: (id: string) => Promise<Payment | undefined>
  /**
   * Moves a pending payment to its final state (guarded: only from `from`, default pending; a payment waiting
   * for its shopper moves from requires_action) and, with `completion`, stores the key's response in the same
   * transaction; with `event`, writes the payment's event (only when this call moved it); with `call`, the connector
   * call log's row of the charge call that settled it (written whether or not this call moved the payment: the call
   * happened). Returns the payment as stored afterwards (a concurrent completion may have won).
   */
  complete: (final: Payment, completion?: KeyCompletion, event?: EventOf<Payment>, from?: 'pending' | 'requires_action', call?: ConnectorCall) => Promise<Payment>
  /** The customer-present payment whose return address carries `token`. */
  findByActionToken: (token: string) => Promise<Payment | undefined>
  /** Payments waiting for their shopper (`requires_action`) whose last change is older than `updatedBefore`, oldest first: the recovery worker asks the PSP about them. */
  awaitingAction: (options: { updatedBefore: string, limit: number }) => Promise<Payment[]>
  /**
   * Leases up to `limit` pending payments created before `createdBefore` whose key
   * (if any) is not locked by a live request, for the recovery worker. The
   * payments' keys are locked for the same lease, so clients get 409 meanwhile.
   */
  leaseAbandoned: (options: { createdBefore: string, now: number, leaseUntil: number, limit: number }) => Promise<Payment[]>
  /**
   * The recovery worker's back-off: a still-pending payment is not leased again
   * before `notBefore` (epoch ms). Its key is left as the lease set it.
   */
  deferRecovery: (id: string, notBefore: number) => Promise<void>
  /**
   * Records a pending payment's connector and attempts (before it is charged on another connector,
   * and when a charge's outcome is unknown). False when it is no longer pending.
   */
  recordAttempts: (payment: Payment) => Promise<boolean>
  /**
   * Adds `attempt` to a payment in any status (money a connector reported for an attempt the payment had left,
   * and its release), if its attempts are still those of `payment` (compare-and-set). False when they changed
   * meanwhile: read it again and retry.
   */
  appendAttempt: (payment: Payment, attempt: PaymentAttempt) => Promise<boolean>
  /** Payments with money to give back at a connector (a `held` attempt without its `released` one), oldest change first. */
  withMoneyHeld: (limit: number) => Promise<Payment[]>
  /** The payment a connector account's charge reference (Stripe: `pi_…`) belongs to. */
  findByConnectorReference: (connectorId: string, reference: string) => Promise<Payment | undefined>
  /** The payment holding a connector account's charge it does not own (a `held` attempt about `reference`): money it gives back. */
  findHoldingCharge: (connectorId: string, reference: string) => Promise<Payment | undefined>
  /**
   * A page of payments, newest first (created time, then id). `merchantId`
   * limits it to one merchant's payments. A cursor id that is not in the list
   * (unknown, or another merchant's) throws UnknownCursorError.
   */
  list: (query: PaymentListQuery) => Promise<Page<Payment>>
  /**
   * One merchant's figures per UTC day and currency for payments created in [createdGte, createdLt):
   * succeeded (captured amount; partially/fully refunded included) and declined; and its refunds that
   * succeeded in that range, by the day they succeeded.
   */
  dailySummary: (range: { merchantId: string, createdGte: string, createdLt: string }) => Promise<SummaryFigures>
  count: () => Promise<number>
  /** Payments still pending (a partial index makes this cheap; read on every metrics scrape). */
  countPending: () => Promise<number>
}

export interface PaymentListQuery extends PageRequest, CreatedRange {
  /** Undefined: every payment (no tenancy); a string: that merchant's payments only. */
  merchantId?: string
  status?: PaymentStatus
  /** Only payments whose metadata has this entry (exact match on key and value). */
  metadata?: { key: string, value: string }
  /** Only payments whose customer has this email (compared trimmed and in lower case). */
  customerEmail?: string
  /** Only payments of exactly this amount, in major units of each payment's own currency (35 is USD 35.00, JPY 35, BHD 35.000). */
  amount?: number
  /** Only payments charged to a card ending in these 4 digits. */
  last4?: string
}

export interface MerchantRefundQuery extends PageRequest, CreatedRange {
  merchantId: string
  status?: Refund['status']
}

/** A new refund and the payment it holds money on, as one decision made under the payment's lock. */
export interface RefundDecision {
  refund: Refund
  payment: Payment
}

/**
 * Refunds. Every write that touches a payment's refunded amounts runs with
 * that payment locked (SELECT … FOR UPDATE on PostgreSQL; SQLite's single
 * writer) and hands the current row to a domain decision, so concurrent
 * refunds of one payment are serialised and never exceed its amount.
 */
export interface RefundStore {
  /**
   * Locks the payment, lets `decide` (which throws a domain error to refuse)
   * build the pending refund and the payment with the money held, and writes
   * both; with `key`, records the key's recovery point in the same transaction.
   * Resolves undefined when the payment does not exist (or is not `merchantId`'s).
   */
  create: (paymentId: string, decide: (payment: Payment) => RefundDecision, options?: { key?: IdempotencyKeyRef, merchantId?: string, event?: EventOf<RefundDecision> }) => Promise<RefundDecision | undefined>
  /** The payment's refund made at the PSP with this id of the PSP's (issue 40). */
  getByConnectorReference: (paymentId: string, connectorReference: string) => Promise<Refund | undefined>
  /** The refund, when it belongs to `paymentId`. */
  get: (paymentId: string, refundId: string) => Promise<Refund | undefined>
  /**
   * Settles a pending refund: locks its payment, lets `settle` move both, and
   * writes them (with the key's response). A refund no longer pending is left
   * as it is (a concurrent settlement won); returns what is stored afterwards.
   * With `event`, the settlement's event is written in the same transaction.
   */
  complete: (refundId: string, settle: (refund: Refund, payment: Payment) => RefundDecision, completion?: KeyCompletion, event?: EventOf<RefundDecision>) => Promise<RefundDecision>
  /** A page of one payment's refunds, newest first. */
  list: (paymentId: string, page: PageRequest) => Promise<Page<Refund>>
  /** A page of a merchant's refunds (of all its payments), newest first, optionally by status and creation time. */
  listForMerchant: (query: MerchantRefundQuery) => Promise<Page<Refund>>
  /** Leases up to `limit` refunds pending since before `createdBefore` for the recovery worker. */
  leasePending: (options: { createdBefore: string, now: number, leaseUntil: number, limit: number }) => Promise<Refund[]>
}

/**
 * Manual capture's writes (issue 24). Each runs with the payment locked (FOR UPDATE on PostgreSQL,
 * SQLite's single writer), so a capture, a cancel and the expiry of one authorization are decided
 * one after the other: a capture is reserved on the payment (capture_pending_minor) before the
 * gateway is asked, and a void holds the payment (recovery_lease_until) while the gateway voids it.
 */
export interface CaptureStore {
  /**
   * Locks the payment and lets `decide` (which throws a domain error to refuse) reserve the
   * capture; writes it, with `key` at 'resource_created' (its resource: the payment id).
   * `voidInFlight`: a cancel or the expiry holds the payment. Undefined: no such payment (of `merchantId`).
   */
  reserve: (paymentId: string, decide: (payment: Payment, state: { voidInFlight: boolean }) => Payment, options: { now: number, key?: IdempotencyKeyRef, merchantId?: string }) => Promise<Payment | undefined>
  /**
   * Records the reserved capture's outcome (`final`: captured, or released), only while a capture
   * is reserved; with the key's response and `event`, in one transaction. Returns what is stored.
   */
  settle: (final: Payment, completion?: KeyCompletion, event?: EventOf<Payment>) => Promise<Payment>
  /**
   * Holds an authorization without a capture in flight for its void until `leaseUntil`.
   * `held`: false when the payment is not such an authorization, or another void holds it.
   */
  holdForVoid: (paymentId: string, options: { now: number, leaseUntil: number }) => Promise<{ payment: Payment, held: boolean } | undefined>
  /** Holds up to `limit` authorizations past captureBefore (at `now`), without a capture in flight, for their void. */
  holdExpired: (options: { now: number, leaseUntil: number, limit: number }) => Promise<Payment[]>
  /** Writes the voided authorization (`final`, canceled) and its event, only while it requires capture with no capture in flight. */
  finishVoid: (final: Payment, event?: EventOf<Payment>) => Promise<Payment>
  /**
   * Records a change of the capture its connector made by itself (a capture at the PSP's dashboard, a capture that failed
   * after the PSP confirmed it): `final`'s status and captured amount, only while the payment is still as `from` says,
   * with no capture in flight and nothing refunded; with `event`. Returns what is stored afterwards.
   */
  applyConnectorChange: (final: Payment, from: { status: Payment['status'], amountCapturedMinor: number }, event?: EventOf<Payment>) => Promise<Payment>
  /** Ends a hold without a change (the gateway could not be asked). */
  releaseHold: (paymentId: string) => Promise<void>
  /**
   * Leases up to `limit` payments whose capture has been in flight since before `updatedBefore`
   * (a crash or an outage), for the recovery worker; their keys are locked for the same lease.
   */
  leaseInFlight: (options: { updatedBefore: string, now: number, leaseUntil: number, limit: number }) => Promise<Payment[]>
}

export interface LedgerEntry {
  idempotencyKey: string
  chargeId: string
  amountMinor: number
  currency: string
  /** voided: a tombstone written by a void before any charge under the key (or an authorization's release); authorized: held for a manual capture. */
  outcome: 'succeeded' | 'authorized' | 'declined' | 'voided'
  declineCode: string | null
}

/** The simulated gateway's own ledger of charges, keyed by downstream idempotency key. */
export interface LedgerStore {
  get: (idempotencyKey: string) => Promise<LedgerEntry | undefined>
  /** Records a charge unless one exists for the key; returns the stored entry either way. */
  recordOnce: (entry: LedgerEntry) => Promise<LedgerEntry>
  count: () => Promise<number>
}

export type { Merchant, MerchantFields } from '../domain/merchants'
import type { Merchant, MerchantFields } from '../domain/merchants'

/** Outcome of a version-checked merchant update. */
export type MerchantUpdateResult =
  | { kind: 'updated', merchant: Merchant }
  /** The merchant exists but its version is no longer `expectedVersion`: nothing was written. */
  | { kind: 'version_mismatch', current: Merchant }
  | { kind: 'not_found' }

export interface MerchantStore {
  /**
   * Inserts a new merchant. Email uniqueness (case-insensitive) is enforced by
   * the database (a unique index on lower(email)); a violation throws the
   * domain EmailTakenError, never a driver error. With `completion`, the
   * Idempotency-Key's response is stored in the same transaction.
   */
  create: (merchant: Merchant, completion?: KeyCompletion) => Promise<Merchant>
  get: (id: string) => Promise<Merchant | undefined>
  /**
   * Compare-and-set: writes `fields`, sets `updatedAt` and increments the
   * version, only if the stored version is still `expectedVersion`
   * (`UPDATE … WHERE id = ? AND version = ?`). Throws EmailTakenError on an
   * email collision.
   */
  update: (id: string, expectedVersion: number, fields: MerchantFields, updatedAt: string, event?: EventOf<Merchant>) => Promise<MerchantUpdateResult>
  /** A page of merchants, newest first (created time, then id). */
  list: (page: PageRequest) => Promise<Page<Merchant>>
}

export type { ApiKey } from '../domain/api-keys'
import type { ApiKey } from '../domain/api-keys'
import type { MerchantStatus } from '../domain/merchants'
import type { ApiVersion } from '../domain/api-versions'

/** A key found by its hash, with its merchant's status (null for the admin key). */
export interface ApiKeyMatch {
  key: ApiKey
  merchantStatus: MerchantStatus | null
  merchantApiVersion: ApiVersion | null
}

export interface ApiKeyStore {
  /**
   * Inserts a key (hash, never the secret). With `completion`, the Idempotency-Key's response (sealed: it
   * carries the secret) is stored in the same transaction.
   */
  create: (key: ApiKey, completion?: KeyCompletion) => Promise<void>
  /**
   * Inserts the admin key generated on first start unless one exists (a unique index
   * on the admin role decides, so two instances starting at once store one).
   * Returns true when this call stored it.
   */
  createBootstrapAdmin: (key: ApiKey) => Promise<boolean>
  /** Whether an admin key was generated earlier (for the start-up message). */
  hasBootstrapAdmin: () => Promise<boolean>
  /** The key whose secret hashes to `secretHash`, revoked and expired ones included; one indexed lookup. */
  findByHash: (secretHash: string) => Promise<ApiKeyMatch | undefined>
  /** The key with this id, revoked and expired ones included (a dashboard session resolves its key by id). */
  findById: (id: string) => Promise<ApiKeyMatch | undefined>
  /** The merchant's keys that are not revoked (expired ones included), oldest first. */
  listForMerchant: (merchantId: string) => Promise<ApiKey[]>
  /** Revokes one of the merchant's keys; false when it has no such unrevoked key. */
  revoke: (merchantId: string, keyId: string, at: string) => Promise<boolean>
  /** Records when keys were last used (batched; never moves lastUsedAt backwards). */
  recordUse: (uses: Array<{ id: string, at: string }>) => Promise<void>
}

export interface AuditLogQuery extends PageRequest, CreatedRange {
  merchantId: string
  actorId?: string
  action?: string
  resourceType?: string
  resourceId?: string
}

/**
 * The audit log (issue 43). Entries about a change are written by the change's own store call, in its
 * transaction (see audit-scope.ts); `append` is for entries without a change (a request refused by its role).
 */
export interface AuditLogStore {
  append: (entry: AuditEntry) => Promise<void>
  /** A merchant's entries, newest first. */
  list: (query: AuditLogQuery) => Promise<Page<AuditEntry>>
}

/** A merchant's users (issue 43). Every write is the request's change and carries its audit entry when it owes one. */
export interface UserStore {
  /**
   * Inserts a user; UserEmailTakenError when the email is in use (by any merchant). With `completion`, the
   * Idempotency-Key's response (sealed: it carries the invite link) is stored in the same transaction.
   */
  create: (user: User, options?: { audit?: AuditEntry, completion?: KeyCompletion }) => Promise<void>
  get: (id: string) => Promise<User | undefined>
  findByEmail: (email: string) => Promise<User | undefined>
  findByInvite: (inviteHash: string) => Promise<User | undefined>
  listForMerchant: (merchantId: string) => Promise<User[]>
  /**
   * Writes every mutable column of `user` if its row is still at `expectedUpdatedAt` (false otherwise). With
   * `endSessions`, deletes the user's dashboard sessions (but `keepSession`) in the same transaction.
   */
  update: (user: User, expectedUpdatedAt: string, options?: { endSessions?: boolean, keepSession?: string, audit?: AuditEntry }) => Promise<boolean>
  /** Deletes the user and its sessions; false when there was none. */
  delete: (merchantId: string, id: string, audit?: AuditEntry) => Promise<boolean>
  /** Records a sign-in (never moves lastSignInAt backwards). */
  recordSignIn: (id: string, at: string) => Promise<void>
}

/**
 * Sign-in attempts by subject (`email:<address>`, `ip:<address>`), for the lockout. Times in epoch ms. An attempt is
 * taken before its password is checked (so parallel guesses count), then kept as a failure or given back.
 */
export interface SignInFailureStore {
  get: (subject: string) => Promise<{ failures: number, lockedUntil: number | null } | undefined>
  /**
   * Takes an attempt unless the subject is locked or `max` attempts (failed or in flight) are counted since
   * `staleBefore` (older ones are forgotten): true when taken. One statement: two instances cannot both take the last.
   */
  reserve: (subject: string, now: number, max: number, staleBefore: number) => Promise<boolean>
  /** The taken attempt failed: it stays counted; at `max` the subject is locked until `lockUntil` and its count starts again. */
  fail: (subject: string, now: number, max: number, lockUntil: number) => Promise<void>
  /** The taken attempt is not a failure: given back. */
  release: (subject: string) => Promise<void>
  clear: (subject: string) => Promise<void>
}

/** Dashboard sessions (issue 30), by the hash of their cookie token. */
export interface DashboardSessionStore {
  /** With `audit`, the sign-in's audit entry is written in the same transaction. */
  create: (session: DashboardSession, audit?: AuditEntry) => Promise<void>
  get: (id: string) => Promise<DashboardSession | undefined>
  /** Records a use; never moves lastUsedAt backwards. */
  touch: (id: string, at: string) => Promise<void>
  /** Ends every session of `credentialId` but `except` (a user's password or role changed); how many. */
  deleteFor: (credentialId: string, except?: string) => Promise<number>
  /** Ends a session (with `audit`, a sign-out's entry in the same transaction); false when there was none. */
  delete: (id: string, audit?: AuditEntry) => Promise<boolean>
  /** Deletes sessions past their absolute end (`now`) or unused since `idleBefore`; how many. */
  deleteEnded: (now: string, idleBefore: string) => Promise<number>
}

/**
 * Running instances and their heartbeats (epoch ms): an instance that stopped beating (crashed,
 * killed, cut off) no longer holds its idempotency locks.
 */
export interface InstanceStore {
  /** Records that instance `id` (started at `startedAt`) is alive at `now`. */
  beat: (id: string, startedAt: number, now: number) => Promise<void>
  /** Forgets an instance (a clean shutdown), and rows of instances silent since before `staleBefore`. */
  remove: (id: string, staleBefore: number) => Promise<void>
}

export interface Database {
  readonly kind: 'sqlite' | 'postgres'
  readonly products: ProductStore
  readonly merchants: MerchantStore
  readonly payments: PaymentStore
  readonly refunds: RefundStore
  readonly captures: CaptureStore
  readonly idempotency: IdempotencyStore
  readonly ledger: LedgerStore
  readonly apiKeys: ApiKeyStore
  readonly events: EventStore
  readonly webhooks: WebhookStore
  readonly instances: InstanceStore
  readonly connectors: ConnectorAccountStore
  readonly connectorEvents: ConnectorEventStore
  readonly dashboardSessions: DashboardSessionStore
  readonly disputes: DisputeStore
  readonly users: UserStore
  readonly signInFailures: SignInFailureStore
  readonly auditLog: AuditLogStore
  /** What the database's answers said lately (see guard.ts); test doubles may leave it out. */
  readonly health?: DatabaseHealth
  /** Resolves when the database answers a trivial query. */
  ping: () => Promise<void>
  close: () => Promise<void>
  /** What the metrics plugin observes; test doubles may leave it out. */
  readonly instrumentation?: DatabaseInstrumentation
}

export type UnavailableReason = 'unreachable' | 'timeout' | 'busy' | 'full' | 'io'

/** The database's state as its recent answers tell it (every store call is observed). */
export interface DatabaseHealth {
  /**
   * 'ok', or why the database cannot serve. Turns on the first failure; back to 'ok' only after
   * answers without failure for the settle time (hysteresis: readiness changes state once).
   */
  readonly state: 'ok' | UnavailableReason
  /**
   * Unreachable or timing out, with no answer since: new calls fail at once (503) instead of
   * waiting for a connection time-out. Cleared by the first answer (the heartbeat probes).
   */
  readonly away: boolean
  /** Calls that failed because the database could not serve, since start, by reason (metrics). */
  readonly failures: Readonly<Record<UnavailableReason, number>>
  /** Told once per change of `state`, with the failure that turned it and how many calls failed meanwhile. */
  onChange: (listener: (change: HealthChange) => void) => void
}

export interface HealthChange {
  state: 'ok' | UnavailableReason
  previous: 'ok' | UnavailableReason
  /** The failure that turned the state (absent when it turned 'ok'). */
  error?: unknown
  /** Calls that failed since the state left 'ok' (when it turned 'ok' again). */
  failures: number
  /** Milliseconds since the state left 'ok' (when it turned 'ok' again). */
  downMs: number
}

export interface DatabaseInstrumentation {
  /** PostgreSQL: the pool's connections right now. */
  pool?: () => { max: number, total: number, idle: number, waiting: number }
  /** SQLite: `listener` is told how many writes each group commit carried. */
  onWriteBatch?: (listener: (writes: number) => void) => void
}

import type { DomainEvent, EventOf, EventType, NewEvent } from '../domain/events'
import type { DeliveryAttempt, WebhookDelivery, WebhookEndpoint } from '../domain/webhooks'

export interface EventListQuery extends PageRequest, CreatedRange {
  merchantId: string
  type?: EventType
  /** Only events about this payment and its refunds. */
  paymentId?: string
}

/**
 * The outbox's read side. Events are written by the stores of the changes they
 * describe (payments, refunds, merchants, webhooks), in the same transaction.
 */
export interface EventStore {
  /** A merchant's events, newest first (created time, then id). */
  list: (query: EventListQuery) => Promise<Page<DomainEvent>>
  get: (merchantId: string, id: string) => Promise<DomainEvent | undefined>
  /**
   * `payment.pending`: written once per payment, only while it is still pending (under the
   * payment's lock on PostgreSQL, so its number never collides with its settlement's).
   */
  appendPaymentPending: (event: NewEvent) => Promise<DomainEvent | undefined>
  /** Deletes up to `limit` events created before `before`, with their deliveries. Returns how many events. */
  reap: (before: string, limit: number) => Promise<number>
}

/** A due delivery leased to one worker, with what it needs to send it. */
export interface ClaimedDelivery {
  delivery: WebhookDelivery
  event: DomainEvent
  endpoint: WebhookEndpoint
  /** Attempt number within the current retry schedule (1 = first try). */
  roundAttempt: number
  /** The lease; recordAttempt writes only while the delivery still carries it. */
  leaseUntil: number
}

export interface AttemptRecord {
  deliveryId: string
  endpointId: string
  leaseUntil: number
  attempt: DeliveryAttempt
  now: string
  outcome:
  | { kind: 'succeeded' }
  | { kind: 'retry', at: number }
  /** `disable`: gone (410) disables the endpoint; failing disables it unless it succeeded since the delivery began. */
  | { kind: 'failed', disable?: 'gone' | 'failing', failingSince?: string }
  /** The `webhook_endpoint.disabled` event, written when this attempt disables the endpoint. */
  disabledEvent?: EventOf<WebhookEndpoint>
}

export interface ReplayRange {
  from: string
  to: string
  /** Resume after this event (created time and id) of an earlier batch. */
  after?: { createdAt: string, id: string }
}

export interface ReplayBatch {
  /** Deliveries scheduled. */
  replayed: number
  /** The last event looked at, when the range holds more after it. */
  next?: string
}

export type DeliveryRetry =
  | { kind: 'retried', delivery: WebhookDelivery }
  | { kind: 'in_flight', leaseUntil: number }
  | { kind: 'not_found' }

export interface WebhookStore {
  /**
   * Inserts an endpoint unless the merchant has `max` already (false then). With `completion`, the
   * Idempotency-Key's response is stored in the same transaction (only when the endpoint is inserted).
   */
  createEndpoint: (endpoint: WebhookEndpoint, max: number, completion?: KeyCompletion) => Promise<boolean>
  listEndpoints: (merchantId: string) => Promise<WebhookEndpoint[]>
  getEndpoint: (merchantId: string, id: string) => Promise<WebhookEndpoint | undefined>
  /**
   * Writes the endpoint's client-changeable fields (url, description, events, secrets, disabled state),
   * only if it is still as read (`updated_at = expectedUpdatedAt`; the worker's automatic disable changes it):
   * false when it changed meanwhile (nothing written; re-read and re-apply).
   */
  updateEndpoint: (endpoint: WebhookEndpoint, expectedUpdatedAt: string, completion?: KeyCompletion) => Promise<boolean>
  /** Deletes the endpoint and its deliveries; false when the merchant has no such endpoint. */
  deleteEndpoint: (merchantId: string, id: string) => Promise<boolean>
  /** An endpoint's deliveries, newest first. */
  listDeliveries: (endpointId: string, page: PageRequest) => Promise<Page<WebhookDelivery>>
  /**
   * Makes a delivery due now with a fresh retry schedule, unless an attempt holds its lease (`leaseUntil`
   * after `now`): that attempt is being sent, and clearing its lease would let a second pass send it too.
   */
  retryDelivery: (endpointId: string, deliveryId: string, now: number, at: string) => Promise<DeliveryRetry>
  /**
   * New deliveries to the endpoint of the merchant's events created in [from, to) that it receives, looking at the
   * first `limit` events (by created time, then id) after `after`; `last` is the last event looked at.
   */
  replay: (endpoint: WebhookEndpoint, range: ReplayRange, now: number, limit: number) => Promise<ReplayBatch>
  /**
   * A test delivery begins: writes `event` (numbered after the endpoint's last event, fanned out to no endpoint) and one
   * delivery of it to `delivery.endpointId`, leased until `leaseUntil` and due then (should the instance stop before the
   * attempt is recorded with recordAttempt, the worker sends it). Undefined, nothing written, when the merchant has no such endpoint.
   */
  beginTestDelivery: (event: NewEvent, delivery: { id: string, endpointId: string, leaseUntil: number, at: string }) => Promise<DomainEvent | undefined>
  /** Leases up to `limit` due deliveries until `leaseUntil` (SKIP LOCKED on PostgreSQL; the single writer on SQLite). */
  claimDue: (now: number, leaseUntil: number, limit: number) => Promise<ClaimedDelivery[]>
  /** Records an attempt's outcome, if the delivery is still leased by this attempt (false otherwise). */
  recordAttempt: (record: AttemptRecord) => Promise<boolean>
  /** Epoch ms of the oldest due (pending, past its time) delivery; undefined when none is due. */
  oldestDueAt: (now: number) => Promise<number | undefined>
  /** Up to `limit` endpoints (by id, after `afterId`) whose stored secret or previous secret does not start with `prefix`. */
  secretsNotUnder: (prefix: string, afterId: string, limit: number) => Promise<EndpointSecrets[]>
  /** Writes an endpoint's stored secrets if both are still as in `expected` (compare-and-set); false otherwise. */
  replaceSecrets: (expected: EndpointSecrets, next: Omit<EndpointSecrets, 'id'>) => Promise<boolean>
}

/** An endpoint's secrets as stored (sealed, or in clear in rows written before encryption at rest). */
export interface EndpointSecrets {
  id: string
  secret: string
  previousSecret: string | null
}

import type { StoredConnectorAccount } from '../domain/connectors'

/** A connector account's credentials as stored (sealed). */
export interface StoredCredentials {
  id: string
  credentials: string
}

/**
 * Merchants' connector accounts. Deleted accounts stay (deletedAt set): `get` still finds them, so
 * the payments made through them keep working; lists and routing leave them out.
 */
export interface ConnectorAccountStore {
  /** Inserts the account unless the merchant has `max` (not deleted) already: false then. */
  insert: (account: StoredConnectorAccount, max: number) => Promise<boolean>
  /** An account by id, deleted or not. */
  get: (id: string) => Promise<StoredConnectorAccount | undefined>
  /** The merchant's accounts that are not deleted, in routing order: priority, then created time, then id. */
  listForMerchant: (merchantId: string) => Promise<StoredConnectorAccount[]>
  /** The merchant's enabled accounts (not deleted), in routing order. */
  enabledFor: (merchantId: string) => Promise<StoredConnectorAccount[]>
  /**
   * Writes priority, status, description, credentials, hint and updatedAt, only if the account is not
   * deleted and still as read (`updated_at = expectedUpdatedAt`): false otherwise (nothing written).
   */
  update: (account: StoredConnectorAccount, expectedUpdatedAt: string) => Promise<boolean>
  /** Marks the merchant's account deleted at `at`; false when it has no such account (or it is deleted already). */
  softDelete: (merchantId: string, id: string, at: string) => Promise<boolean>
  /** Up to `limit` accounts (deleted ones too, by id after `afterId`) whose stored credentials do not start with `prefix`. */
  credentialsNotUnder: (prefix: string, afterId: string, limit: number) => Promise<StoredCredentials[]>
  /** Writes an account's stored credentials if they are still `expected.credentials` (compare-and-set); false otherwise. */
  replaceCredentials: (expected: StoredCredentials, next: string) => Promise<boolean>
  /** Records one charge call to a connector, once, after it ended (issue 44); its id is new. */
  recordAttempt: (call: ConnectorCall) => Promise<void>
  /**
   * The merchant's calls started in [createdGte, createdLt), per connector (account id and type; id null: the
   * default gateway): counts by outcome and the nearest-rank p50/p95 of the answered calls' durations. Unordered.
   */
  attemptStats: (query: { merchantId: string, createdGte: string, createdLt: string }) => Promise<ConnectorCallFigures[]>
}

import type { ConnectorCall, ConnectorCallFigures } from '../domain/connector-stats'

import type { Dispute, DisputeStatus } from '../domain/disputes'

/** A dispute as one report left it, with its payment and the dispute as it was before (undefined: the report created it). */
export interface DisputeChange {
  dispute: Dispute
  payment: Payment
  previous: Dispute | undefined
}

export interface DisputeListQuery extends PageRequest {
  merchantId: string
  status?: DisputeStatus
  paymentId?: string
}

/**
 * Disputes (issue 40). A dispute and its payment's disputed amount change together, with the payment locked (FOR UPDATE
 * on PostgreSQL, SQLite's single writer), like refunds: a refund and a withdrawal of the same payment are decided one
 * after the other, so refunded + disputed never exceed what was captured.
 */
export interface DisputeStore {
  /**
   * Locks the payment, reads its disputes (the one at `connectorId` with `connectorReference`, if recorded, and all of
   * them) and lets `decide` return the dispute and payment to write, or undefined when the report changes nothing; writes
   * both and `event`'s event in one transaction. Undefined when there is no such payment; else the change (`dispute` is
   * `previous` when nothing changed).
   */
  record: (paymentId: string, connector: { id: string, reference: string },
    decide: (payment: Payment, existing: Dispute | undefined, all: Dispute[]) => { dispute: Dispute, payment: Payment } | undefined,
    event?: EventOf<DisputeChange>) => Promise<DisputeChange | undefined>
  get: (id: string) => Promise<Dispute | undefined>
  /** A merchant's disputes, newest first (created time, then id); UnknownCursorError for a cursor outside the list. */
  list: (query: DisputeListQuery) => Promise<Page<Dispute>>
  /** A payment's disputes, oldest first. */
  listForPayment: (paymentId: string) => Promise<Dispute[]>
}

/** An event a PSP sent to a connector account's webhook route, as the inbox holds it. */
/** A capture, refund or void that a connector accepted and has not reported on yet. */
export interface AwaitingOutcome {
  kind: 'capture' | 'refund' | 'void'
  paymentId: string
  refundId: string | null
  since: string
}

export interface ConnectorEventRecord {
  connectorId: string
  /** The PSP's event id (Stripe: `evt_…`). */
  eventId: string
  type: string
  receivedAt: string
  /** When it was acted on; null while it is recorded only (a crash between the two). */
  processedAt: string | null
}

/**
 * The inbox of the PSPs' own webhooks: an event is recorded before it is acted on and marked
 * processed after, so a redelivery does nothing twice and an interrupted one is finished.
 */
export interface ConnectorEventStore {
  /** Records the event unless it is recorded already; returns the record as stored (an earlier one wins). */
  record: (event: { connectorId: string, eventId: string, type: string, receivedAt: string, payload?: string }) => Promise<ConnectorEventRecord>
  get: (connectorId: string, eventId: string) => Promise<ConnectorEventRecord | undefined>
  /**
   * Events recorded with their payload before `receivedBefore` and never processed (a crash between
   * receipt and processing), oldest first: what the recovery worker finishes.
   */
  unprocessed: (options: { receivedBefore: string, limit: number }) => Promise<Array<ConnectorEventRecord & { payload: string }>>
  /**
   * What waits on a connector's own report (an asynchronous connector such as Adyen) since before
   * `before`, oldest first: captures in flight (since their reservation), pending refunds (since
   * created) and authorizations past captureBefore that are not canceled yet (their void was received).
   */
  awaitingOutcomes: (options: { connectorType: string, before: string, limit: number }) => Promise<AwaitingOutcome[]>
  /** Marks a recorded event processed at `at`; false when it is unknown or was processed already. */
  markProcessed: (connectorId: string, eventId: string, at: string) => Promise<boolean>
  /** Records a refund the connector reports that the service never asked for, once per refund (its reference). */
  recordRefundAtConnector: (refund: ConnectorRefundRecord) => Promise<void>
  /** What refunds recorded by recordRefundAtConnector took back of one charge in `currency`, and when the last one arrived (null: none). */
  refundedAtConnector: (connectorId: string, chargeReference: string, currency: string) => Promise<{ amountMinor: number, lastAt: string | null }>
}

/** A refund a connector made by itself (its dashboard, another integration) of one of its charges. */
export interface ConnectorRefundRecord {
  connectorId: string
  refundReference: string
  chargeReference: string
  amountMinor: number
  currency: string
  receivedAt: string
}
