import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import type { ApiVersion, Event, LegacyWebhookEvent } from './types.js'

export { WebhookVerificationError }

/** The request's headers: a Fetch `Headers`, or Node's `IncomingHttpHeaders` (names in lower case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

/** The delivery header naming the API version its body is rendered in (the endpoint's `apiVersion`). */
export const WEBHOOK_API_VERSION_HEADER = 'webhook-api-version'

// A Record so that a version added to the document fails to compile here until its body is handled.
const BODY_SHAPES: Record<ApiVersion, (body: unknown) => boolean> = {
  '2026-11-01': isLegacyEvent,
  '2026-11-25': isEvent
}
const API_VERSIONS = Object.keys(BODY_SHAPES) as ApiVersion[]
const LATEST_API_VERSION: ApiVersion = '2026-11-25'

export interface VerifyOptions<Version extends ApiVersion = ApiVersion> {
  /**
   * The version to read the body in when the delivery does not name one in `webhook-api-version` (default the current
   * version, 2026-11-25). When the delivery names another, it is refused: the return type promised this one.
   */
  apiVersion?: Version
  /** How far `webhook-timestamp` may be from now, in seconds, either way (default 300, Standard Webhooks' five minutes). */
  toleranceSeconds?: number
  /** The time to judge the timestamp against (default now): for tests. */
  now?: Date
}

/**
 * A verified delivery's event in `Version`, carrying that version as `apiVersion`: not enumerable (like `lastResponse`),
 * so JSON and deep equality leave it out and the event stays the body as sent.
 */
export type WebhookEventIn<Version extends ApiVersion> = (Version extends '2026-11-01' ? LegacyWebhookEvent : Event) & { readonly apiVersion: Version }

/** A verified delivery's event in whichever version the delivery names: narrow on `apiVersion`, then on `type`. */
export type WebhookEvent = { [Version in ApiVersion]: WebhookEventIn<Version> }[ApiVersion]

/** The raw body exactly as received: a string, or the bytes (a Node `Buffer`, a `Uint8Array`) decoded as UTF-8. */
export type WebhookPayload = string | Uint8Array

export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300

/**
 * Checks a delivery's Standard Webhooks signature (`webhook-id`, `webhook-timestamp` within
 * `toleranceSeconds`, default five minutes, `webhook-signature` under the endpoint's `whsec_…` secret) over the
 * raw body, exactly as received (a string, or the bytes: `Buffer`, `Uint8Array`), and returns the event it carries,
 * typed by the API version the delivery names (`webhook-api-version`, the endpoint's; without one, `options.apiVersion`,
 * default 2026-11-25): the Event resource (2026-11-25) or `{ type, timestamp, data, sequence }` (2026-11-01), with that
 * version as `apiVersion`. Throws `WebhookVerificationError` otherwise, and when the body is not of that version; answer
 * it with a 400 and never act on the body. Narrow on `apiVersion` for what differs between versions, and on `type`;
 * new event types may arrive without a new version, so keep a default branch.
 */
export function verifyWebhook (payload: WebhookPayload, headers: WebhookHeaders, secret: string, options: VerifyOptions<'2026-11-01'> & { apiVersion: '2026-11-01' }): WebhookEventIn<'2026-11-01'>
export function verifyWebhook (payload: WebhookPayload, headers: WebhookHeaders, secret: string, options: VerifyOptions<'2026-11-25'> & { apiVersion: '2026-11-25' }): WebhookEventIn<'2026-11-25'>
export function verifyWebhook (payload: WebhookPayload, headers: WebhookHeaders, secret: string, options?: VerifyOptions): WebhookEvent
export function verifyWebhook (payload: WebhookPayload, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): WebhookEvent {
  const text = textOf(payload)
  const body = verifySignature(text, signatureHeaders(headers), secret, options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS, options.now ?? new Date())
  const version = deliveryVersion(headerValue(headers, WEBHOOK_API_VERSION_HEADER), options.apiVersion)
  if (BODY_SHAPES[version](body)) {
    // The body stays as sent: were a version ever to add its own `apiVersion` member, it would be left alone.
    if (!Object.prototype.hasOwnProperty.call(body, 'apiVersion')) Object.defineProperty(body, 'apiVersion', { value: version, enumerable: false })
    return body as WebhookEvent
  }
  throw new WebhookVerificationError(`the body is not an event of API version ${version}: check the endpoint's apiVersion`)
}

