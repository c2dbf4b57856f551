const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** True for a GUID in 8-4-4-4-12 hex form (any case, as RFC 9562 allows on input). */
export function isGuid (value: string): boolean {
  return GUID.test(value)
}
