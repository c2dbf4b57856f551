import { v7 as uuidv7 } from 'uuid'

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** True for a GUID in 8-4-4-4-12 hex form (any case, as RFC 9562 allows on input). */
export function isGuid (value: string): boolean {
  return GUID.test(value)
}

/**
 * A new id for a stored record: a UUIDv7 (RFC 9562), still a GUID. Its first 48 bits are the
 * creation time in milliseconds, so new ids land at the end of the primary-key and foreign-key
 * indexes instead of at random places: a payment writes about 12 KiB instead of 30-40 KiB of
 * index pages, and the cost no longer grows with the table. It reveals when the record was
 * created (which the record's createdAt says anyway); the other 74 bits are random, so ids
 * remain unguessable.
 */
export function newId (): string {
  return idSource()
}

let idSource: () => string = () => uuidv7()

/**
 * Where new ids come from, replaced by the deterministic simulation (test/simulation) with its seeded clock and stream,
 * so that a replayed seed makes the same records. Returns the function that puts the previous source back.
 */
export function drawIdsFrom (source: () => string): () => void {
  const previous = idSource
  idSource = source
  return () => { idSource = previous }
}
