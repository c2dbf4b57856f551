import { AsyncLocalStorage } from 'node:async_hooks'
import { auditEntryOf, type AuditActor, type AuditDraft, type AuditEntry, type AuditOutcome } from '../domain/audit'
import { newId } from '../domain/ids'

/**
 * The audit entry a request owes (issue 43), carried beside the request's async work so that the
 * store write that makes the request's change writes it in the same transaction, without every
 * service and store signature passing it along. The edge opens the scope (`auditing`) with what it
 * knows (who, which action, request id, address); the stores' change points (`auditEntry`) complete
 * it with the resource and the outcome. The entry's id is drawn once per request, and the insert
 * ignores an id already written, so a transaction retried after a conflict, or a second write of the
 * same request, never records the change twice: the first change that commits carries the entry.
 */
interface AuditSlot {
  draft: AuditDraft
  id: string
  clock: () => number
}

const scope = new AsyncLocalStorage<AuditSlot>()

/** Runs `work` (and everything it starts) owing the entry `draft` describes. */
export function auditing<T> (draft: AuditDraft, clock: () => number, work: () => T): T {
  return scope.run({ draft, id: newId(), clock }, work)
}

/** The entry the current request owes for its change of `resourceId`, or undefined outside a request that owes one. */
export function auditEntry (resourceId: string | null, outcome: AuditOutcome = 'succeeded', merchantId?: string | null): AuditEntry | undefined {
  const slot = scope.getStore()
  if (slot === undefined) return undefined
  return auditEntryOf(slot.draft, slot.id, new Date(slot.clock()).toISOString(), resourceId, outcome, merchantId ?? slot.draft.merchantId)
}

/** The entry of a request whose actor is known only once it is done (a sign-in: the actor is who signed in). */
export function auditEntryAs (actor: AuditActor, resourceId: string | null, merchantId: string | null): AuditEntry | undefined {
  const slot = scope.getStore()
  if (slot === undefined) return undefined
  return auditEntryOf({ ...slot.draft, actor }, slot.id, new Date(slot.clock()).toISOString(), resourceId, 'succeeded', merchantId)
}

/**
 * `work` tied to the current request's slot (or to none), for work that runs later in another request's async
 * context: a SQLite group commit runs every queued write in the context of the batch's first writer. Cheaper
 * than binding the whole async context (AsyncResource.bind costs ~30 µs a write on Node 20): only the slot is kept.
 */
export function carryingAudit<T> (work: () => T): () => T {
  const slot = scope.getStore()
  return slot === undefined ? () => scope.exit(work) : () => scope.run(slot, work)
}
