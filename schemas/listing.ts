import { Type, type TSchema } from '@sinclair/typebox'
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from '../src/domain/pagination'
import { METADATA_KEY_MAX_LENGTH, METADATA_MAX_KEYS, METADATA_VALUE_MAX_LENGTH } from '../src/domain/metadata'

const metadataRules = `At most ${METADATA_MAX_KEYS} keys, each 1-${METADATA_KEY_MAX_LENGTH} characters, string values of at most ` +
  `${METADATA_VALUE_MAX_LENGTH} characters; a violation is 400 with \`errors.metadata\`. Stored and returned exactly as sent ` +
  '(key order included); omitted from responses when empty. Part of the Idempotency-Key fingerprint like every body member.'

/** Metadata in requests and responses: the client's own key-value pairs. */
export const Metadata = Type.Record(
  Type.String({ minLength: 1, maxLength: METADATA_KEY_MAX_LENGTH }),
  Type.String({ maxLength: METADATA_VALUE_MAX_LENGTH }),
  { maxProperties: METADATA_MAX_KEYS, description: `Your own key-value pairs (e.g. an order number). ${metadataRules}`, examples: [{ orderId: 'A-1042' }] }
)

/** A resource's `metadata` member, to spread into its representation: omitted when empty. */
export function metadataMember (metadata: Record<string, string>): { metadata?: Record<string, string> } {
  return Object.keys(metadata).length === 0 ? {} : { metadata }
}

/** Metadata in a merge patch: `null` removes a key. */
export const MetadataPatch = Type.Union([
  Type.Record(
    Type.String({ minLength: 1, maxLength: METADATA_KEY_MAX_LENGTH }),
    Type.Union([Type.String({ maxLength: METADATA_VALUE_MAX_LENGTH }), Type.Null()]),
    { maxProperties: METADATA_MAX_KEYS }
  ),
  Type.Null()
], {
  description: 'Merged key by key (JSON Merge Patch): a string sets a key, `null` as a value removes that key, absent keys stay; ' +
    `\`metadata: null\` removes every key. ${metadataRules} The limits apply to the merged result.`,
  examples: [{ orderId: 'A-1043', legacyRef: null }]
})

const cursorDescription = (direction: string) =>
  `The id of an item of this list (a cursor from a previous page): returns the items ${direction} it. ` +
  'Use either `startingAfter` or `endingBefore`. An id that is not in this list is 400.'

/** Query members every list endpoint accepts. */
export const pageQueryProperties = {
  limit: Type.Optional(Type.Integer({
    format: 'int32',
    minimum: 1,
    maximum: LIST_LIMIT_MAX,
    default: LIST_LIMIT_DEFAULT,
    description: `How many items, 1-${LIST_LIMIT_MAX} (default ${LIST_LIMIT_DEFAULT}); anything else is 400.`,
    examples: [10]
  })),
  startingAfter: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: cursorDescription('older than (the next page)') })),
  endingBefore: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: cursorDescription('newer than (the previous page)') }))
}

export const PageQuery = Type.Object(pageQueryProperties, { additionalProperties: false })

/**
 * `{ data, hasMore }`: a page of items, newest first (created time, then id). A page never skips or
 * repeats an item while new ones arrive: cursors are positions in that order. One shape for every list: the
 * component `<Item>List` (`$id`), whose items are a reference to the item's component.
 */
export function pageOf<T extends TSchema> (item: T, title: string, example: unknown) {
  if (item.$id === undefined) throw new Error(`pageOf(${title}): the item schema needs an $id`)
  return Type.Object({
    data: Type.Array(Type.Ref(item), { maxItems: LIST_LIMIT_MAX, description: 'The items of this page, newest first.' }),
    hasMore: Type.Boolean({ description: 'True when more items lie beyond this page in the direction requested.' })
  }, { $id: `${item.$id}List`, title, additionalProperties: false, examples: [{ data: [example], hasMore: false }] })
}
