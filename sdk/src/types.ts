import type { components, paths } from './generated/schema.js'

type Schemas = components['schemas']

/** A date-named API version (`Api-Version`); the last one is the current version. */
export type ApiVersion = NonNullable<components['parameters']['ApiVersion']>

export type Payment = Schemas['Payment']
export type Refund = Schemas['Refund']
export type Dispute = Schemas['Dispute']
export type Merchant = Schemas['Merchant']
export type ApiKey = Schemas['ApiKey']
export type CreatedApiKey = Schemas['CreatedApiKey']
export type WebhookEndpoint = Schemas['WebhookEndpoint']
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret']
export type WebhookDelivery = Schemas['WebhookDelivery']
export type ApiKeyCollection = Schemas['ApiKeyCollection']
export type WebhookEndpointCollection = Schemas['WebhookEndpointCollection']
export type ReplayResult = Schemas['ReplayResult']
export type ConnectorAccount = Schemas['ConnectorAccount']
export type ConnectorAccountCollection = Schemas['ConnectorAccountCollection']
export type ConnectorStats = Schemas['ConnectorStats']
export type ConnectorStatsEntry = Schemas['ConnectorStatsEntry']
export type PaymentSummary = Schemas['PaymentSummary']
export type Product = Schemas['Product']
export type ProductReplacement = Schemas['ProductReplacement']
export type Health = Schemas['Health']
export type ServiceIndex = Schemas['ServiceIndex']

export type CreatePaymentRequest = Schemas['CreatePaymentRequest']
export type CreateRefundRequest = Schemas['CreateRefundRequest']
export type CreateMerchantRequest = Schemas['CreateMerchantRequest']
export type CreateApiKeyRequest = Schemas['CreateApiKeyRequest']
export type CreateWebhookEndpointRequest = Schemas['CreateWebhookEndpointRequest']
export type CaptureRequest = Schemas['CaptureRequest']
export type MerchantPatch = Schemas['MerchantPatch']
export type UpdateWebhookEndpointRequest = Schemas['UpdateWebhookEndpointRequest']
export type RotateWebhookSecretRequest = Schemas['RotateWebhookSecretRequest']
export type ReplayWebhookEventsRequest = Schemas['ReplayWebhookEventsRequest']
export type CreateConnectorRequest = Schemas['CreateConnectorRequest']
export type UpdateConnectorRequest = Schemas['UpdateConnectorRequest']
export type User = Schemas['User']
export type UserList = Schemas['UserList']
export type InvitedUser = Schemas['InvitedUser']
export type CreateUserRequest = Schemas['CreateUserRequest']
export type UpdateUserRequest = Schemas['UpdateUserRequest']
export type AuditEntry = Schemas['AuditEntry']

export type ListPaymentsQuery = Omit<NonNullable<paths['/api/payments']['get']['parameters']['query']>, 'startingAfter' | 'endingBefore'>
export type PaymentSummaryQuery = NonNullable<paths['/api/payments/summary']['get']['parameters']['query']>
export type ConnectorStatsQuery = NonNullable<paths['/merchants/{id}/connectors/stats']['get']['parameters']['query']>
export type ExportPaymentsQuery = NonNullable<paths['/api/payments/export']['get']['parameters']['query']>
export type ExportRefundsQuery = NonNullable<paths['/api/refunds/export']['get']['parameters']['query']>
export type ListAllRefundsQuery = Omit<NonNullable<paths['/api/refunds']['get']['parameters']['query']>, 'startingAfter' | 'endingBefore'>
export type ListDisputesQuery = Omit<NonNullable<paths['/api/disputes']['get']['parameters']['query']>, 'startingAfter' | 'endingBefore'>
export type ListEventsQuery = Omit<NonNullable<paths['/api/events']['get']['parameters']['query']>, 'startingAfter' | 'endingBefore'>
export type ListAuditLogQuery = Omit<NonNullable<paths['/api/audit-log']['get']['parameters']['query']>, 'startingAfter' | 'endingBefore'>

/** An RFC 9457 problem document: narrow on `type` to reach a problem's own members (e.g. `declineCode`). */
export type Problem = Schemas['ProblemDetails']
/** The `{ error, code }` envelope the products area answers errors with. */
export type ErrorEnvelope = Schemas['ErrorEnvelope']

/** The Event resource (GET /api/events/{id}); narrow on `type` and `data` is that resource. */
export type Event = Schemas['Event']
export type EventType = Event['type']

/**
 * A webhook delivery body for an endpoint pinned to 2026-11-01: `{ type, timestamp, data, sequence }`
 * (the event id is the `webhook-id` header), as the document's `webhooks:` section declares it. Discriminated by `type`.
 */
export type LegacyWebhookEvent =
  | Schemas['PaymentEventBody20261101']
  | Schemas['RefundEventBody20261101']
  | Schemas['DisputeEventBody20261101']
  | Schemas['MerchantEventBody20261101']
  | Schemas['WebhookEndpointEventBody20261101']
