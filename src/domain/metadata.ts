import type { FieldErrors } from './errors'

/** A client's own key-value pairs on a payment, refund or merchant (Stripe's limits). */
export type Metadata = Record<string, string>

export const METADATA_MAX_KEYS = 50
export const METADATA_KEY_MAX_LENGTH = 40
export const METADATA_VALUE_MAX_LENGTH = 500

function isPlainObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Every rule a metadata object breaks, as messages for `errors.metadata`.
 * `allowNull`: a merge patch, where `null` removes a key.
 */
export function metadataErrors (value: unknown, options: { allowNull?: boolean } = {}): FieldErrors {
  if (value === undefined) return {}
  if (!isPlainObject(value)) return { metadata: ['The metadata field must be an object whose values are strings.'] }
  const messages: string[] = []
  const keys = Object.keys(value)
  if (keys.length > METADATA_MAX_KEYS) messages.push(`The metadata field may have at most ${METADATA_MAX_KEYS} keys (got ${keys.length}).`)
  for (const key of keys) {
    const shown = key.length <= METADATA_KEY_MAX_LENGTH ? `'${key}'` : `'${key.slice(0, 20)}…'`
    if (key.length === 0) messages.push('A metadata key must not be empty.')
    if (key.length > METADATA_KEY_MAX_LENGTH) messages.push(`The metadata key ${shown} is longer than ${METADATA_KEY_MAX_LENGTH} characters.`)
    const entry = value[key]
    if (entry === null && options.allowNull === true) continue
    if (typeof entry !== 'string') {
      messages.push(`The metadata value of ${shown} must be a string${options.allowNull === true ? ' (or null to remove the key)' : ''}.`)
    } else if (entry.length > METADATA_VALUE_MAX_LENGTH) {
      messages.push(`The metadata value of ${shown} is longer than ${METADATA_VALUE_MAX_LENGTH} characters.`)
    }
  }
  return messages.length === 0 ? {} : { metadata: messages }
}

/**
 * RFC 7396 merge patch of a flat metadata object: `null` removes a key, a
 * string sets it, absent keys stay. The result is checked against the limits
 * by the caller (a patch can push a merchant past 50 keys).
 */
export function mergeMetadata (current: Metadata, patch: Record<string, string | null>): Metadata {
  const merged: Metadata = { ...current }
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key]
    else merged[key] = value
  }
  return merged
}
