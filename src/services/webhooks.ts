import { lookup as dnsLookup } from 'node:dns/promises'
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors'
import { isGuid, newId } from '../domain/ids'
import { merchantNotFoundMessage, type Merchant } from '../domain/merchants'
import { isApiVersion, UnknownApiVersionError, type ApiVersion } from '../domain/api-versions'
import type { EventType, RenderEventData } from '../domain/events'
import type { Page, PageRequest } from '../domain/pagination'
import {
  DeliveryInFlightError, endpointDisabledForTest, MAX_ENDPOINTS_PER_MERCHANT, newSecret, REPLAY_BATCH_EVENTS, nextAttemptDelay, ROTATION_OVERLAP_DEFAULT_SECONDS, type DeliveryAttempt, type WebhookDelivery, type WebhookEndpoint
} from '../domain/webhooks'
import type { AttemptRecord, ClaimedDelivery, Database, KeyCompletion, ReplayBatch } from '../store/types'
import type { OwnedKey } from './keys'
import { privateMessage, resolvesPrivately, webhookUrlProblem, type Lookup } from '../webhooks/addresses'
import type { WebhookClient } from '../webhooks/client'
import { sendEvent, type SendOutcome } from '../webhooks/send'
import type { EventFactory } from '../domain/event-factory'
import type { SecretBox } from '../secrets/encryption'
import { sealedWebhookStore } from './webhook-secrets'
import type { Logger } from './payments'

export interface EndpointInput {
  url: string
  /** Omitted or `['*']`: every type. */
  enabledEvents?: Array<EventType | '*'>
  description?: string
  /** Defaults to the merchant's version. */
  apiVersion?: string
}

export interface EndpointPatch {
  url?: string
  enabledEvents?: Array<EventType | '*'>
  description?: string | null
  disabled?: boolean
  apiVersion?: string
}

/** Outcome of one pass of the delivery worker (for metrics and tests). */
export interface DeliveryPass {
  attempted: number
  results: Array<{ result: 'succeeded' | 'retry' | 'failed', endpointId: string }>
}

/** An endpoint with its signing secret in clear: the only answers that show it (creation, rotation). */
export interface EndpointWithSecret {
  endpoint: WebhookEndpoint
  secret: string
}

export interface WebhookService {
  /** With `idempotencyKey`, its response is stored in the transaction that inserts the endpoint. */
  create: (merchantId: string, input: EndpointInput, idempotencyKey?: OwnedKey<EndpointWithSecret>) => Promise<EndpointWithSecret>
  list: (merchantId: string) => Promise<WebhookEndpoint[]>
  get: (merchantId: string, id: string) => Promise<WebhookEndpoint>
  update: (merchantId: string, id: string, patch: EndpointPatch) => Promise<WebhookEndpoint>
  remove: (merchantId: string, id: string) => Promise<void>
  /** A new secret; the previous one keeps signing (both signatures sent) for `overlapSeconds`. */
  /** With `idempotencyKey`, its response is stored in the transaction that writes the new secret. */
  rotateSecret: (merchantId: string, id: string, overlapSeconds?: number, idempotencyKey?: OwnedKey<EndpointWithSecret>) => Promise<EndpointWithSecret>
  deliveries: (merchantId: string, endpointId: string, page: PageRequest) => Promise<Page<WebhookDelivery>>
  retry: (merchantId: string, endpointId: string, deliveryId: string) => Promise<WebhookDelivery>
  /** One batch (at most REPLAY_BATCH_EVENTS events of the range); `startingAfter` resumes after an earlier batch's `next`. */
  replay: (merchantId: string, endpointId: string, range: { from: string, to: string, startingAfter?: string }) => Promise<ReplayBatch>
  /**
   * Sends one `webhook_endpoint.test` event to the endpoint now, through the delivery code (signed like every delivery),
   * and records it as one of its deliveries: `succeeded` on a 2xx, else `failed` (no retries; the endpoint is not
   * disabled by it). A disabled endpoint is refused (endpointDisabledForTest): it receives nothing.
   */
  sendTest: (merchantId: string, endpointId: string) => Promise<WebhookDelivery>
  /** Claims the due deliveries (up to `limit`), sends them at once, records each outcome. */
  /**
   * `signal` (shutdown) abandons the attempts in flight without recording them: their lease runs out
   * and they are made again (at-least-once), by this instance after a restart or by another one.
   */
  deliverDue: (limit: number, signal?: AbortSignal) => Promise<DeliveryPass>
}

