import fp from 'fastify-plugin'
import { headerCount } from './http/request-hygiene'
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { isRefusal, IdempotencyKeyInUseError, IdempotencyKeyReusedError, ValidationError } from '../src/domain/errors'
import { canonicalJson } from './http/canonical-json'
import type { IdempotencyKeyRef, IdempotencyRecord, ResourceCreation, StoredResponse } from '../src/store/types'
import type { OwnedKey, ResponseOrigin } from '../src/services/keys'
import { API_VERSION_HEADER } from './api-version'
import { isSealed } from '../src/secrets/encryption'
import { checkHook } from './http/checks'

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key'
const VALID_KEY = /^[\x20-\x7E]{1,255}$/

/** A key the current request claimed: new, or resumed from its recovery point. */
export interface ClaimedKey {
  ref: IdempotencyKeyRef
  record: IdempotencyRecord
}

export type Claim =
  /** `created`: the claim wrote the resource it was given with the key (create-under-key). */
  | { kind: 'owned', key: ClaimedKey, created: boolean }
  | { kind: 'replay', response: StoredResponse }

/** A create under the request's Idempotency-Key (when it has one): see `handle`. */
export interface KeyedCreate<T> {
  /**
   * Creates (or, under a resumed key, finishes) the resource. With a key, it stores `key.respond(resource)`
   * on the key in the transaction that creates (or, with `creation`, completes) the resource.
   */
  work: (key: OwnedKey<T> | undefined) => Promise<T>
  /** The response to the resource, sent and stored for replays; `origin`: the key's path (else the request's) and the request id. */
  respond: (resource: T, origin: ResponseOrigin) => StoredResponse
  /**
   * Create-under-key: the resource (built before the claim) and its first write, committed with the
   * key's claim (one transaction instead of two). When the claim wrote it, `work` gets it as
   * `key.created`; otherwise (no key, or a key whose earlier attempt created a resource) it does not.
   */
  creating?: { resource: T, creation: ResourceCreation }
  /**
   * The response carries a secret (a new API key, a webhook signing secret): the copy stored on the key for
   * replays is sealed like every other stored secret (AES-256-GCM under ENCRYPTION_KEYS, bound to the key),
   * never kept in clear; a replay opens it. It is forgotten with the key when the key expires.
   */
  sealed?: boolean
  /**
   * `work` does not store the response on the key (no store method of the area takes a completion): it is
   * stored right after `work` returns. Only for operations that are safe to run again (a retry after a
   * crash between the two commits runs `work` again): making a delivery due, scheduling a replay batch, a cancel.
   */
  storeAfterWork?: boolean
}

export interface IdempotencyService {
  /** The request's Idempotency-Key, or undefined; a malformed key is a validation error. */
  keyOf: (request: FastifyRequest) => string | undefined
  /**
   * Claims the key for this request; throws the 409 problems for reuse and concurrent use. With
   * `creation`, a claim that owns a key without a resource writes it in the claim's transaction.
   */
  claim: (request: FastifyRequest, key: string, creation?: ResourceCreation) => Promise<Claim>
  /** Sends a stored response, marked as a replay. */
  replay: (reply: FastifyReply, response: StoredResponse) => FastifyReply
  /**
   * Runs `create.work` under the request's Idempotency-Key (when it has one) and sends the
   * response to what it returns: replays a finished key, refuses reuse and concurrent use, and
   * on failure frees the key — forgotten when nothing was created (a client error such as a
   * conflict), unlocked at its recovery point otherwise. The response is built once: the one
   * stored on the key is the one sent.
   */
  handle: <T>(request: FastifyRequest, reply: FastifyReply, create: KeyedCreate<T>) => Promise<FastifyReply>
}

declare module 'fastify' {
  interface FastifyInstance {
    idempotency: IdempotencyService
  }
}

/**
 * Whose key it is: the merchant (whichever of its API keys sent it, so a retry after a
 * key rotation still replays) or the admin. Two merchants using the same key get two resources.
 */
function clientScope (request: FastifyRequest): string {
  // Undefined without the auth plugin (a bare instance); null for an anonymous request.
  const principal = request.principal ?? null
  if (principal === null) return 'anonymous'
  return principal.kind === 'merchant' ? `merchant:${principal.merchantId}` : 'admin'
}

