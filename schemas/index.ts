import { ErrorEnvelope, ProblemDetails } from './common'
import { Product, ProductBody } from './products'
import { CreatePaymentBody, Payment, PaymentList } from './payments'
import { CaptureBody } from './captures'
import { CreateRefundBody, Refund, RefundList } from './refunds'
import { Dispute, DisputeList } from './disputes'
import { CreateMerchantBody, Merchant, MerchantList, MerchantPatchBody } from './merchants'
import { ApiKey, ApiKeyList, CreateApiKeyBody, CreatedApiKey } from './api-keys'
import { Event, EventList } from './events'
import {
  CreateWebhookEndpointBody, ReplayBody, ReplayResult, RotateSecretBody, UpdateWebhookEndpointBody,
  WebhookDelivery, WebhookDeliveryList, WebhookEndpoint, WebhookEndpointList, WebhookEndpointWithSecret
} from './webhooks'
import { ConnectorAccount, ConnectorAccountList, ConnectorStats, ConnectorStatsEntry, CreateConnectorBody, UpdateConnectorBody } from './connectors'
import { Health, ServiceIndex } from './health'
import { DashboardSession, SignInBody } from './dashboard'
import { PaymentSummary } from './payment-summary'
import { ReturnForm, SimulatedBankForm } from './checkout'
import { AcceptInviteBody, ChangePasswordBody, ConfirmTotpBody, CreateUserBody, InvitedUser, TotpEnrollment, TotpState, UpdateUserBody, User, UserList } from './users'
import { AuditEntry, AuditEntryList } from './audit'

/**
 * Schemas with an `$id`, registered once at the root so routes and the OpenAPI document share them: every
 * request and response body is one of them (a named component in the document), referenced with Type.Ref.
 */
export const componentSchemas = [
  ErrorEnvelope, ProblemDetails,
  Product, ProductBody,
  Payment, PaymentList, PaymentSummary, CreatePaymentBody, CaptureBody,
  Refund, RefundList, CreateRefundBody,
  Dispute, DisputeList,
  Merchant, MerchantList, CreateMerchantBody, MerchantPatchBody,
  ApiKey, ApiKeyList, CreatedApiKey, CreateApiKeyBody,
  Event, EventList,
  WebhookEndpoint, WebhookEndpointList, WebhookEndpointWithSecret, CreateWebhookEndpointBody, UpdateWebhookEndpointBody,
  RotateSecretBody, ReplayBody, ReplayResult, WebhookDelivery, WebhookDeliveryList,
  ConnectorAccount, ConnectorAccountList, ConnectorStatsEntry, ConnectorStats, CreateConnectorBody, UpdateConnectorBody,
  Health, ServiceIndex,
  SignInBody, DashboardSession,
  ReturnForm, SimulatedBankForm,
  User, UserList, CreateUserBody, UpdateUserBody, InvitedUser, AcceptInviteBody, ChangePasswordBody, TotpEnrollment, ConfirmTotpBody, TotpState,
  AuditEntry, AuditEntryList
]