export interface WebhookDeps {
  db: Database
  clock: () => number
  log: Logger
  client: WebhookClient
  events: EventFactory
  /** Renders an event's `data` as the API shows it (the edge's representations): deliveries send it. */
  renderData: RenderEventData
  /** WEBHOOK_RETRY_DELAYS in ms: the delays before the 2nd, 3rd, … attempt. */
  retryDelays: readonly number[]
  /** WEBHOOK_TIMEOUT_MS; a claim's lease is this plus a margin. */
  timeoutMs: number
  allowPrivate: boolean
  /** Seals endpoint secrets at rest (ENCRYPTION_KEYS). */
  secrets: SecretBox
  lookup?: Lookup
  random?: () => number
}

/** A claimed delivery's lease beyond the attempt's time-out (recording the outcome included). */
const LEASE_MARGIN_MS = 30_000

const defaultLookup: Lookup = async (hostname) => await dnsLookup(hostname, { all: true })

function shortId (id: string): string {
  return id.length <= 64 ? id : `${id.slice(0, 64)}…`
}

/** The version asked for, checked: an unknown one is a 400 listing the supported versions. */
function versionOf (asked: string | undefined): ApiVersion | undefined {
  if (asked !== undefined && !isApiVersion(asked)) throw new UnknownApiVersionError('apiVersion', asked)
  return asked
}

function typesOf (enabledEvents: Array<EventType | '*'> | undefined): EventType[] | null {
  if (enabledEvents === undefined || enabledEvents.includes('*')) return null
  return [...new Set(enabledEvents as EventType[])]
}

