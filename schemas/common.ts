import { Type, type Static, type TSchema } from '@sinclair/typebox'

/** The simple error envelope used by the products area (and infrastructure routes). */
export const ErrorEnvelope = Type.Object({
  error: Type.String({ maxLength: 2048, description: 'Human-readable message.' }),
  code: Type.String({ maxLength: 64, pattern: '^[A-Z][A-Z_]*$', description: 'Machine-readable code, e.g. VALIDATION, NOT_FOUND, METHOD_NOT_ALLOWED.' })
}, { $id: 'ErrorEnvelope', title: 'Error envelope', additionalProperties: false })
export type ErrorEnvelopeType = Static<typeof ErrorEnvelope>

/** RFC 9457 problem document with ASP.NET-style members, used by payments and merchants. */
export const ProblemDetails = Type.Object({
  type: Type.String({ maxLength: 256, format: 'uri-reference', description: 'URI reference identifying the problem type.' }),
  title: Type.String({ maxLength: 200, description: 'Short, human-readable summary of the problem type.' }),
  status: Type.Integer({ format: 'int32', minimum: 400, maximum: 599, description: 'HTTP status code.' }),
  detail: Type.Optional(Type.String({ maxLength: 2048, description: 'Explanation specific to this occurrence.' })),
  instance: Type.String({ maxLength: 256, description: 'The request path (at most 256 characters: a longer one is cut, with an ellipsis).' }),
  traceId: Type.String({ maxLength: 128, pattern: '^[A-Za-z0-9._:-]{1,128}$', description: 'The request id (also in the X-Request-Id header and the server logs).' }),
  errors: Type.Optional(Type.Record(Type.String({ maxLength: 256 }), Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 10 }), {
    description: 'Validation failures: JSON field name → messages.'
  })),
  paymentId: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'The payment this problem concerns.' })),
  declineCode: Type.Optional(Type.String({ maxLength: 64, pattern: '^[a-z0-9_]+$', description: 'Why the gateway declined the charge, e.g. card_declined.' })),
  failureCode: Type.Optional(Type.String({ maxLength: 64, pattern: '^[a-z0-9_]+$', description: 'Why a payment failed (pending_expired, gateway_unreachable) or a refund was refused.' })),
  refundId: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'The refund this problem concerns.' })),
  paymentStatus: Type.Optional(Type.String({ maxLength: 32, pattern: '^[a-z_]+$', description: 'The payment\'s current status, when it forbids the operation.' })),
  requestedAmount: Type.Optional(Type.Number({ description: 'The refund amount asked for (major units).' })),
  remainingAmount: Type.Optional(Type.Number({ description: 'What remains refundable on the payment (major units).' })),
  disputeId: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'The dispute this problem concerns.' })),
  disputeStatus: Type.Optional(Type.String({ maxLength: 32, pattern: '^[a-z_]+$', description: 'The dispute\'s current status, when it forbids the operation.' }))
}, { $id: 'ProblemDetails', title: 'Problem details (RFC 9457)', additionalProperties: false })
export type ProblemDetailsType = Static<typeof ProblemDetails>

/** Response entry for an envelope error: `application/json`. */
export function envelopeResponse (description: string) {
  return { description, content: { 'application/json': { schema: Type.Ref(ErrorEnvelope) } } }
}

/** Response entry for a problem document: `application/problem+json`. */
export function problemResponse (description: string) {
  return { description, content: { 'application/problem+json': { schema: Type.Ref(ProblemDetails) } } }
}

/** Response entry for JSON; `example` (shown by Swagger UI) when the schema's own example does not fit this status. */
export function jsonResponse<T extends TSchema> (description: string, schema: T, example?: unknown) {
  return { description, content: { 'application/json': example === undefined ? { schema } : { schema, example } } }
}

/** The optional Idempotency-Key request header: every POST of the API takes it (one rule, as Stripe's). */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    maxLength: 257,
    description: 'Optional, 1-255 printable ASCII characters (use a UUID). Repeating a request with the same key and body replays ' +
      'the first response (with `Idempotent-Replayed: true`); the same key with a different body is 409; see the API description.'
  }))
})

/**
 * The sentence every POST's description ends with: one rule for the whole API. `secret`: the answer carries a
 * secret, and says that its stored copy is sealed.
 */
export function idempotencyRule (secret = false): string {
  return 'Supports `Idempotency-Key` (the same rule on every POST): a repeat with the same key and body replays the first answer ' +
    '(`Idempotent-Replayed: true`) without acting again, a different body is 409 `idempotency-key-reused`, a concurrent one 409 ' +
    '`idempotency-key-in-use`; keys are kept for IDEMPOTENCY_TTL_HOURS.' +
    (secret ? ' The replayed answer carries the same secret: its stored copy is encrypted like every stored secret (ENCRYPTION_KEYS) and forgotten with the key.' : '')
}
