import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Stripe from 'stripe'
import { v7 as uuidv7 } from 'uuid'
import { drawIdsFrom } from '../../src/domain/ids'
import { buildApp, type App } from '../../app/app'
import type { InboundReceiver } from '../../src/gateway/inbound'
import { openDatabase } from '../../src/store'
import type { Database } from '../../src/store/types'
import type { DomainEvent } from '../../src/domain/events'
import type { WebhookClient, WebhookResponse } from '../../src/webhooks/client'
import { canTransition, PAYMENT_STATUSES, type Payment, type PaymentStatus } from '../../src/domain/payments'
import { signatureOf, type AdyenNotificationItem } from '../../src/gateway/adyen/notifications'
import { loadConfig } from '../../src/load-config'
import { LATEST_API_VERSION } from '../../src/domain/api-versions'
import { ConnectorEventNotMatchedError } from '../../src/domain/connectors'
import { RECOVERY_BACKOFF_CAP_MS } from '../../src/services/payments'
import { Rng } from './rng'
import { SimPsp, simulatedConnectors, type FaultPlan, type PspKind, type PspReport } from './psp'

/** A client's or the environment's move, drawn from the seed before the run (so a history can be shrunk). */
export type Op =
  /** `present`: customer-present (a returnUrl: the PSP may ask the shopper to authenticate). */
  | { kind: 'create', manual: boolean, amountMinor: number, concurrent: boolean, present?: boolean }
  | { kind: 'retry', pick: number, otherBody: boolean, concurrent: boolean }
  | { kind: 'capture', pick: number, fraction: number, retryPick: number | null }
  | { kind: 'refund', pick: number, fraction: number, retryPick: number | null }
  | { kind: 'cancel', pick: number }
  | { kind: 'read', pick: number }
  | { kind: 'deliver', count: number, duplicate: boolean, drop: boolean, newestFirst: boolean }
  | { kind: 'recover' }
  | { kind: 'clock', ms: number }
  | { kind: 'crash', inFlight: number, ticks: number }
  /** A shopper sent to a PSP's authentication page: authenticates, fails or walks away; comes back through the return address or not. */
  | { kind: 'shopper', pick: number, outcome: 'succeed' | 'fail' | 'abandon', returns: boolean, twice: boolean }

export interface SimulationOptions {
  seed: number
  steps: number
  db: 'sqlite' | 'postgres'
  /** PostgreSQL: a DATABASE_URL (a throwaway schema). */
  databaseUrl?: string
  /** The history to run instead of the seed's (shrinking). */
  ops?: Op[]
  /** A bug planted in the database layer on purpose (the simulator's own tests). */
  plant?: (db: Database) => Database
  /**
   * Which world: 1, off-session payments only (the seeds found before customer-present payments and changes made in
   * the PSPs' dashboards were simulated replay with it); 2, with them; 3 (the default), where refunds made in the PSPs'
   * dashboards also take extra charges a payment is giving back (generation 2 refunded only a payment's own charge there).
   */
  generation?: Generation
}

export type Generation = 1 | 2 | 3
export const GENERATIONS: readonly Generation[] = [1, 2, 3]
export const LATEST_GENERATION: Generation = 3

export interface Violation {
  invariant: number
  step: number
  message: string
}

export interface SimulationResult {
  seed: number
  steps: number
  ops: Op[]
  faults: Record<string, number>
  checks: Record<string, number>
  violations: Violation[]
  /** A digest of every record id and final state: the same seed on SQLite gives the same digest (exact replay). */
  fingerprint: string
}

const ADMIN_KEY = 'simulation-admin-key-0123456789abcdefghijklmnopqrstuvwxyz'
const ADMIN_AUTH = { authorization: `Bearer ${ADMIN_KEY}` }
const ENCRYPTION_KEYS = 'simulation:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8='
const SECRET = 'sk_test_simulation'
const WEBHOOK_SECRET = 'whsec_simulation'
const HMAC = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056'
const ADYEN_ACCOUNT = 'SimulationECOM'
const START = Date.parse('2026-11-01T00:00:00.000Z')
const WEBHOOK_RETRY_CAP_MS = 2 * 3_600_000
const PUBLIC_BASE_URL = 'https://pay.simulation.example'
const MERCHANT_RETURN_URL = 'https://shop.simulation.example/checkout/done'

/**
 * The ops of a seed: mostly client requests, with faults of the environment mixed in. Generation 2 draws what it adds
 * (customer-present payments, shoppers) from a stream of its own, so generation 1's histories stay what they were.
 */
export function opsOf (seed: number, steps: number, generation: Generation = LATEST_GENERATION): Op[] {
  const rng = new Rng(seed)
  const shoppers = generation >= 2 ? new Rng(seed ^ 0x5409) : undefined
  const ops: Op[] = []
  for (let step = 0; step < steps; step++) {
    const kind = rng.weighted({ create: 22, retry: 14, capture: 9, refund: 10, cancel: 5, read: 6, deliver: 18, recover: 6, clock: 6, crash: 2 })
    const pick = rng.int(1_000_000)
    switch (kind) {
      case 'create': ops.push({ kind, manual: rng.chance(0.4), amountMinor: (1 + rng.int(500)) * 10 + rng.int(10), concurrent: rng.chance(0.15) }); break
      case 'retry': ops.push({ kind, pick, otherBody: rng.chance(0.1), concurrent: rng.chance(0.2) }); break
      case 'capture':
      case 'refund': ops.push({ kind, pick, fraction: rng.pick([0.25, 0.5, 1, 1.2]), retryPick: rng.chance(0.25) ? rng.int(1_000_000) : null }); break
      case 'cancel':
      case 'read': ops.push({ kind, pick }); break
      case 'deliver': ops.push({ kind, count: 1 + rng.int(4), duplicate: rng.chance(0.15), drop: rng.chance(0.1), newestFirst: rng.chance(0.3) }); break
      case 'recover': ops.push({ kind }); break
      case 'clock': ops.push({ kind, ms: rng.pick([1_000, 30_000, 130_000, 3_600_000, 90_000_000]) }); break
      case 'crash': ops.push({ kind, inFlight: rng.int(3), ticks: rng.int(6) }); break
    }
    if (shoppers === undefined) continue
    const last = ops[ops.length - 1]
    if (last?.kind === 'create') last.present = shoppers.chance(0.3)
    if (shoppers.chance(0.08)) {
      ops[ops.length - 1] = { kind: 'shopper', pick: shoppers.int(1_000_000), outcome: shoppers.weighted({ succeed: 6, fail: 2, abandon: 2 }), returns: shoppers.chance(0.8), twice: shoppers.chance(0.15) }
    }
  }
  return ops
}

