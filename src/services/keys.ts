import type { Database, IdempotencyKeyRef, StoredResponse } from '../store/types'

/** Where a key's response is answered from: the key's path and the trace id of its log lines. */
export interface ResponseOrigin {
  path: string
  traceId: string
}

/**
 * The Idempotency-Key a request (or the recovery worker) holds while a service creates or settles
 * a resource under it. The service stores `respond(resource)` on the key in the transaction that
 * creates or settles the resource; the caller builds the response (a service never does).
 */
export interface OwnedKey<T> {
  ref: IdempotencyKeyRef
  /** The resource created under the key (by an earlier attempt, or by this request's claim); null when none. */
  resourceId: string | null
  /**
   * The resource this request's claim wrote with the key, in the claim's transaction (create-under-key):
   * the service goes on from it as it is, without reading it back or writing it again.
   */
  created?: T
  respond: (resource: T) => StoredResponse
}

/**
 * The recovery worker's hold on the key a resource was created under, when that key is unfinished
 * (a request gave up on it): the responses it stores carry the worker pass's trace id.
 */
export async function unfinishedKeyOf<T> (
  db: Database,
  resourceId: string,
  traceId: string,
  respond: (resource: T, origin: ResponseOrigin) => StoredResponse
): Promise<OwnedKey<T> | undefined> {
  const record = await db.idempotency.findByResource(resourceId)
  if (record === undefined || record.recoveryPoint === 'finished') return undefined
  const origin = { path: record.path, traceId }
  return {
    ref: { scope: record.scope, method: record.method, path: record.path, key: record.key },
    resourceId,
    respond: (resource) => respond(resource, origin)
  }
}
