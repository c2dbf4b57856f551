import { Type, type Static, type TSchema } from '@sinclair/typebox'

/** The simple error envelope used by the products area (and infrastructure routes). */
export const ErrorEnvelope = Type.Object({
  error: Type.String({ description: 'Human-readable message.' }),
  code: Type.String({ description: 'Machine-readable code, e.g. VALIDATION, NOT_FOUND, METHOD_NOT_ALLOWED.' })
}, { $id: 'ErrorEnvelope', title: 'Error envelope', additionalProperties: false })
export type ErrorEnvelopeType = Static<typeof ErrorEnvelope>

/** RFC 9457 problem document with ASP.NET-style members, used by payments and merchants. */
export const ProblemDetails = Type.Object({
  type: Type.String({ description: 'URI reference identifying the problem type.' }),
  title: Type.String({ description: 'Short, human-readable summary of the problem type.' }),
  status: Type.Integer({ description: 'HTTP status code.' }),
  detail: Type.Optional(Type.String({ description: 'Explanation specific to this occurrence.' })),
  instance: Type.String({ description: 'The request path.' }),
  traceId: Type.String({ description: 'The request id (also in the X-Request-Id header and the server logs).' }),
  errors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()), {
    description: 'Validation failures: JSON field name → messages.'
  })),
  paymentId: Type.Optional(Type.String({ format: 'uuid', description: 'The payment this problem concerns.' })),
  declineCode: Type.Optional(Type.String({ description: 'Why the gateway declined the charge, e.g. card_declined.' })),
  failureCode: Type.Optional(Type.String({ description: 'Why a payment failed (pending_expired, gateway_unreachable) or a refund was refused.' })),
  refundId: Type.Optional(Type.String({ format: 'uuid', description: 'The refund this problem concerns.' })),
  paymentStatus: Type.Optional(Type.String({ description: 'The payment\'s current status, when it forbids the operation.' })),
  requestedAmount: Type.Optional(Type.Number({ description: 'The refund amount asked for (major units).' })),
  remainingAmount: Type.Optional(Type.Number({ description: 'What remains refundable on the payment (major units).' }))
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

export function jsonResponse<T extends TSchema> (description: string, schema: T) {
  return { description, content: { 'application/json': { schema } } }
}

/** The optional Idempotency-Key request header of creating operations (payments, merchants). */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    description: 'Optional, 1-255 printable ASCII characters (use a UUID). Repeating a request with the same key and body replays ' +
      'the first response (with `Idempotent-Replayed: true`); the same key with a different body is 409; see the API description.'
  }))
})