export function webhookService (deps: WebhookDeps): WebhookService {
  const nowIso = (): string => new Date(deps.clock()).toISOString()
  const random = deps.random ?? Math.random
  const webhooks = sealedWebhookStore(deps.db.webhooks, deps.secrets)

  async function merchantOf (merchantId: string): Promise<Merchant> {
    const merchant = isGuid(merchantId) ? await deps.db.merchants.get(merchantId.toLowerCase()) : undefined
    if (merchant === undefined) throw new NotFoundError(merchantNotFoundMessage(merchantId))
    return merchant
  }
  const requireMerchant = async (merchantId: string): Promise<string> => (await merchantOf(merchantId)).id

  async function endpointOf (merchantId: string, id: string): Promise<WebhookEndpoint> {
    const owner = await requireMerchant(merchantId)
    const endpoint = isGuid(id) ? await webhooks.getEndpoint(owner, id.toLowerCase()) : undefined
    if (endpoint === undefined) throw new NotFoundError(`The merchant has no webhook endpoint with the id '${shortId(id)}'.`)
    return endpoint
  }

  async function checkUrl (url: string): Promise<void> {
    const problem = webhookUrlProblem(url, deps.allowPrivate)
    if (problem !== undefined) throw new ValidationError({ url: [problem] })
    if (!deps.allowPrivate && await resolvesPrivately(url, deps.lookup ?? defaultLookup)) throw new ValidationError({ url: [privateMessage] })
  }

  /**
   * Read, change, compare-and-set on updatedAt (which the worker's automatic disable moves too), so a
   * PATCH never undoes a disable it did not see; re-applied to the newer endpoint up to 5 times, then 409.
   */
  async function change (
    merchantId: string, id: string, apply: (current: WebhookEndpoint) => WebhookEndpoint, completing?: (updated: WebhookEndpoint) => KeyCompletion
  ): Promise<WebhookEndpoint> {
    for (let attempt = 1; ; attempt++) {
      const current = await endpointOf(merchantId, id)
      const updated = { ...apply(current), updatedAt: new Date(Math.max(deps.clock(), Date.parse(current.updatedAt) + 1)).toISOString() }
      if (await webhooks.updateEndpoint(updated, current.updatedAt, completing?.(updated))) return updated
      if (attempt >= 5) throw new ConflictError('The webhook endpoint kept changing while this change was applied; read it again and retry.')
    }
  }

  /** Sends one claimed delivery and decides what happens next. */
  async function attempt (claim: ClaimedDelivery, signal?: AbortSignal): Promise<AttemptRecord | undefined> {
    const { delivery, event, endpoint } = claim
    const now = deps.clock()
    const sent: SendOutcome | undefined = endpoint.disabled
      ? { receiverStatus: null, delivered: false, gone: false, retryAfterMs: undefined, error: 'the endpoint is disabled', durationMs: 0, responseBody: null }
      : await sendEvent(deps.client, deps.renderData, endpoint, event, now, deps.clock, signal)
    if (sent === undefined) return undefined
    const at = deps.clock()
    const logged: DeliveryAttempt = {
      attempt: delivery.attempts + 1,
      at: new Date(now).toISOString(),
      receiverStatus: sent.receiverStatus,
      durationMs: sent.durationMs,
      error: sent.error,
      responseBody: sent.responseBody
    }
    const base = { deliveryId: delivery.id, endpointId: endpoint.id, leaseUntil: claim.leaseUntil, attempt: logged, now: new Date(at).toISOString(), disabledEvent: deps.events.endpointDisabled }
    if (sent.delivered) return { ...base, outcome: { kind: 'succeeded' } }
    if (endpoint.disabled) return { ...base, outcome: { kind: 'failed' } }
    if (sent.gone) return { ...base, outcome: { kind: 'failed', disable: 'gone' } }
    const delay = nextAttemptDelay(claim.roundAttempt, deps.retryDelays, sent.retryAfterMs, random())
    if (delay !== undefined) return { ...base, outcome: { kind: 'retry', at: at + delay } }
    return { ...base, outcome: { kind: 'failed', disable: 'failing', failingSince: delivery.createdAt } }
  }

  return {
    async create (merchantId, input, idempotencyKey) {
      const merchant = await merchantOf(merchantId)
      const owner = merchant.id
      const apiVersion = versionOf(input.apiVersion) ?? merchant.apiVersion
      await checkUrl(input.url)
      const at = nowIso()
      const secret = newSecret()
      const endpoint: WebhookEndpoint = {
        id: newId(),
        merchantId: owner,
        url: input.url,
        description: input.description ?? null,
        enabledEvents: typesOf(input.enabledEvents),
        secret,
        previousSecret: null,
        previousSecretExpiresAt: null,
        disabled: false,
        disabledReason: null,
        lastSuccessAt: null,
        // Receivers cannot send Api-Version: the endpoint keeps the merchant's version until PATCHed.
        apiVersion,
        createdAt: at,
        updatedAt: at
      }
      const created = { endpoint, secret }
      const completion = idempotencyKey === undefined ? undefined : { ref: idempotencyKey.ref, response: idempotencyKey.respond(created) }
      if (!await webhooks.createEndpoint(endpoint, MAX_ENDPOINTS_PER_MERCHANT, completion)) {
        throw new ValidationError({ url: [`A merchant may have at most ${MAX_ENDPOINTS_PER_MERCHANT} webhook endpoints; delete one first.`] })
      }
      return created
    },
    async list (merchantId) { return await webhooks.listEndpoints(await requireMerchant(merchantId)) },
    get: endpointOf,
    async update (merchantId, id, patch) {
      const apiVersion = versionOf(patch.apiVersion)
      if (patch.url !== undefined) await checkUrl(patch.url)
      return await change(merchantId, id, (current) => {
        const disabled = patch.disabled ?? current.disabled
        return {
          ...current,
          url: patch.url ?? current.url,
          description: patch.description === undefined ? current.description : patch.description,
          enabledEvents: patch.enabledEvents === undefined ? current.enabledEvents : typesOf(patch.enabledEvents),
          disabled,
          disabledReason: disabled ? current.disabledReason ?? 'manual' : null,
          apiVersion: apiVersion ?? current.apiVersion
        }
      })
    },
    async remove (merchantId, id) {
      const endpoint = await endpointOf(merchantId, id)
      await webhooks.deleteEndpoint(endpoint.merchantId, endpoint.id)
    },
    async rotateSecret (merchantId, id, overlapSeconds = ROTATION_OVERLAP_DEFAULT_SECONDS, idempotencyKey) {
      const secret = newSecret()
      // The last answer built is the one stored (a lost compare-and-set builds it again for the newer endpoint).
      let rotated: EndpointWithSecret | undefined
      const endpoint = await change(merchantId, id, (current) => ({
        ...current,
        secret,
        previousSecret: overlapSeconds > 0 ? current.secret : null,
        previousSecretExpiresAt: overlapSeconds > 0 ? new Date(deps.clock() + overlapSeconds * 1000).toISOString() : null
      }), idempotencyKey === undefined
        ? undefined
        : (updated) => ({ ref: idempotencyKey.ref, response: idempotencyKey.respond(rotated = { endpoint: updated, secret }) }))
      return rotated ?? { endpoint, secret }
    },
    async deliveries (merchantId, endpointId, page) {
      const endpoint = await endpointOf(merchantId, endpointId)
      return await webhooks.listDeliveries(endpoint.id, page)
    },
    async retry (merchantId, endpointId, deliveryId) {
      const endpoint = await endpointOf(merchantId, endpointId)
      const now = deps.clock()
      const result = isGuid(deliveryId) ? await webhooks.retryDelivery(endpoint.id, deliveryId.toLowerCase(), now, new Date(now).toISOString()) : { kind: 'not_found' as const }
      if (result.kind === 'not_found') throw new NotFoundError(`The endpoint has no delivery with the id '${shortId(deliveryId)}'.`)
      if (result.kind === 'in_flight') throw new DeliveryInFlightError(Math.max(1, Math.ceil((result.leaseUntil - now) / 1000)))
      return result.delivery
    },
    async replay (merchantId, endpointId, range) {
      const endpoint = await endpointOf(merchantId, endpointId)
      if (Date.parse(range.from) >= Date.parse(range.to)) throw new ValidationError({ to: ['The to field must be later than from.'] })
      let after: { createdAt: string, id: string } | undefined
      if (range.startingAfter !== undefined) {
        const event = isGuid(range.startingAfter) ? await deps.db.events.get(endpoint.merchantId, range.startingAfter.toLowerCase()) : undefined
        if (event === undefined) throw new ValidationError({ startingAfter: ['The merchant has no event with this id: send the nextStartingAfter of the previous answer.'] })
        after = { createdAt: event.createdAt, id: event.id }
      }
      const bounds = { from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString() }
      return await webhooks.replay(endpoint, after === undefined ? bounds : { ...bounds, after }, deps.clock(), REPLAY_BATCH_EVENTS)
    },
    async sendTest (merchantId, endpointId) {
      const endpoint = await endpointOf(merchantId, endpointId)
      if (endpoint.disabled) throw endpointDisabledForTest()
      const now = deps.clock()
      const leaseUntil = now + deps.timeoutMs + LEASE_MARGIN_MS
      const at = new Date(now).toISOString()
      const deliveryId = newId()
      const event = await webhooks.beginTestDelivery(deps.events.endpointTest(endpoint), { id: deliveryId, endpointId: endpoint.id, leaseUntil, at })
      if (event === undefined) throw new NotFoundError(`The merchant has no webhook endpoint with the id '${shortId(endpointId)}'.`)
      const sent = await sendEvent(deps.client, deps.renderData, endpoint, event, now, deps.clock)
      const logged: DeliveryAttempt = {
        attempt: 1,
        at,
        receiverStatus: sent?.receiverStatus ?? null,
        durationMs: sent?.durationMs ?? 0,
        error: sent === undefined ? 'the attempt was abandoned' : sent.error,
        responseBody: sent?.responseBody ?? null
      }
      const status = sent?.delivered === true ? 'succeeded' : 'failed'
      const recordedAt = new Date(deps.clock()).toISOString()
      // Failed is final: a test is not retried, and its failure (even a 410) never disables the endpoint.
      const recorded = await webhooks.recordAttempt({ deliveryId, endpointId: endpoint.id, leaseUntil, attempt: logged, now: recordedAt, outcome: { kind: status } })
      if (!recorded) deps.log.warn({ deliveryId, endpointId: endpoint.id }, 'webhook test attempt finished after its lease; its outcome was not recorded')
      return {
        id: deliveryId,
        endpointId: endpoint.id,
        eventId: event.id,
        eventType: event.type,
        merchantId: endpoint.merchantId,
        status,
        attempts: 1,
        nextAttemptAt: null,
        log: [logged],
        createdAt: at,
        updatedAt: recordedAt
      }
    },
    async deliverDue (limit, signal) {
      const now = deps.clock()
      const claimed = await webhooks.claimDue(now, now + deps.timeoutMs + LEASE_MARGIN_MS, limit)
      const results: DeliveryPass['results'] = []
      await Promise.all(claimed.map(async (claim) => {
        const record = await attempt(claim, signal)
        if (record === undefined) return
        const recorded = await webhooks.recordAttempt(record)
        const result = record.outcome.kind
        results.push({ result, endpointId: claim.endpoint.id })
        if (!recorded) deps.log.warn({ deliveryId: claim.delivery.id }, 'webhook attempt finished after its lease; its outcome was not recorded')
        if (result === 'failed') {
          deps.log.warn({ deliveryId: claim.delivery.id, endpointId: claim.endpoint.id, eventId: claim.event.id, receiverStatus: record.attempt.receiverStatus, error: record.attempt.error }, 'webhook delivery failed for good')
        }
      }))
      return { attempted: claimed.length, results }
    }
  }
}
