import type { Principal } from './api-keys'

/**
 * The audit log (issue 43): who changed what, when, from where, and how it ended. Pure types and functions.
 * An entry is written in the same transaction as the change it records and is never changed or deleted
 * (the table refuses both). It never holds a secret, a password, a card number or a body.
 */
export const ACTOR_TYPES = ['api_key', 'user', 'operator', 'system'] as const
export type ActorType = typeof ACTOR_TYPES[number]

export interface AuditActor {
  type: ActorType
  /** The API key's id, the user's id, the operator credential's id, or the system part that acted. */
  id: string
  /** For people: the user's email; for keys: the key's name and prefix; for the operator: `operator`. */
  label: string
}

/**
 * - `succeeded`: the change was made;
 * - `failed`: the change was made and its result is a failure (a declined payment, a failed refund);
 * - `denied`: refused by the caller's role; nothing changed.
 */
export const AUDIT_OUTCOMES = ['succeeded', 'failed', 'denied'] as const
export type AuditOutcome = typeof AUDIT_OUTCOMES[number]

export interface AuditEntry {
  id: string
  /** ISO 8601. */
  at: string
  /** The merchant the change belongs to; null for the operator's own changes (none yet). */
  merchantId: string | null
  actor: AuditActor
  /** `<resource type>.<verb>`, e.g. `payment.refund`. */
  action: string
  resource: { type: string, id: string | null }
  requestId: string | null
  ip: string | null
  userAgent: string | null
  outcome: AuditOutcome
}

/** What a request knows before its change: the entry less what the change decides (resource id, outcome, merchant). */
export interface AuditDraft {
  actor: AuditActor
  action: string
  merchantId: string | null
  /** The resource when the request names it (`/payments/{id}/refunds`); otherwise the change names it (a new resource's id). */
  resourceId?: string
  requestId: string | null
  ip: string | null
  userAgent: string | null
}

const LONGEST_USER_AGENT = 256

export function actorOf (principal: Principal): AuditActor {
  if (principal.kind === 'admin') return { type: 'operator', id: principal.credentialId, label: 'operator' }
  if (principal.user !== undefined) return { type: 'user', id: principal.user.id, label: principal.user.email }
  return { type: 'api_key', id: principal.credentialId, label: principal.keyLabel ?? 'API key' }
}

/** The resource type an action names (`payment.refund` → `payment`). */
export function resourceTypeOf (action: string): string {
  const dot = action.indexOf('.')
  return dot === -1 ? action : action.slice(0, dot)
}

export function boundedUserAgent (value: string | undefined): string | null {
  if (value === undefined || value === '') return null
  return value.length <= LONGEST_USER_AGENT ? value : value.slice(0, LONGEST_USER_AGENT)
}

/** The entry a draft becomes once its change names the resource and its outcome. */
export function auditEntryOf (draft: AuditDraft, id: string, at: string, resourceId: string | null,
  outcome: AuditOutcome, merchantId: string | null = draft.merchantId): AuditEntry {
  return {
    id,
    at,
    merchantId,
    actor: draft.actor,
    action: draft.action,
    resource: { type: resourceTypeOf(draft.action), id: draft.resourceId ?? resourceId },
    requestId: draft.requestId,
    ip: draft.ip,
    userAgent: draft.userAgent,
    outcome
  }
}

/** A change whose event says it ended in a refusal or failure (a declined payment, a failed refund) is `failed`: it was still made. */
export function outcomeOfEvent (type: string): AuditOutcome {
  return type.endsWith('.failed') || type.endsWith('.declined') || type.endsWith('_failed') ? 'failed' : 'succeeded'
}