/** The version the delivery names, else the caller's; a delivery naming another version than the caller asked for is refused. */
function deliveryVersion (named: string, asked: ApiVersion | undefined): ApiVersion {
  if (named === '') return asked ?? LATEST_API_VERSION
  if (!(API_VERSIONS as string[]).includes(named)) {
    throw new WebhookVerificationError(`the delivery is of API version ${named.slice(0, 32)} (${WEBHOOK_API_VERSION_HEADER}), unknown to this SDK: upgrade it, or set the endpoint's apiVersion to one it knows (${API_VERSIONS.join(', ')})`)
  }
  const version = named as ApiVersion
  if (asked !== undefined && asked !== version) {
    throw new WebhookVerificationError(`the delivery is of API version ${version} (${WEBHOOK_API_VERSION_HEADER}), not API version ${asked} as asked: check the endpoint's apiVersion, or leave apiVersion out to take the delivery's`)
  }
  return version
}

/**
 * Standard Webhooks' check (as the standardwebhooks package, whose signing it uses) with a tolerance of your choosing:
 * the timestamp within `toleranceSeconds` of `now`, then one `v1,` signature of `id.timestamp.body` matching.
 */
function verifySignature (payload: string, headers: Record<string, string>, secret: string, toleranceSeconds: number, now: Date): unknown {
  const id = headers['webhook-id'] ?? ''
  const timestamp = headers['webhook-timestamp'] ?? ''
  if (id === '' || timestamp === '' || (headers['webhook-signature'] ?? '') === '') throw new WebhookVerificationError('Missing required headers')
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('Invalid Signature Headers')
  const seconds = Number(timestamp)
  const nowSeconds = Math.floor(now.getTime() / 1000)
  if (nowSeconds - seconds > toleranceSeconds) throw new WebhookVerificationError(`Message timestamp too old (more than ${toleranceSeconds} s)`)
  if (seconds - nowSeconds > toleranceSeconds) throw new WebhookVerificationError(`Message timestamp too new (more than ${toleranceSeconds} s ahead)`)
  const expected = new Webhook(secret).sign(id, new Date(seconds * 1000), payload).split(',')[1] ?? ''
  const matches = (headers['webhook-signature'] ?? '').split(' ').some((signed) => {
    const [version, signature] = signed.split(',')
    return version === 'v1' && signature !== undefined && constantTimeEqual(signature, expected)
  })
  if (!matches) throw new WebhookVerificationError('No matching signature found')
  try {
    return JSON.parse(payload) as unknown
  } catch {
    throw new WebhookVerificationError('The signed body is not JSON')
  }
}

function textOf (payload: WebhookPayload): string {
  if (typeof payload === 'string') return payload
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(payload)
  } catch {
    throw new WebhookVerificationError('The body is not UTF-8')
  }
}

function constantTimeEqual (a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

export interface TestWebhookOptions {
  /** `webhook-id` (default a new UUID; the service sends the event's id). */
  id?: string
  /** `webhook-timestamp` (default now). */
  timestamp?: Date
  /** `webhook-api-version`: the version `payload` is rendered in (default the current version, 2026-11-25). */
  apiVersion?: ApiVersion
}

/** The headers of a delivery, as `signTestWebhook` makes them. */
export type SignedTestWebhookHeaders = {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
  'webhook-api-version': ApiVersion
}

/**
 * The four headers the service would send with `payload`, signed under `secret` exactly as it signs deliveries
 * (stripe-node's `generateTestHeaderString`): for testing your receiver without the service.
 */
export function signTestWebhook (payload: WebhookPayload, secret: string, options: TestWebhookOptions = {}): SignedTestWebhookHeaders {
  const id = options.id ?? globalThis.crypto.randomUUID()
  const at = options.timestamp ?? new Date()
  const text = textOf(payload)
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, text),
    'webhook-api-version': options.apiVersion ?? LATEST_API_VERSION
  }
}

function headerValue (headers: WebhookHeaders, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : headers[name]
  return (Array.isArray(value) ? value.join(' ') : value) ?? ''
}

function signatureHeaders (headers: WebhookHeaders): Record<string, string> {
  const names = ['webhook-id', 'webhook-timestamp', 'webhook-signature']
  return Object.fromEntries(names.map((name) => [name, headerValue(headers, name)]))
}

function isEventLike (body: unknown): body is { type: string, sequence: number, data: object } {
  return typeof body === 'object' && body !== null &&
    'type' in body && typeof body.type === 'string' &&
    'sequence' in body && typeof body.sequence === 'number' &&
    'data' in body && typeof body.data === 'object' && body.data !== null
}

function isEvent (body: unknown): body is Event {
  return isEventLike(body) && 'id' in body && typeof body.id === 'string' &&
    'resource' in body && typeof body.resource === 'object' && body.resource !== null
}

function isLegacyEvent (body: unknown): body is LegacyWebhookEvent {
  return isEventLike(body) && 'timestamp' in body && typeof body.timestamp === 'string'
}
