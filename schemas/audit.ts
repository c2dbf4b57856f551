import { Type, type Static } from '@sinclair/typebox'
import { ACTOR_TYPES, AUDIT_OUTCOMES, type AuditEntry as StoredAuditEntry } from '../src/domain/audit'
import { pageOf, pageQueryProperties } from './listing'
import { jsonResponse } from './common'

const exampleEntry = {
  id: '019aab20-5e6f-7a8b-9c0d-1e2f3a4b5c6d',
  at: '2026-12-01T14:03:12.345Z',
  actor: { type: 'user', id: '019aaa10-3c4d-7e5f-8a9b-0c1d2e3f4a5b', label: 'ana@shop.example' },
  action: 'payment.refund',
  resource: { type: 'payment', id: '019aa9f1-2b3c-7d4e-8f5a-6b7c8d9e0f1a' },
  requestId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  ip: '203.0.113.7',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64)',
  outcome: 'succeeded'
}

const nullableText = (maxLength: number, description: string) => Type.Union([Type.String({ maxLength }), Type.Null()], { description })

export const AuditEntry = Type.Object({
  id: Type.String({ format: 'uuid', maxLength: 36 }),
  at: Type.String({ format: 'date-time', maxLength: 64, description: 'When the change was made.' }),
  actor: Type.Object({
    type: Type.Union(ACTOR_TYPES.map((type) => Type.Literal(type)), { description: '`api_key`, `user` (a person signed in to the dashboard), `operator` (the admin key) or `system`.' }),
    id: Type.String({ maxLength: 128, description: 'The API key\'s, user\'s or operator credential\'s id.' }),
    label: Type.String({ maxLength: 256, description: 'A user\'s email, a key\'s name and prefix, or `operator`.' })
  }, { additionalProperties: false }),
  action: Type.String({ maxLength: 64, description: '`<resource type>.<verb>`, e.g. `payment.refund`, `api_key.create`, `user.update`, `session.create`.' }),
  resource: Type.Object({
    type: Type.String({ maxLength: 64 }),
    id: nullableText(128, 'The resource changed (null when the action names none, e.g. a sign-in).')
  }, { additionalProperties: false }),
  requestId: nullableText(128, 'The request\'s id (`X-Request-Id`), to find it in the logs.'),
  ip: nullableText(64, 'The client address (through TRUST_PROXY when set).'),
  userAgent: nullableText(256, 'The client\'s User-Agent, cut at 256 characters.'),
  outcome: Type.Union(AUDIT_OUTCOMES.map((outcome) => Type.Literal(outcome)), {
    description: '`succeeded`: the change was made; `failed`: the change was made and ended in a refusal (a declined payment, a failed refund); ' +
      '`denied`: the caller\'s role may not do this, nothing changed.'
  })
}, {
  $id: 'AuditEntry',
  title: 'Audit log entry',
  description: 'Who changed what, when and from where. Written in the same transaction as the change; never changed or deleted. Never holds a secret, a password or a body.',
  additionalProperties: false,
  examples: [exampleEntry]
})
export type AuditEntryType = Static<typeof AuditEntry>

export const AuditEntryList = pageOf(AuditEntry, 'Audit log entries', exampleEntry)

export const AuditLogQuery = Type.Object({
  ...pageQueryProperties,
  actorId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Only entries of this actor (a user\'s or API key\'s id).' })),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only this action, e.g. `payment.refund`.' })),
  resourceType: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only entries about this kind of resource, e.g. `payment`.' })),
  resourceId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Only entries about this resource (any type).' })),
  createdGte: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Only entries at or after this time.' })),
  createdLt: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'Only entries before this time.' }))
}, { additionalProperties: false })

export function toAuditEntryResource (entry: StoredAuditEntry): AuditEntryType {
  const { merchantId: _, ...resource } = entry
  return resource
}

export const auditResponses = {
  list: jsonResponse('A page of entries, newest first.', Type.Ref(AuditEntryList))
}
