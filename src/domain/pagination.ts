import { ValidationError } from './errors'

export const LIST_LIMIT_DEFAULT = 10
export const LIST_LIMIT_MAX = 100

/**
 * One page of a list, newest first. Order: created time, then id, both
 * descending; a cursor is the id of an item, so a page starts right after
 * (or ends right before) that item's place in the order whatever was created
 * since: no item is skipped or repeated.
 */
export interface PageRequest {
  limit: number
  /** Items older than this one (the next page). */
  startingAfter?: string
  /** Items newer than this one (the previous page). */
  endingBefore?: string
}

export interface Page<T> {
  data: T[]
  hasMore: boolean
}

/** Where a cursor item sits in the order. */
export interface CursorPosition {
  createdAt: string
  id: string
}

export interface CreatedRange {
  /** ISO 8601, inclusive. */
  createdGte?: string
  /** ISO 8601, exclusive. */
  createdLt?: string
}

/** The cursor names no item of this list (unknown, deleted, or another owner's). */
export class UnknownCursorError extends ValidationError {
  constructor (field: 'startingAfter' | 'endingBefore', id: string) {
    super({ [field]: [`The ${field} field must be the id of an item of this list; '${id.length <= 64 ? id : id.slice(0, 64) + '…'}' is not one.`] })
  }
}

/** Checks the page request rules the schema cannot express; the schema already bounds `limit`. */
export function pageRequestErrors (request: PageRequest & CreatedRange): Record<string, string[]> {
  const errors: Record<string, string[]> = {}
  if (request.startingAfter !== undefined && request.endingBefore !== undefined) {
    errors.endingBefore = ['Use either startingAfter or endingBefore, not both.']
  }
  if (!Number.isInteger(request.limit) || request.limit < 1 || request.limit > LIST_LIMIT_MAX) {
    errors.limit = [`The limit field must be an integer from 1 to ${LIST_LIMIT_MAX}.`]
  }
  for (const field of ['createdGte', 'createdLt'] as const) {
    const value = request[field]
    if (value !== undefined && Number.isNaN(Date.parse(value))) errors[field] = [`The ${field} field must be an ISO 8601 date-time.`]
  }
  return errors
}

/** Timestamps are stored as `Date.toISOString()` text; a filter bound must be in the same form to compare as text. */
export function normalizeInstant (value: string | undefined): string | undefined {
  return value === undefined ? undefined : new Date(value).toISOString()
}

/** The range's bounds normalized (normalizeInstant); a bound not sent stays absent. */
export function normalizeRange (range: CreatedRange): CreatedRange {
  const createdGte = normalizeInstant(range.createdGte)
  const createdLt = normalizeInstant(range.createdLt)
  return { ...(createdGte === undefined ? {} : { createdGte }), ...(createdLt === undefined ? {} : { createdLt }) }
}

/** A list request with the default limit applied; a ValidationError naming every bad field otherwise. */
export function validPageRequest<T extends Partial<PageRequest> & CreatedRange> (query: T): T & { limit: number } {
  const page = { ...query, limit: query.limit ?? LIST_LIMIT_DEFAULT }
  const errors = pageRequestErrors(page)
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
  return page
}