/**
 * The matched route pattern, never the raw URL: `/api/pay%6Dents` and `/%61pi/payments`
 * reach the same route and must find the same key.
 */
function pathOf (request: FastifyRequest): string {
  const [path = request.url] = request.url.split('?')
  return request.routeOptions.url ?? path
}

/**
 * What a key's fingerprint covers besides method and path: the body and, for routes with path
 * parameters (POST /api/payments/{id}/refunds), those parameters too, so one key reused on another
 * payment is never taken for the same request even when keys are scoped by route pattern.
 * Without parameters it is the body alone (fingerprints of existing keys are unchanged).
 */
function fingerprintedContent (request: FastifyRequest): unknown {
  const params = request.params as Record<string, string> | undefined
  return params === undefined || Object.keys(params).length === 0 ? request.body : { params, body: request.body }
}

export function requestFingerprint (method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method}\n${path}\n${canonicalJson(body)}`).digest('hex')
}

/**
 * The IETF draft (draft-ietf-httpapi-idempotency-key-header) makes the key a structured-field string,
 * `"8e03978e-40d5-43e8-bc93-6894a57f9324"`; most clients send it bare. Both are accepted and name the
 * same key: the quoted form is unquoted (with its `\"` and `\\` escapes) before use.
 */
export function unquoteKey (value: string): string {
  const quoted = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*)"$/.exec(value)
  const content = quoted?.[1]
  return content === undefined ? value : content.replace(/\\(["\\])/g, '$1')
}

/** What a sealed replay is bound to (associated data): the key's identity, so a sealed body copied onto another key does not open. */
function sealedRecordId (ref: IdempotencyKeyRef): string {
  return `idempotency:${ref.scope}\n${ref.method}\n${ref.path}\n${ref.key}`
}

/** Sends a stored response exactly as stored. */
export function sendStored (reply: FastifyReply, response: StoredResponse): FastifyReply {
  return reply.code(response.statusCode).headers(response.headers).send(response.body)
}

/**
 * Idempotency-Key handling shared by every area that creates things, backed by
 * the same database as the resources (never an in-memory map).
 */
export default fp(async (app) => {
  const lockMs = app.config.IDEMPOTENCY_LOCK_SECONDS * 1000
  const retentionMs = app.config.IDEMPOTENCY_TTL_HOURS * 3600 * 1000

  // Not a plugin dependency: bare instances (tests) without the secrets plugin never seal.
  const box = () => {
    if (!app.hasDecorator('secretBox')) throw new Error('sealed idempotent responses need the secrets plugin')
    return app.secretBox
  }
  /** A response body as stored: sealed for a key whose response carries a secret. */
  const sealedFor = (ref: IdempotencyKeyRef, response: StoredResponse): StoredResponse =>
    ({ ...response, body: box().seal(response.body, sealedRecordId(ref)) })
  /** A stored response as sent: a sealed body is opened (JSON bodies never start with the sealed prefix). */
  const opened = (response: StoredResponse, ref: IdempotencyKeyRef): StoredResponse =>
    isSealed(response.body) ? { ...response, body: box().open(response.body, sealedRecordId(ref)) } : response

  const service: IdempotencyService = {
    keyOf (request) {
      const raw = request.headers[IDEMPOTENCY_KEY_HEADER]
      if (raw === undefined) return undefined
      // Node joins repeated fields with ", ": two keys would silently become a third one.
      if (headerCount(request.raw.rawHeaders, IDEMPOTENCY_KEY_HEADER) > 1) {
        throw new ValidationError({ 'Idempotency-Key': ['The Idempotency-Key header was sent more than once; send exactly one key.'] })
      }
      const value = typeof raw === 'string' ? unquoteKey(raw) : raw
      if (typeof value !== 'string' || !VALID_KEY.test(value)) {
        throw new ValidationError({
          'Idempotency-Key': ['The Idempotency-Key header must be 1-255 printable ASCII characters (a UUID is a good choice).']
        })
      }
      return value
    },

    async claim (request, key, creation) {
      const workerHoldSeconds = Math.ceil(app.config.GATEWAY_TIMEOUT_MS / 1000) + 1
      const ref: IdempotencyKeyRef = { scope: clientScope(request), method: request.method, path: pathOf(request), key }
      const now = app.clock()
      const result = await app.db.idempotency.claim({
        ref,
        fingerprint: requestFingerprint(ref.method, ref.path, fingerprintedContent(request)),
        now,
        lockUntil: now + lockMs,
        expiresAt: now + retentionMs,
        owner: app.instance.id,
        takeoverBefore: app.instance.takeoverBefore()
      }, creation)
      // A claim that wrote its resource is, for the metric, the new or resumed key it was.
      app.metrics.idempotencyClaim(result.kind === 'created' ? (result.takenOverFrom !== undefined || result.record.createdAt < now ? 'resumed' : 'new') : result.kind)
      if ((result.kind === 'resumed' || result.kind === 'created') && result.takenOverFrom !== undefined) {
        request.log.info({ stoppedInstance: result.takenOverFrom, recoveryPoint: result.record.recoveryPoint }, 'took over an idempotency key from a stopped instance')
      }
      switch (result.kind) {
        case 'replay': return { kind: 'replay', response: opened(result.record.response, ref) }
        case 'mismatch':
          throw new IdempotencyKeyReusedError('This Idempotency-Key was already used with a different request body; use a new key for a new request.')
        case 'in_flight':
          // A request's lock: poll. The recovery worker's lease (no holder): it holds the key for one gateway call at most, then finishes or frees it.
          throw new IdempotencyKeyInUseError('A request with this Idempotency-Key is still being processed; retry after it completes.',
            result.record.lockedBy === null ? workerHoldSeconds : 1)
        default: return { kind: 'owned', key: { ref, record: result.record }, created: result.kind === 'created' }
      }
    },

    replay (reply, response) {
      return sendStored(reply.header('idempotent-replayed', 'true'), response)
    },

    async handle (request, reply, { work, respond, creating, sealed = false, storeAfterWork = false }) {
      const idempotencyKey = service.keyOf(request)
      if (idempotencyKey === undefined) {
        const [path = request.url] = request.url.split('?')
        return sendStored(reply, respond(await work(undefined), { path, traceId: request.id }))
      }
      const claim = await service.claim(request, idempotencyKey, creating?.creation)
      if (claim.kind === 'replay') return service.replay(reply, claim.response)
      const { ref, record } = claim.key
      const origin = { path: ref.path, traceId: request.id }
      // The response work stored on the key last: sent as it is when work returns that resource.
      let stored: { resource: unknown, response: StoredResponse } | undefined
      const key: OwnedKey<Parameters<typeof respond>[0]> = {
        ref,
        resourceId: record.resourceId,
        ...(claim.created && creating !== undefined ? { created: creating.resource } : {}),
        respond: (resource: Parameters<typeof respond>[0]) => {
          // The version it is rendered in travels with it: a replay says so, whatever Api-Version the replaying request names.
          const response = respond(resource, origin)
          stored = { resource, response: { ...response, headers: { ...response.headers, [API_VERSION_HEADER]: request.apiVersion } } }
          // Sent in clear, stored sealed when it carries a secret.
          return sealed ? sealedFor(ref, stored.response) : stored.response
        }
      }
      try {
        const resource = await work(key)
        if (storeAfterWork && stored === undefined) await app.db.idempotency.finish(ref, key.respond(resource))
        return sendStored(reply, stored !== undefined && stored.resource === resource ? stored.response : respond(resource, origin))
      } catch (err) {
        const nothingCreated = record.recoveryPoint === 'started' && isRefusal(err)
        // Only our own lock: had another instance taken the key over meanwhile, it is that request's now.
        const lockedUntil = record.lockedUntil ?? undefined
        await (nothingCreated ? app.db.idempotency.abandon(ref, lockedUntil) : app.db.idempotency.release(ref, lockedUntil)).catch((cleanupError: unknown) => {
          request.log.error({ err: cleanupError }, 'could not free an idempotency key')
        })
        throw err
      }
    }
  }
  app.decorate('idempotency', service)
  // A malformed or repeated key is a 400 with the service's own message, before the schema (which bounds its length) judges it.
  app.addHook('preValidation', checkHook((request) => {
    if (request.method === 'POST' && !request.is404 && request.headers[IDEMPOTENCY_KEY_HEADER] !== undefined) service.keyOf(request)
  }))
}, { name: 'idempotency', dependencies: ['config', 'database', 'clock', 'metrics', 'instance'], fastify: '5.x' })