interface Sent { key: string, path: string, body: string }
/** One service instance: a crash drops it (its gateways stop answering, its pool closes) and a new one takes its slot. */
interface Instance { app: App, db: Database, alive: { value: boolean } }
interface KeyRecord { path: string, body: string, final?: { status: number, body: string }, resourceId?: string }
interface Acknowledged { paymentId: string, status: PaymentStatus, capturedMinor: number, refundedMinor: number }

/** Money a dispute took back from the payment and the PSP has not reinstated. */
const disputedOf = (payment: Payment): number => payment.amountDisputedMinor ?? 0

/** Delivers a signed Stripe event as the route does: through the stripe module's receiver. */
async function stripeEventTo (app: App, connectorId: string, payload: string, signature: string): Promise<void> {
  await receiverOf(app, 'stripe').receive(connectorId, { rawBody: Buffer.from(payload), body: JSON.parse(payload) as unknown, headers: { 'stripe-signature': signature } })
}

/** Delivers one signed Adyen notification item as the route does: through the adyen module's receiver. */
async function adyenNotificationTo (app: App, connectorId: string, item: AdyenNotificationItem): Promise<void> {
  const body = { live: 'false', notificationItems: [{ NotificationRequestItem: item }] }
  await receiverOf(app, 'adyen').receive(connectorId, { rawBody: Buffer.from(JSON.stringify(body)), body, headers: {} })
}

function receiverOf (app: App, type: string): InboundReceiver {
  const receiver = app.connectorEvents.get(type)
  if (receiver === undefined) throw new Error(`no ${type} receiver`)
  return receiver
}

/** Statuses reachable from each status along the payment's state diagram (itself included). */
function reachable (from: PaymentStatus): Set<PaymentStatus> {
  const all: readonly PaymentStatus[] = PAYMENT_STATUSES
  const seen = new Set<PaymentStatus>([from])
  const queue = [from]
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const to of all) if (!seen.has(to) && canTransition(next, to)) { seen.add(to); queue.push(to) }
  }
  return seen
}

/**
 * One seeded run: the real app (routes, idempotency, services, stores) on one database, seeded PSPs behind the
 * connector factory, a seeded clock, seeded clients and faults; invariants checked after every step and at quiescence.
 */
