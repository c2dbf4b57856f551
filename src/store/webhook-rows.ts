import type { ApiVersion } from '../domain/api-versions'
import type { DomainEvent, EventDataFormat, EventResourceType, EventType, NewEvent } from '../domain/events'
import type { DeliveryAttempt, DeliveryStatus, WebhookDelivery, WebhookEndpoint } from '../domain/webhooks'

/** Row shapes and mappers of the events and webhooks tables, shared by SQLite and PostgreSQL. */
export interface EventRow {
  id: string
  merchant_id: string
  type: string
  resource_type: string
  resource_id: string
  sequence: number | string
  data: string
  created_at: string
  data_format: string
}

export function eventFromRow (row: EventRow): DomainEvent {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    type: row.type as EventType,
    resourceType: row.resource_type as EventResourceType,
    resourceId: row.resource_id,
    sequence: Number(row.sequence),
    data: JSON.parse(row.data) as Record<string, unknown>,
    dataFormat: row.data_format as EventDataFormat,
    createdAt: row.created_at
  }
}

export const EVENT_COLUMNS = ['id', 'merchant_id', 'type', 'resource_type', 'resource_id', 'sequence', 'data', 'created_at', 'data_format'] as const

/** The event as stored under `sequence` (its JSON text is the row's, not the event's). */
export function numberedEvent (event: NewEvent, sequence: number): DomainEvent {
  const { dataJson: _json, ...numbered } = event
  return { ...numbered, sequence }
}

export function eventValues (event: NewEvent, sequence: number): unknown[] {
  return [event.id, event.merchantId, event.type, event.resourceType, event.resourceId, sequence, event.dataJson ?? JSON.stringify(event.data), event.createdAt, event.dataFormat]
}

export interface EndpointRow {
  id: string
  merchant_id: string
  url: string
  description: string | null
  enabled_events: string | null
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: string | null
  disabled_reason: string | null
  last_success_at: string | null
  api_version: string
  created_at: string
  updated_at: string
}

export const ENDPOINT_COLUMNS = ['id', 'merchant_id', 'url', 'description', 'enabled_events', 'secret', 'previous_secret',
  'previous_secret_expires_at', 'disabled_reason', 'last_success_at', 'api_version', 'created_at', 'updated_at'] as const

export function endpointFromRow (row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    url: row.url,
    description: row.description,
    enabledEvents: row.enabled_events === null ? null : JSON.parse(row.enabled_events) as EventType[],
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    disabled: row.disabled_reason !== null,
    disabledReason: row.disabled_reason as WebhookEndpoint['disabledReason'],
    lastSuccessAt: row.last_success_at,
    apiVersion: row.api_version as ApiVersion,
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

/** The columns a client changes (PATCH, rotation); the worker's last_success_at is never written from a stale copy. */
export const ENDPOINT_MUTABLE_COLUMNS = ['url', 'description', 'enabled_events', 'secret', 'previous_secret', 'previous_secret_expires_at', 'disabled_reason', 'api_version', 'updated_at'] as const

export function endpointMutableValues (endpoint: WebhookEndpoint): unknown[] {
  const all = endpointValues(endpoint)
  return ENDPOINT_MUTABLE_COLUMNS.map((column) => all[ENDPOINT_COLUMNS.indexOf(column)])
}

export function endpointValues (endpoint: WebhookEndpoint): unknown[] {
  return [endpoint.id, endpoint.merchantId, endpoint.url, endpoint.description,
    endpoint.enabledEvents === null ? null : JSON.stringify(endpoint.enabledEvents), endpoint.secret, endpoint.previousSecret,
    endpoint.previousSecretExpiresAt, endpoint.disabled ? endpoint.disabledReason ?? 'manual' : null, endpoint.lastSuccessAt,
    endpoint.apiVersion, endpoint.createdAt, endpoint.updatedAt]
}

export interface DeliveryRow {
  id: string
  endpoint_id: string
  event_id: string
  event_type: string
  merchant_id: string
  status: string
  attempts: number | string
  round_start: number | string
  next_attempt_at: number | string | null
  lease_until: number | string | null
  attempt_log: string
  created_at: string
  updated_at: string
}

export function deliveryFromRow (row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type as EventType,
    merchantId: row.merchant_id,
    status: row.status as DeliveryStatus,
    attempts: Number(row.attempts),
    nextAttemptAt: row.status === 'pending' && row.next_attempt_at !== null ? Number(row.next_attempt_at) : null,
    log: JSON.parse(row.attempt_log) as DeliveryAttempt[],
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

/** A claimed delivery joined with its event and endpoint (one row per claim). */
export type ClaimRow = DeliveryRow & { e_sequence: number | string, e_data: string, e_data_format: string, e_created_at: string, e_resource_type: string, e_resource_id: string } &
{ [K in keyof EndpointRow as `ep_${K}`]: EndpointRow[K] }

export const CLAIM_SELECT = `
  SELECT d.*, e.sequence AS e_sequence, e.data AS e_data, e.data_format AS e_data_format, e.created_at AS e_created_at, e.resource_type AS e_resource_type,
    e.resource_id AS e_resource_id, ${ENDPOINT_COLUMNS.map((c) => `p.${c} AS ep_${c}`).join(', ')}
  FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhook_endpoints p ON p.id = d.endpoint_id`

export function claimFromRow (row: ClaimRow): { delivery: WebhookDelivery, event: DomainEvent, endpoint: WebhookEndpoint, roundAttempt: number, leaseUntil: number } {
  const endpoint = Object.fromEntries(ENDPOINT_COLUMNS.map((c) => [c, row[`ep_${c}`]])) as unknown as EndpointRow
  return {
    delivery: deliveryFromRow(row),
    event: eventFromRow({
      id: row.event_id,
      merchant_id: row.merchant_id,
      type: row.event_type,
      resource_type: row.e_resource_type,
      resource_id: row.e_resource_id,
      sequence: row.e_sequence,
      data: row.e_data,
      created_at: row.e_created_at,
      data_format: row.e_data_format
    }),
    endpoint: endpointFromRow(endpoint),
    roundAttempt: Number(row.attempts) - Number(row.round_start) + 1,
    leaseUntil: Number(row.lease_until)
  }
}
