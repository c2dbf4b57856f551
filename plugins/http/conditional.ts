import { hash } from 'node:crypto'
import { canonicalJson } from './canonical-json'

/**
 * Entity-tag comparison for conditional requests (RFC 9110 §8.8.3, §13.1).
 *
 * A header value is either `*` or a comma-separated list of entity tags
 * (`"abc"` strong, `W/"abc"` weak). Anything that is not a well-formed tag is
 * ignored, so a malformed header simply matches nothing.
 */
export interface EntityTag {
  weak: boolean
  opaque: string
}

const TAG = /(W\/)?"([\x21\x23-\x7E\x80-\xFF]*)"/g

export function parseEntityTag (value: string): EntityTag | undefined {
  const match = /^(W\/)?"([\x21\x23-\x7E\x80-\xFF]*)"$/.exec(value.trim())
  const opaque = match?.[2]
  return match === null || opaque === undefined ? undefined : { weak: match[1] !== undefined, opaque }
}

/** `*`, or the entity tags listed in an If-Match / If-None-Match header. */
export function parseEntityTagList (header: string): '*' | EntityTag[] {
  if (header.trim() === '*') return '*'
  const tags: EntityTag[] = []
  for (const [, weak, opaque] of header.matchAll(TAG)) if (opaque !== undefined) tags.push({ weak: weak !== undefined, opaque })
  return tags
}

/** Strong comparison: both tags strong and their opaque parts equal. */
export function strongMatch (a: EntityTag, b: EntityTag): boolean {
  return !a.weak && !b.weak && a.opaque === b.opaque
}

/** Weak comparison: opaque parts equal, whatever the W/ prefixes. */
export function weakMatch (a: EntityTag, b: EntityTag): boolean {
  return a.opaque === b.opaque
}

/**
 * If-None-Match against an existing representation's tag (weak comparison):
 * true means "not modified" (304 for GET and HEAD).
 */
export function ifNoneMatchMatches (header: string, current: string): boolean {
  const tags = parseEntityTagList(header)
  if (tags === '*') return true
  const tag = parseEntityTag(current)
  return tag !== undefined && tags.some((candidate) => weakMatch(candidate, tag))
}

/**
 * If-Match against an existing representation's tag (strong comparison):
 * false means the precondition failed (412).
 */
export function ifMatchMatches (header: string, current: string): boolean {
  const tags = parseEntityTagList(header)
  if (tags === '*') return true
  const tag = parseEntityTag(current)
  return tag !== undefined && tags.some((candidate) => strongMatch(candidate, tag))
}

/**
 * A strong entity tag for a representation that has no version of its own (a product): a digest of its
 * canonical JSON, so equal content has equal tags on every instance and after every restart.
 */
export function contentEtag (value: unknown): string {
  // crypto.hash: one call, no Hash object (Node ≥ 20.12); the same digest as createHash('sha256').
  return `"${hash('sha256', canonicalJson(value), 'base64url').slice(0, 22)}"`
}

export type Precondition = 'ok' | 'not-modified' | 'failed'

/**
 * RFC 9110 §13.2.2 for a resource that exists with tag `current` (undefined: it does not exist):
 * If-Match first (strong comparison; `*` needs the resource to exist), then If-None-Match (weak
 * comparison; `*` matches any existing resource) — 304 for GET/HEAD, 412 otherwise.
 */
export function evaluatePreconditions (method: string, headers: { 'if-match'?: string, 'if-none-match'?: string }, current: string | undefined): Precondition {
  const ifMatch = headers['if-match']
  if (ifMatch !== undefined && (current === undefined || !ifMatchMatches(ifMatch, current))) return 'failed'
  const ifNoneMatch = headers['if-none-match']
  if (ifNoneMatch !== undefined && current !== undefined && ifNoneMatchMatches(ifNoneMatch, current)) {
    return method === 'GET' || method === 'HEAD' ? 'not-modified' : 'failed'
  }
  return 'ok'
}