export async function simulate (options: SimulationOptions): Promise<SimulationResult> {
  const generation = options.generation ?? LATEST_GENERATION
  const ops = options.ops ?? opsOf(options.seed, options.steps, generation)
  const faults: FaultPlan = { enabled: true, rng: new Rng(options.seed ^ 0x5eed), injected: {} }
  const choice = new Rng(options.seed ^ 0xc0ffee)
  const authentication = generation >= 2 ? new Rng(options.seed ^ 0x3d5) : undefined
  const psps: Record<PspKind, SimPsp> = { stripe: new SimPsp('stripe', faults, authentication), adyen: new SimPsp('adyen', faults, authentication) }
  // Invariant 7 where it matters most: when a refund reaches a PSP, our records never promise more out than captured.
  for (const psp of Object.values(psps)) {
    psp.beforeRefund = async (paymentId) => {
      const payment = await db.payments.get(paymentId)
      count('refund_bound_at_psp')
      if (payment !== undefined && payment.amountRefundedMinor + payment.refundPendingMinor + disputedOf(payment) > payment.amountCapturedMinor) {
        violated(7, `payment ${paymentId}: a refund reached the PSP with refunded ${payment.amountRefundedMinor} + pending ${payment.refundPendingMinor} + disputed ${disputedOf(payment)} > captured ${payment.amountCapturedMinor}`)
      }
    }
  }
  const checks: Record<string, number> = {}
  const violations: Violation[] = []
  const fingerprint = createHash('sha256')
  let step = -1
  const count = (name: string): void => { checks[name] = (checks[name] ?? 0) + 1 }
  const violated = (invariant: number, message: string): void => { violations.push({ invariant, step, message }) }

  let now = START
  // Record ids from the seeded clock and a seeded stream, so that a replayed seed makes the same records.
  const idRng = new Rng(options.seed ^ 0x1d)
  const restoreIds = drawIdsFrom(() => uuidv7({ msecs: now, random: Uint8Array.from({ length: 16 }, () => idRng.int(256)) }))
  // A crash drops the process, not the disk: the file outlives the instance (on tmpfs where there is one, for speed).
  const directory = options.db === 'sqlite' ? mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'simulation-')) : undefined
  const env: Record<string, string> = {
    DATABASE_URL: options.db === 'sqlite' ? `file:${join(directory ?? '', 'service.db')}` : options.databaseUrl ?? '',
    // A few requests at a time: small pools, so that seeds side by side stay far from the server's connection limit.
    DATABASE_POOL_SIZE: '3',
    ENCRYPTION_KEYS,
    ADMIN_API_KEY: ADMIN_KEY,
    REAPER_INTERVAL_MS: '0',
    RECOVERY_INTERVAL_MS: '0',
    WEBHOOK_POLL_INTERVAL_MS: '0',
    INSTANCE_HEARTBEAT_MS: '60000',
    INSTANCE_DEAD_AFTER_MS: '180000',
    GATEWAY: 'none',
    GATEWAY_TIMEOUT_MS: '120000',
    CONNECTOR_CACHE_TTL_MS: '0',
    RATE_LIMIT_MAX: '100000000',
    RECOVERY_AGE_SECONDS: '60',
    // Keys outlive the run (a key past retention may be reused for a new payment, as documented).
    IDEMPOTENCY_TTL_HOURS: '100000',
    SQLITE_SYNCHRONOUS: 'NORMAL',
    // The merchant's endpoint is the world's receiver (no network): more retries than the default, so that a run of
    // failed attempts while faults are on cannot end a delivery before quiescence.
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_DELAYS: '5s,1m,10m,1h,1h,2h,2h,2h,2h,2h,2h,2h', // WEBHOOK_RETRY_CAP_MS is its longest
    LOG_LEVEL: 'silent',
    // Customer-present payments: the PSPs send shoppers back to this service's return address.
    PUBLIC_BASE_URL
  }
  const config = loadConfig(env)

  /** The merchant's webhook receiver: event ids it got; while faults are on some attempts fail (5xx, time-out, answer lost). */
  const received = new Set<string>()
  // Its own stream: the PSPs' faults stay what they were for every seed.
  const receiverRng = new Rng(options.seed ^ 0x4ebb)
  const disputeRng = new Rng(options.seed ^ 0xd15)
  const dashboardRng = generation >= 2 ? new Rng(options.seed ^ 0xca9) : undefined
  // Generation 3: captures made in a dashboard are sometimes partial, drawn from a stream of their own.
  const partialCaptureRng = generation >= 3 ? new Rng(options.seed ^ 0x9a7) : undefined
  const receiver: WebhookClient = {
    async post (_url, headers) {
      const fault = faults.enabled ? receiverRng.weighted({ none: 85, server_error: 5, timeout: 5, lost_after: 5 }) : 'none'
      if (fault !== 'none') faults.injected[`webhook_${fault}`] = (faults.injected[`webhook_${fault}`] ?? 0) + 1
      if (fault === 'none' || fault === 'lost_after') received.add(headers['webhook-id'] ?? '')
      const answer: WebhookResponse = { statusCode: 200, retryAfter: undefined, body: null, error: null, durationMs: 1 }
      if (fault === 'server_error') return { ...answer, statusCode: 500 }
      if (fault === 'none') return answer
      return { ...answer, statusCode: null, error: 'timeout' }
    },
    async close () {}
  }

  // On PostgreSQL two instances share the database, as behind a load balancer; on SQLite one (its file has one writer).
  const instances: Instance[] = []
  const apps: App[] = []
  async function start (slot: number): Promise<void> {
    const alive = { value: true }
    const opened = await openDatabase(config)
    const db = options.plant === undefined ? opened : options.plant(opened)
    const app = await buildApp(config, { logger: false, database: db, clock: () => now, connectorFactory: simulatedConnectors(psps, () => alive.value), webhooks: { client: receiver } })
    instances[slot] = { app, db, alive }
    apps.push(app)
  }
  for (let slot = 0; slot < (options.db === 'postgres' ? 2 : 1); slot++) await start(slot)
  /** The instance the load balancer sends this request to (drawn only when there are two, so SQLite histories stay as they were). */
  const anyInstance = (): Instance => instances[instances.length === 1 ? 0 : choice.int(instances.length)] as Instance
  /** Reads for the invariants: any live instance's pool sees the same database. */
  const db = {
    get payments () { return (instances[0] as Instance).db.payments },
    get events () { return (instances[0] as Instance).db.events },
    get refunds () { return (instances[0] as Instance).db.refunds }
  }
  const app = (instances[0] as Instance).app

  const at = new Date(now).toISOString()
  const created = await app.db.merchants.create({
    id: '0194a5f0-0000-7000-8000-000000000001',
    name: 'Simulated shop',
    email: 'shop@simulation.example',
    country: null,
    defaultCurrency: null,
    metadata: {},
    status: 'active',
    apiVersion: LATEST_API_VERSION,
    version: 1,
    createdAt: at,
    updatedAt: at
  })
  const { secret } = await app.apiKeys.create(created.id, { name: 'simulation' })
  const merchant = { merchantId: created.id, auth: { authorization: `Bearer ${secret}` } }
  const accounts: Record<PspKind, string> = { stripe: '', adyen: '' }
  for (const [type, priority] of [['stripe', 0], ['adyen', 10]] as const) {
    const credentials = type === 'stripe' ? { secretKey: SECRET, webhookSecret: WEBHOOK_SECRET } : { apiKey: 'AQE_simulation_api_key_0001', merchantAccount: ADYEN_ACCOUNT, hmacKey: HMAC }
    const res = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/connectors`, headers: ADMIN_AUTH, payload: { type, credentials, priority: options.seed % 2 === 0 ? priority : 10 - priority } })
    if (res.statusCode !== 201) throw new Error(`connector account: ${res.statusCode} ${res.body}`)
    accounts[type] = res.json().id
  }

  const endpoint = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/webhook-endpoints`, headers: ADMIN_AUTH, payload: { url: 'http://127.0.0.1:9/simulation' } })
  if (endpoint.statusCode !== 201) throw new Error(`webhook endpoint: ${endpoint.statusCode} ${endpoint.body}`)

  const keys = new Map<string, KeyRecord>()
  const keyList: string[] = []
  const paymentIds: string[] = []
  const acknowledged: Acknowledged[] = []
  const lastSeen = new Map<string, PaymentStatus>()
  const touched = new Set<string>()
  /** The PSP pages clients were sent to (nextAction), in the order they learned them: where shoppers can go. */
  const authenticationPages: string[] = []
  let keySequence = 0
  const newKey = (): string => `sim-${options.seed}-${++keySequence}`

  async function send (sent: Sent, to: Instance = anyInstance()): Promise<{ status: number, body: string }> {
    const res = await to.app.inject({ method: 'POST', url: sent.path, headers: { ...merchant.auth, 'idempotency-key': sent.key, 'content-type': 'application/json' }, payload: sent.body })
    return { status: res.statusCode, body: res.body }
  }

  /** Invariant 4, and what a 2xx acknowledged (invariant 3). */
  function observe (sent: Sent, answer: { status: number, body: string }): void {
    // A client error is never a 500; on a refund or capture a 500 is the database's CHECK stopping a bound our code broke.
    if (answer.status >= 500 && answer.status !== 503) {
      violated(/\/(refunds|capture)$/.test(sent.path) ? 7 : 4, `${sent.path} answered ${answer.status}: ${answer.body.slice(0, 200)}`)
    }
    const record = keys.get(sent.key)
    if (record === undefined) return
    let parsed: Record<string, unknown> = {}
    try { parsed = JSON.parse(answer.body) as Record<string, unknown> } catch {}
    const resourceId = typeof parsed.paymentId === 'string' ? parsed.paymentId : sent.path === '/api/payments' && typeof parsed.id === 'string' ? parsed.id : undefined
    if (sent.body === record.body && sent.path === record.path && resourceId !== undefined) {
      count('key_one_resource')
      if (record.resourceId !== undefined && record.resourceId !== resourceId) violated(4, `key ${sent.key} made two payments: ${record.resourceId} and ${resourceId}`)
      record.resourceId ??= resourceId
    }
    const final = answer.status !== 503 && answer.status !== 409 && answer.status !== 429
    if (final && sent.body === record.body && sent.path === record.path) {
      count('same_key_same_answer')
      // A refusal before the key is claimed (400) is not stored: it is answered again, with its own traceId.
      const bytes = answer.body.replace(/"traceId":"[^"]*"/, '')
      if (record.final === undefined) record.final = { status: answer.status, body: bytes }
      else if (record.final.status !== answer.status || record.final.body !== bytes) {
        violated(4, `key ${sent.key}: first ${record.final.status} ${record.final.body.slice(0, 120)}, then ${answer.status} ${answer.body.slice(0, 120)}`)
      }
    }
    const nextAction = parsed.nextAction as { url?: unknown } | undefined
    if (typeof nextAction?.url === 'string' && !authenticationPages.includes(nextAction.url)) authenticationPages.push(nextAction.url)
    if (answer.status >= 200 && answer.status < 300 && typeof parsed.status === 'string') {
      const paymentId = sent.path === '/api/payments' ? String(parsed.id) : sent.path.split('/')[3] ?? ''
      const payment = sent.path.endsWith('/refunds') ? undefined : parsed
      if (payment !== undefined) {
        acknowledged.push({ paymentId, status: payment.status as PaymentStatus, capturedMinor: Math.round(Number(payment.amountCaptured ?? 0) * 100), refundedMinor: Math.round(Number(payment.amountRefunded ?? 0) * 100) })
      }
    }
  }

  async function request (sent: Sent, concurrent = false): Promise<void> {
    if (!keys.has(sent.key)) { keys.set(sent.key, { path: sent.path, body: sent.body }); keyList.push(sent.key) }
    const answers = await Promise.all((concurrent ? [sent, sent] : [sent]).map(async (one) => await send(one)))
    for (const answer of answers) {
      observe(sent, answer)
      if (sent.path === '/api/payments') {
        try {
          const id = JSON.parse(answer.body) as { id?: string, paymentId?: string }
          const paymentId = id.id ?? id.paymentId
          if (typeof paymentId === 'string' && !paymentIds.includes(paymentId)) paymentIds.push(paymentId)
          if (typeof paymentId === 'string') touched.add(paymentId)
        } catch {}
      }
    }
  }

  const paymentBody = (manual: boolean, amountMinor: number, present = false): string => JSON.stringify({
    amount: (amountMinor / 100).toFixed(2),
    currency: 'EUR',
    captureMethod: manual ? 'manual' : 'automatic',
    paymentMethods: { stripe: 'pm_card_visa', adyen: 'stored_visa' },
    shopperReference: 'shopper-sim',
    ...(present ? { returnUrl: MERCHANT_RETURN_URL } : {})
  })

  async function stored (id: string): Promise<Payment | undefined> {
    return await db.payments.get(id)
  }

  /** Delivers a PSP's report through the service that receives it (signed as the PSP signs it). */
  async function deliver (report: PspReport): Promise<void> {
    count(`report_${report.psp}_${report.kind}`)
    const { app, alive } = anyInstance()
    try {
      if (report.kind === 'dispute') return await deliverDispute(app, report)
      if (report.kind === 'refund_at_psp') return await deliverRefundAtPsp(app, report)
      if (report.psp === 'stripe') {
        const charge = report.charge
        const success = report.kind !== 'charge' || report.success
        const status = !success ? 'requires_payment_method' : charge.status === 'authorized' ? 'requires_capture' : charge.status === 'voided' ? 'canceled' : 'succeeded'
        const type = !success ? 'payment_intent.payment_failed' : status === 'requires_capture' ? 'payment_intent.amount_capturable_updated' : status === 'canceled' ? 'payment_intent.canceled' : 'payment_intent.succeeded'
        const payload = JSON.stringify({
          id: `evt_${choice.int(1e9)}`,
          object: 'event',
          api_version: '2026-10-28.endive',
          created: Math.floor(now / 1000),
          type,
          livemode: false,
          data: { object: { id: charge.id, object: 'payment_intent', amount: charge.amountMinor, amount_received: charge.capturedMinor, amount_capturable: status === 'requires_capture' ? charge.amountMinor : 0, currency: charge.currency.toLowerCase(), status, capture_method: charge.manual ? 'manual' : 'automatic', last_payment_error: success ? null : { type: 'card_error', code: 'card_declined', decline_code: 'card_declined' }, metadata: { payment_id: charge.paymentId } } }
        })
        const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Math.floor(now / 1000) })
        await stripeEventTo(app, accounts.stripe, payload, signature)
        return
      }
      const base = { merchantAccountCode: ADYEN_ACCOUNT, eventDate: new Date(now).toISOString(), reason: '' }
      let item: Omit<AdyenNotificationItem, 'additionalData'>
      switch (report.kind) {
        case 'charge': item = { ...base, eventCode: 'AUTHORISATION', success: String(report.success), pspReference: report.charge.id, merchantReference: report.charge.paymentId, amount: { value: report.charge.amountMinor, currency: report.charge.currency } } as AdyenNotificationItem; break
        case 'capture': item = { ...base, eventCode: 'CAPTURE', success: 'true', pspReference: `CAP${choice.int(1e9)}`, originalReference: report.charge.id, merchantReference: report.reference, amount: { value: report.amountMinor, currency: report.charge.currency } } as AdyenNotificationItem; break
        case 'refund': item = { ...base, eventCode: 'REFUND', success: 'true', pspReference: `REF${choice.int(1e9)}`, originalReference: report.charge.id, merchantReference: report.reference, amount: { value: report.amountMinor, currency: report.charge.currency } } as AdyenNotificationItem; break
        case 'capture_at_psp': item = { ...base, eventCode: 'CAPTURE', success: 'true', pspReference: `CAP${choice.int(1e9)}`, originalReference: report.charge.id, merchantReference: report.reference, amount: { value: report.charge.capturedMinor, currency: report.charge.currency } } as AdyenNotificationItem; break
        case 'cancel_at_psp': item = { ...base, eventCode: 'CANCELLATION', success: 'true', pspReference: `CAN${choice.int(1e9)}`, originalReference: report.charge.id, merchantReference: report.charge.paymentId, amount: { value: report.charge.amountMinor, currency: report.charge.currency } } as AdyenNotificationItem; break
        case 'cancel': item = { ...base, eventCode: report.byReference ? 'TECHNICAL_CANCEL' : 'CANCELLATION', success: String(report.success), pspReference: `CAN${choice.int(1e9)}`, ...(report.charge === undefined ? {} : { originalReference: report.charge.id }), merchantReference: report.paymentId, amount: { value: report.charge?.amountMinor ?? 0, currency: report.charge?.currency ?? 'EUR' } } as AdyenNotificationItem; break
      }
      const signed = { ...item, additionalData: { hmacSignature: signatureOf(item as AdyenNotificationItem, HMAC) } } as AdyenNotificationItem
      await adyenNotificationTo(app, accounts.adyen, signed)
    } catch (err) {
      // The PSP sends again what was not accepted: an event the service asks to get later (503), or one cut by a crash.
      if (err instanceof ConnectorEventNotMatchedError) {
        count('report_not_matched_yet')
        pending.push(report)
      } else if (alive.value) throw err
    } finally {
      const paymentId = report.kind === 'cancel' ? report.paymentId : report.charge.paymentId
      touched.add(paymentId)
    }
  }

  /** A dispute's news as each PSP sends it: Stripe's charge.dispute.created/closed, Adyen's CHARGEBACK/CHARGEBACK_REVERSED. */
  async function deliverDispute (app: App, report: Extract<PspReport, { kind: 'dispute' }>): Promise<void> {
    const { charge, dispute } = report
    const dueBy = Math.floor(now / 1000) + 7 * 86_400
    if (report.psp === 'stripe') {
      const movements = dispute.status === 'won' ? ['txn_withdrawn', 'txn_reinstated'] : ['txn_withdrawn']
      const payload = JSON.stringify({
        id: `evt_${choice.int(1e9)}`,
        object: 'event',
        api_version: '2026-10-28.endive',
        created: Math.floor(now / 1000),
        type: dispute.status === 'needs_response' ? 'charge.dispute.created' : 'charge.dispute.closed',
        livemode: false,
        data: { object: { id: dispute.id, object: 'dispute', amount: dispute.amountMinor, currency: charge.currency.toLowerCase(), reason: 'fraudulent', status: dispute.status, charge: `ch_of_${charge.id}`, payment_intent: charge.id, evidence_details: { due_by: dueBy }, balance_transactions: movements.map((id) => ({ id })), metadata: {} } }
      })
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Math.floor(now / 1000) })
      await stripeEventTo(app, accounts.stripe, payload, signature)
      return
    }
    const item = {
      merchantAccountCode: ADYEN_ACCOUNT,
      eventDate: new Date(now).toISOString(),
      reason: '',
      eventCode: dispute.status === 'won' ? 'CHARGEBACK_REVERSED' : 'CHARGEBACK',
      success: 'true',
      pspReference: dispute.id,
      originalReference: charge.id,
      merchantReference: charge.paymentId,
      amount: { value: dispute.amountMinor, currency: charge.currency }
    } as unknown as AdyenNotificationItem
    const additionalData = { chargebackReasonCode: '10.4', defensePeriodEndsAt: new Date(dueBy * 1000).toISOString(), disputeStatus: dispute.status === 'lost' ? 'Lost' : dispute.status === 'won' ? 'Won' : 'Undefended' }
    const signed = { ...item, additionalData: { ...additionalData, hmacSignature: signatureOf(item, HMAC) } } as AdyenNotificationItem
    await adyenNotificationTo(app, accounts.adyen, signed)
  }

  /** A refund made in the PSP's dashboard, as each PSP tells it: Stripe's charge.refund.updated, Adyen's REFUND with a reference not ours. */
  async function deliverRefundAtPsp (app: App, report: Extract<PspReport, { kind: 'refund_at_psp' }>): Promise<void> {
    const { charge } = report
    if (report.psp === 'stripe') {
      const payload = JSON.stringify({
        id: `evt_${choice.int(1e9)}`,
        object: 'event',
        api_version: '2026-10-28.endive',
        created: Math.floor(now / 1000),
        type: 'charge.refund.updated',
        livemode: false,
        data: { object: { id: report.refundId, object: 'refund', amount: report.amountMinor, currency: charge.currency.toLowerCase(), status: 'succeeded', payment_intent: charge.id, charge: `ch_of_${charge.id}`, metadata: {} } }
      })
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Math.floor(now / 1000) })
      await stripeEventTo(app, accounts.stripe, payload, signature)
      return
    }
    const item = {
      merchantAccountCode: ADYEN_ACCOUNT,
      eventDate: new Date(now).toISOString(),
      reason: '',
      eventCode: 'REFUND',
      success: 'true',
      pspReference: report.refundId,
      originalReference: charge.id,
      merchantReference: `customer-area-${report.refundId}`,
      amount: { value: report.amountMinor, currency: charge.currency }
    } as unknown as AdyenNotificationItem
    const signed = { ...item, additionalData: { hmacSignature: signatureOf(item, HMAC) } } as AdyenNotificationItem
    await adyenNotificationTo(app, accounts.adyen, signed)
  }

  /** Cardholders dispute captured charges now and then, and open disputes end (won or lost): the PSPs' own moves. */
  async function disputeNow (): Promise<void> {
    const charges = [...psps.stripe.charges.values(), ...psps.adyen.charges.values()]
    if (disputeRng.chance(0.08)) {
      const disputable = charges.filter((charge) => charge.status === 'captured' && charge.dispute === undefined && charge.capturedMinor > charge.refundedMinor)
      const charge = disputable.length === 0 ? undefined : disputable[disputeRng.int(disputable.length)]
      if (charge !== undefined) {
        psps[charge.id.includes('_stripe_') ? 'stripe' : 'adyen'].openDispute(charge)
        faults.injected.dispute_opened = (faults.injected.dispute_opened ?? 0) + 1
      }
    }
    if (disputeRng.chance(0.06)) {
      const refundable = charges.filter((charge) => charge.status === 'captured' && charge.capturedMinor > charge.refundedMinor + charge.disputedMinor)
      const charge = refundable.length === 0 ? undefined : refundable[disputeRng.int(refundable.length)]
      // Generations before 3 refund only a payment's own charge at the PSP (their seeds replay as they were found).
      const owned = charge === undefined || generation >= 3 ? true : (await stored(charge.paymentId))?.connectorReference === charge.id
      if (charge !== undefined && owned) {
        psps[charge.id.includes('_stripe_') ? 'stripe' : 'adyen'].refundAtPsp(charge, disputeRng.pick([0.5, 1]))
        faults.injected.refund_at_psp = (faults.injected.refund_at_psp ?? 0) + 1
      }
    }
    if (dashboardRng?.chance(0.04) === true) {
      // Someone captures or cancels an authorization in the PSP's dashboard (Stripe also cancels a charge waiting for its shopper).
      const movable = charges.filter((charge) => charge.status === 'authorized' || (charge.status === 'action' && charge.id.includes('_stripe_')))
      const charge = movable.length === 0 ? undefined : movable[dashboardRng.int(movable.length)]
      // Generation 3 also moves extra authorizations a payment is giving back (before 3, only a payment's own).
      const owned = charge === undefined ? undefined : generation >= 3 ? charge.id : (await stored(charge.paymentId))?.connectorReference ?? charge.id
      if (charge !== undefined && owned === charge.id) {
        const psp = psps[charge.id.includes('_stripe_') ? 'stripe' : 'adyen']
        if (charge.status === 'authorized' && dashboardRng.chance(0.5)) {
          psp.captureAtPsp(charge, partialCaptureRng?.chance(0.4) === true ? partialCaptureRng.pick([0.25, 0.5, 0.75]) : 1)
          faults.injected.capture_at_psp = (faults.injected.capture_at_psp ?? 0) + 1
        } else {
          psp.cancelAtPsp(charge)
          faults.injected.cancel_at_psp = (faults.injected.cancel_at_psp ?? 0) + 1
        }
      }
    }
    const open = charges.filter((charge) => charge.dispute?.status === 'needs_response')
    if (open.length > 0 && disputeRng.chance(0.3)) {
      const charge = open[disputeRng.int(open.length)] as typeof open[number]
      const won = disputeRng.chance(0.5)
      psps[charge.id.includes('_stripe_') ? 'stripe' : 'adyen'].closeDispute(charge, won)
      faults.injected[won ? 'dispute_won' : 'dispute_lost'] = (faults.injected[won ? 'dispute_won' : 'dispute_lost'] ?? 0) + 1
    }
  }

  const queue = (): PspReport[] => {
    const all: PspReport[] = []
    for (const psp of Object.values(psps)) all.push(...psp.reports.splice(0))
    return all
  }
  const pending: PspReport[] = []

  async function recover (): Promise<void> {
    count('recovery_pass')
    const jobs = anyInstance().app.backgroundJobs
    await jobs.recoverPendingPayments()
    await jobs.recoverPendingRefunds()
    await jobs.recoverAuthorizations()
    await jobs.reconcileConnectorEvents()
    await jobs.recoverActions()
    await sendWebhooks()
  }

  /** The delivery worker's passes until nothing is due now. */
  async function sendWebhooks (): Promise<void> {
    const { app } = anyInstance()
    while ((await app.webhooks.deliverDue(50)).attempted > 0) count('webhook_pass')
  }

  async function crash (inFlight: number, ticks: number): Promise<void> {
    count('crash')
    faults.injected.crash = (faults.injected.crash ?? 0) + 1
    const slot = instances.length === 1 ? 0 : choice.int(instances.length)
    const dying = instances[slot] as Instance
    // Requests in flight when the process dies: started, not awaited.
    for (let i = 0; i < inFlight && keyList.length > 0; i++) {
      const key = keyList[choice.int(keyList.length)] ?? ''
      const record = keys.get(key)
      if (record !== undefined) send({ key, path: record.path, body: record.body }, dying).catch(() => {})
    }
    for (let i = 0; i < ticks; i++) await new Promise((resolve) => setImmediate(resolve))
    dying.alive.value = false
    await dying.db.close().catch(() => {})
    await start(slot)
    // Invariant 3: what was acknowledged is still true.
    for (const ack of acknowledged) {
      const payment = await stored(ack.paymentId)
      count('acknowledged_still_true')
      if (payment === undefined) { violated(3, `payment ${ack.paymentId} acknowledged ${ack.status} is gone after a crash`); continue }
      if (!reachable(ack.status).has(payment.status)) violated(3, `payment ${ack.paymentId} acknowledged ${ack.status}, after a crash ${payment.status}`)
      if (payment.amountCapturedMinor < ack.capturedMinor) violated(3, `payment ${ack.paymentId} acknowledged ${ack.capturedMinor} captured, after a crash ${payment.amountCapturedMinor}`)
      if (payment.amountRefundedMinor < ack.refundedMinor) violated(3, `payment ${ack.paymentId} acknowledged ${ack.refundedMinor} refunded, after a crash ${payment.amountRefundedMinor}`)
    }
  }

  /** Invariants 1, 5 and 7 on the payments this step touched. */
  async function checkTouched (): Promise<void> {
    for (const id of touched) {
      const payment = await stored(id)
      if (payment === undefined) continue
      count('touched_payment')
      const authorizations = (psps.stripe.authorizations.get(id) ?? 0) + (psps.adyen.authorizations.get(id) ?? 0)
      if (authorizations > 1) {
        const charged = Object.values(psps).flatMap((psp) => [...psp.charges.values()].filter((c) => c.paymentId === id && c.status !== 'declined').map((c) => `${psp.kind}:${c.key}:${c.status}`))
        violated(1, `payment ${id} was authorized ${authorizations} times at the PSPs (attempts ${JSON.stringify(payment.attempts.map((a) => `${a.connectorType}:${a.outcome}:${a.code ?? ''}`))}; charges ${JSON.stringify(charged)})`)
      }
      checkFailover(payment)
      const previous = lastSeen.get(id)
      // Several moves may happen between two looks (a step settles and captures): each look must be reachable from the one before.
      if (previous !== undefined && !reachable(previous).has(payment.status)) violated(5, `payment ${id} moved ${previous} → ${payment.status}`)
      // succeeded → requires_capture is on the diagram only for a capture that failed later, which gives all of it back.
      if (payment.status === 'requires_capture' && (payment.amountCapturedMinor > 0 || payment.amountRefundedMinor > 0)) {
        violated(5, `payment ${id} requires capture with ${payment.amountCapturedMinor} captured and ${payment.amountRefundedMinor} refunded`)
      }
      lastSeen.set(id, payment.status)
      if (payment.amountRefundedMinor + payment.refundPendingMinor + disputedOf(payment) > payment.amountCapturedMinor) violated(7, `payment ${id}: refunded ${payment.amountRefundedMinor} + pending ${payment.refundPendingMinor} + disputed ${disputedOf(payment)} > captured ${payment.amountCapturedMinor}`)
      if (payment.amountCapturedMinor > payment.amountMinor) violated(7, `payment ${id}: captured ${payment.amountCapturedMinor} > authorized ${payment.amountMinor}`)
    }
    touched.clear()
  }

  /** Invariant 1, second half: the payment left a connector only when no attempt there may have charged (or a lookup found nothing). */
  function checkFailover (payment: Payment): void {
    count('failover_rule')
    const open = new Map<string, boolean>()
    for (const attempt of payment.attempts) {
      const on = `${attempt.connectorType}:${attempt.connectorId ?? ''}`
      if (attempt.outcome === 'held' || attempt.outcome === 'released' || attempt.outcome === 'release_refused' || attempt.outcome === 'cancel_requested') continue
      for (const [other, mayHaveCharged] of open) {
        if (other !== on && mayHaveCharged && attempt.outcome !== 'skipped') violated(1, `payment ${payment.id} went to ${on} after an unknown outcome at ${other}`)
      }
      if (attempt.outcome === 'unknown' || attempt.outcome === 'pending') open.set(on, true)
      if (attempt.outcome === 'not_found') open.set(on, false)
    }
  }

  /**
   * Time runs on, and every live instance beats as its heartbeat timer would have meanwhile (each
   * INSTANCE_HEARTBEAT_MS of simulated time). The timer itself runs on real time, which a seed's clock
   * jumps outrun: without these beats a live instance would look stopped and its locks be taken over
   * mid-request, which no running deployment does, and at moments that depend on the machine's speed.
   */
  let lastBeat = now
  async function advance (ms: number): Promise<void> {
    now += ms
    if (now - lastBeat < config.INSTANCE_HEARTBEAT_MS) return
    lastBeat = now
    for (const each of instances) if (each.alive.value) await each.db.instances.beat(each.app.instance.id, now, now)
  }

  async function run (op: Op): Promise<void> {
    switch (op.kind) {
      case 'create': {
        const key = newKey()
        return await request({ key, path: '/api/payments', body: paymentBody(op.manual, op.amountMinor, op.present === true) }, op.concurrent)
      }
      case 'retry': {
        if (keyList.length === 0) return
        const key = keyList[op.pick % keyList.length] ?? ''
        const record = keys.get(key)
        if (record === undefined) return
        const body = op.otherBody && record.path === '/api/payments' ? paymentBody(false, 1234) : record.body
        return await request({ key, path: record.path, body }, op.concurrent)
      }
      case 'capture':
      case 'refund': {
        if (paymentIds.length === 0) return
        const id = paymentIds[op.pick % paymentIds.length] ?? ''
        const payment = await stored(id)
        if (payment === undefined) return
        const base = op.kind === 'capture' ? payment.amountMinor : payment.amountCapturedMinor - payment.amountRefundedMinor
        const amountMinor = Math.max(1, Math.round(base * op.fraction))
        const path = `/api/payments/${id}/${op.kind === 'capture' ? 'capture' : 'refunds'}`
        const key = op.retryPick !== null && keyList.length > 0 ? keyList[op.retryPick % keyList.length] ?? newKey() : newKey()
        const record = keys.get(key)
        const sent = record !== undefined && record.path === path ? { key, path, body: record.body } : { key: record === undefined ? key : newKey(), path, body: JSON.stringify({ amount: (amountMinor / 100).toFixed(2) }) }
        touched.add(id)
        return await request(sent)
      }
      case 'cancel':
      case 'read': {
        if (paymentIds.length === 0) return
        const id = paymentIds[op.pick % paymentIds.length] ?? ''
        touched.add(id)
        const res = await anyInstance().app.inject({ method: op.kind === 'cancel' ? 'POST' : 'GET', url: `/api/payments/${id}${op.kind === 'cancel' ? '/cancel' : ''}`, headers: merchant.auth })
        if (res.statusCode >= 500 && res.statusCode !== 503) violated(4, `${op.kind} answered ${res.statusCode}: ${res.body.slice(0, 200)}`)
        return
      }
      case 'deliver': {
        await disputeNow()
        pending.push(...queue())
        for (let i = 0; i < op.count && pending.length > 0; i++) {
          const index = op.newestFirst ? pending.length - 1 : 0
          const [report] = pending.splice(index, 1)
          if (report === undefined) break
          if (op.drop && faults.enabled) {
            // Never sent now: the PSP sends it again later (at quiescence at the latest).
            faults.injected.report_delayed = (faults.injected.report_delayed ?? 0) + 1
            pending.push(report)
            continue
          }
          await deliver(report)
          if (op.duplicate) { faults.injected.report_duplicated = (faults.injected.report_duplicated ?? 0) + 1; await deliver(report) }
        }
        return
      }
      case 'recover': return await recover()
      case 'clock': {
        faults.injected.clock_jump = (faults.injected.clock_jump ?? 0) + 1
        return await advance(op.ms)
      }
      case 'crash': return await crash(op.inFlight, op.ticks)
      case 'shopper': return await shopper(op)
    }
  }

  /** A shopper at a PSP's authentication page (one a client was sent to), then on the way back to the service. */
  async function shopper (op: Extract<Op, { kind: 'shopper' }>): Promise<void> {
    if (authenticationPages.length === 0) return
    // Mostly a shopper just sent there; now and then one coming back to an older page.
    const recent = op.pick % 5 === 0 ? authenticationPages.length : Math.min(authenticationPages.length, 3)
    const page = authenticationPages[authenticationPages.length - 1 - (Math.floor(op.pick / 5) % recent)] ?? ''
    const psp = psps.stripe.chargeAtPage(page) !== undefined ? psps.stripe : psps.adyen
    const charge = psp.chargeAtPage(page)
    if (charge?.returnUrl === undefined) return
    count(`shopper_${op.outcome}`)
    touched.add(charge.paymentId)
    if (op.outcome !== 'abandon') psp.authenticate(charge, op.outcome === 'succeed')
    if (!op.returns) return
    const back = new URL(charge.returnUrl)
    for (const [name, value] of Object.entries(psp.returnParams(charge))) back.searchParams.set(name, value)
    for (let visit = 0; visit < (op.twice ? 2 : 1); visit++) {
      const res = await anyInstance().app.inject({ method: 'GET', url: `${back.pathname}${back.search}` })
      count('shopper_return')
      if (res.statusCode !== 303) {
        violated(4, `the shopper's return to ${back.pathname} answered ${res.statusCode}: ${res.body.slice(0, 200)}`)
        return
      }
      // The shopper is told the payment's status: a statement like a 2xx (invariant 3).
      const told = new URL(String(res.headers.location))
      const status = told.searchParams.get('status') as PaymentStatus | null
      if (told.searchParams.get('paymentId') !== charge.paymentId || status === null) violated(4, `the shopper's return went to ${told.toString()}`)
      else acknowledged.push({ paymentId: charge.paymentId, status, capturedMinor: 0, refundedMinor: 0 })
    }
  }

  try {
    for (const [index, op] of ops.entries()) {
      step = index
      await advance(1000)
      await run(op)
      await checkTouched()
      if (violations.length > 0) break
    }
    if (violations.length === 0) await quiesce()
  } finally {
    restoreIds()
    for (const each of apps) await each.close().catch(() => {})
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true })
  }

  /** Faults stop, every report is delivered, recovery runs until nothing is left to do; then the records must equal the PSPs'. */
  async function quiesce (): Promise<void> {
    step = ops.length
    faults.enabled = false
    // Not every client comes back: a third never retries (the recovery worker and the PSPs' reports must settle theirs).
    const returning = keyList.filter((_key, index) => index % 3 !== 2)
    for (let round = 0; round < 12; round++) {
      pending.push(...queue())
      for (const report of pending.splice(0)) await deliver(report)
      // The recovery worker defers a payment still unknown by about its age, up to an hour: time grows to reach it.
      await advance(Math.min(120_000 * 2 ** round, RECOVERY_BACKOFF_CAP_MS + 60_000))
      await recover()
      pending.push(...queue())
      for (const report of pending.splice(0)) await deliver(report)
      // Clients retry what they never got an answer to (their keys replay or resume).
      for (const key of returning) {
        const record = keys.get(key)
        if (record !== undefined && record.final === undefined) await request({ key, path: record.path, body: record.body })
      }
      const unsettled = await db.payments.countPending()
      // Money held whose release a connector refused (a dispute open then) is asked again once time has run on.
      const moneyHeld = (await db.payments.withMoneyHeld(1)).length
      // A shopper who never came back: the payment is abandoned once ACTION_TTL_SECONDS have run.
      const waiting = await waitingForShoppers()
      if (unsettled === 0 && moneyHeld === 0 && waiting === 0 && pending.length === 0 && returning.every((key) => keys.get(key)?.final !== undefined)) break
    }
    // Deliveries waiting for a retry: time runs on to each one's next attempt (faults are off: every attempt arrives).
    for (let round = 0; round < 16; round++) {
      await sendWebhooks()
      if ((await allEvents()).every((event) => received.has(event.id))) break
      await advance(WEBHOOK_RETRY_CAP_MS + 60_000)
    }
    for (const id of paymentIds) touched.add(id)
    await checkTouched()
    const events = await allEvents()
    fingerprint.update(JSON.stringify(events.map((event) => [event.id, event.type, event.resourceId])))
    for (const id of paymentIds) {
      const payment = await stored(id)
      if (payment === undefined) continue
      count('quiescent_payment')
      fingerprint.update(JSON.stringify([payment.id, payment.status, payment.amountCapturedMinor, payment.amountRefundedMinor, payment.attempts.map((a) => a.outcome)]))
      if (payment.status === 'requires_action') violated(2, `payment ${id} still waits for its shopper at quiescence (attempts ${JSON.stringify(payment.attempts.map((a) => `${a.connectorType}:${a.outcome}:${a.code ?? ''}`))})`)
      if (payment.status === 'pending') violated(2, `payment ${id} is still pending at quiescence (attempts ${JSON.stringify(payment.attempts.map((a) => `${a.connectorType}:${a.outcome}:${a.code ?? ''}`))})`)
      const charges = [...psps.stripe.charges.values(), ...psps.adyen.charges.values()].filter((charge) => charge.paymentId === id)
      const pspNet = charges.reduce((sum, charge) => sum + (charge.status === 'captured' ? charge.capturedMinor - charge.refundedMinor - charge.disputedMinor : 0), 0)
      const ourNet = payment.amountCapturedMinor - payment.amountRefundedMinor - disputedOf(payment)
      if (pspNet !== ourNet) {
        violated(2, `payment ${id} (${payment.status}, reference ${payment.connectorReference ?? 'none'}, attempts ${JSON.stringify(payment.attempts.map((a) => `${a.connectorType}:${a.outcome}:${a.code ?? ''}`))}): the PSPs hold ${pspNet}, our records ${ourNet} (captured ${payment.amountCapturedMinor}, refunded ${payment.amountRefundedMinor}, disputed ${disputedOf(payment)}); PSP charges ${JSON.stringify(charges.map((c) => ({ id: c.id, status: c.status, captured: c.capturedMinor, refunded: c.refundedMinor, disputed: c.disputedMinor, dispute: c.dispute?.status })))}`)
      }
      const held = charges.filter((charge) => charge.status === 'authorized').length
      if (held > (payment.status === 'requires_capture' ? 1 : 0)) {
        violated(2, `payment ${id} (${payment.status} ${payment.failureCode ?? ''}): ${held} authorization(s) still held at the PSPs; attempts ${JSON.stringify(payment.attempts.map((a) => `${a.connectorType}:${a.outcome}:${a.code ?? ''}`))}, PSP charges ${JSON.stringify(charges.map((c) => `${c.id}:${c.status}`))}`)
      }
      await checkEvents(payment, events)
    }
    // Invariant 6, second half: every event reached the merchant's endpoint at least once.
    for (const event of events) {
      count('event_delivered')
      if (!received.has(event.id)) violated(6, `event ${event.id} (${event.type} of ${event.resourceType} ${event.resourceId}) never reached the webhook endpoint`)
    }
  }

  async function waitingForShoppers (): Promise<number> {
    let waiting = 0
    for (const id of paymentIds) if ((await stored(id))?.status === 'requires_action') waiting++
    return waiting
  }

  /** Every event of the merchant, oldest first. */
  async function allEvents (): Promise<DomainEvent[]> {
    const events: DomainEvent[] = []
    let cursor: string | undefined
    for (;;) {
      const page = await db.events.list({ merchantId: merchant.merchantId, limit: 100, ...(cursor === undefined ? {} : { startingAfter: cursor }) })
      events.push(...page.data)
      if (!page.hasMore || page.data.length === 0) break
      cursor = page.data[page.data.length - 1]?.id
    }
    return events.reverse()
  }

  /**
   * Invariant 6: one event per state change, in order, numbered 1, 2, 3… per resource. A payment's own events follow
   * its status up to `succeeded`; its refunds' moves are told by one `refund.succeeded` or `refund.failed` each.
   */
  async function checkEvents (payment: Payment, all: DomainEvent[]): Promise<void> {
    const events = all.filter((event) => (event.resourceType === 'payment' && event.resourceId === payment.id) || (event.resourceType === 'refund' && event.data.paymentId === payment.id))
    count('event_order')
    const own = events.filter((event) => event.resourceType === 'payment').sort((a, b) => a.sequence - b.sequence)
    let previous: PaymentStatus | undefined
    for (const [index, event] of own.entries()) {
      if (event.sequence !== index + 1) violated(6, `payment ${payment.id}: event sequence ${own.map((e) => e.sequence).join(',')}`)
      if (event.type === 'payment.pending') continue
      const status = event.data.status as PaymentStatus
      if (previous !== undefined && (previous === status || !canTransition(previous, status))) violated(6, `payment ${payment.id}: events ${own.map((e) => e.type).join(', ')}`)
      previous = status
    }
    const expected = payment.status === 'partially_refunded' || payment.status === 'refunded' ? 'succeeded' : payment.status
    if (previous !== expected && payment.status !== 'pending') violated(6, `payment ${payment.id} is ${payment.status} but its last event says ${previous ?? 'nothing'}`)
    const refunds = await db.refunds.list(payment.id, { limit: 100 })
    for (const refund of refunds.data) {
      const told = events.filter((event) => event.resourceType === 'refund' && event.resourceId === refund.id)
      const wanted = refund.status === 'pending' ? 0 : 1
      if (told.length !== wanted || (wanted === 1 && told[0]?.type !== `refund.${refund.status}`)) {
        violated(6, `refund ${refund.id} (${refund.status}) of payment ${payment.id}: events ${told.map((e) => e.type).join(', ') || 'none'}`)
      }
    }
  }

  return { seed: options.seed, steps: ops.length, ops, faults: faults.injected, checks, violations, fingerprint: fingerprint.digest('hex') }
}

/**
 * The shortest history found that still fails: drops chunks of ops (halves, quarters, … single ops) while the
 * run still violates an invariant, within `budget` runs.
 */
export async function shrink (run: (ops: Op[]) => Promise<SimulationResult>, failing: Op[], budget = 40): Promise<Op[]> {
  let ops = failing
  let runs = 0
  for (let chunk = Math.ceil(ops.length / 2); chunk >= 1 && runs < budget; chunk = Math.floor(chunk / 2)) {
    for (let start = 0; start < ops.length && runs < budget;) {
      const candidate = [...ops.slice(0, start), ...ops.slice(start + chunk)]
      runs++
      const result = await run(candidate)
      if (result.violations.length > 0) ops = candidate
      else start += chunk
    }
  }
  return ops
}
