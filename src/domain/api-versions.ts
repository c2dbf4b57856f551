/**
 * API versions (issue 28), named by the date they were released. A merchant is pinned to the
 * version current when it was created, a webhook endpoint to its merchant's version when it was
 * created; a request may ask for another one with the `Api-Version` header. The service renders
 * the newest representation and a breaking change carries its own way back (a "version change",
 * Stripe's design): to answer in an older version, the changes released after it are undone,
 * newest first. Additive changes (a new field, endpoint, event type or enum value a client is
 * told to expect) need no version.
 */
import type { DomainEvent, RenderEventData } from './events'
import { ValidationError } from './errors'

/** Every supported version, oldest first; the last is the current one. */
export const API_VERSIONS = ['2026-11-01', '2026-11-25'] as const
export type ApiVersion = typeof API_VERSIONS[number]

/** The version before versioning existed: merchants and endpoints created before it are pinned to it. */
export const FIRST_API_VERSION: ApiVersion = '2026-11-01'
/** New merchants are pinned to it; requests without a pinned merchant or a header are answered in it. */
export const LATEST_API_VERSION: ApiVersion = '2026-11-25'

export function isApiVersion (value: unknown): value is ApiVersion {
  return typeof value === 'string' && (API_VERSIONS as readonly string[]).includes(value)
}

/** An `Api-Version` (header or field) naming no supported version; a 400 listing the supported ones. */
export class UnknownApiVersionError extends ValidationError {
  constructor (field: string, given: string) {
    super({ [field]: [unknownVersionMessage(given)] })
  }
}

export function unknownVersionMessage (given: string): string {
  const shown = given.length <= 32 ? `'${given}'` : 'the given value'
  return `${shown} is not a supported API version; supported versions: ${API_VERSIONS.join(', ')} (the current one is ${LATEST_API_VERSION}).`
}

/** The webhook delivery body as the newest version sends it: the Event resource. */
export type EventBody = Record<string, unknown>

/**
 * One breaking change: the version that introduced it and how to render the newer shape back to
 * the version before it. Only the hooks a change needs are given.
 */
export interface VersionChange {
  version: ApiVersion
  description: string
  /** The webhook delivery body of `event`, as the previous version sent it, from the newer one (its `data` rendered). */
  downgradeEventBody?: (body: EventBody, event: DomainEvent) => EventBody
}

/** The breaking changes, newest first. */
export const VERSION_CHANGES: readonly VersionChange[] = [
  {
    version: '2026-11-25',
    description: 'Webhook deliveries send the Event resource ({id, type, createdAt, sequence, resource, data}) instead of {type, timestamp, data, sequence}.',
    downgradeEventBody: (body, event) => ({ type: event.type, timestamp: event.createdAt, data: body.data, sequence: event.sequence })
  }
]

/** The Event resource (GET /api/events/{id}), the newest delivery body; `renderData` renders its `data` (the edge's). */
export function eventResource (event: DomainEvent, renderData: RenderEventData): EventBody {
  return {
    id: event.id,
    type: event.type,
    createdAt: event.createdAt,
    sequence: event.sequence,
    resource: { type: event.resourceType, id: event.resourceId },
    data: renderData(event)
  }
}

/** The changes to undo to answer in `version`: those released after it, newest first. */
export function changesSince (version: ApiVersion, changes: readonly VersionChange[] = VERSION_CHANGES): VersionChange[] {
  return changes.filter((change) => change.version > version)
}

/** The webhook delivery body of `event` in `version`. */
export function eventBodyIn (event: DomainEvent, version: ApiVersion, renderData: RenderEventData, changes: readonly VersionChange[] = VERSION_CHANGES): EventBody {
  let body = eventResource(event, renderData)
  for (const change of changesSince(version, changes)) {
    if (change.downgradeEventBody !== undefined) body = change.downgradeEventBody(body, event)
  }
  return body
}

/**
 * API_VERSION_SUNSETS: `version=date` pairs, comma separated, naming the versions being retired and
 * the day each stops being served. Requests answered in one carry `Deprecation` (RFC 9745) and
 * `Sunset` (RFC 8594). Undefined when malformed (an unknown version, an unreadable date, the current version).
 */
export function parseSunsets (text: string): Map<ApiVersion, Date> | undefined {
  const sunsets = new Map<ApiVersion, Date>()
  for (const part of text.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const [version, date] = part.split('=').map((p) => p.trim())
    if (!isApiVersion(version) || version === LATEST_API_VERSION || date === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined
    const at = new Date(`${date}T00:00:00Z`)
    if (Number.isNaN(at.getTime())) return undefined
    sunsets.set(version, at)
  }
  return sunsets
}

/**
 * The headers of a response answered in a retired version: `Deprecation` (RFC 9745, a structured
 * date: `@` + epoch seconds of the day the version was superseded — the next version's release)
 * and `Sunset` (RFC 8594, an HTTP date).
 */
export function retirementHeaders (version: ApiVersion, sunset: Date): { deprecation: string, sunset: string } {
  const next = API_VERSIONS[API_VERSIONS.indexOf(version) + 1] ?? LATEST_API_VERSION
  return { deprecation: `@${Date.parse(`${next}T00:00:00Z`) / 1000}`, sunset: sunset.toUTCString() }
}
