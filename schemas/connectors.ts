import { Type, type Static } from '@sinclair/typebox'
import {
  CONNECTOR_STATUSES, DESCRIPTION_MAX_LENGTH, MAX_CONNECTORS_PER_MERCHANT, PRIORITY_MAX, PRIORITY_MIN, type ConnectorAccount as DomainConnectorAccount
} from '../src/domain/connectors'
import type { ConnectorStats as DomainConnectorStats } from '../src/domain/connector-stats'
import { ConnectorCredentials, ConnectorType } from './connector-types'
import { MerchantParams } from './merchants'
import { MAX_PARAM_LENGTH } from './patterns'

const exampleConnectorId = '019ab0c2-5d1e-7f20-8a31-b4c5d6e7f809'

const exampleConnector = {
  id: exampleConnectorId,
  type: 'stripe',
  priority: 0,
  status: 'enabled',
  description: 'Stripe EU account',
  credentialsHint: '…4242',
  createdAt: '2026-01-15T09:00:00.000Z',
  updatedAt: '2026-01-15T09:00:00.000Z'
}

const status = Type.Unsafe<typeof CONNECTOR_STATUSES[number]>({
  type: 'string',
  enum: [...CONNECTOR_STATUSES],
  description: '`enabled`: payments are routed to it; `disabled`: not routed to, while its payments keep settling, refunding and capturing through it.'
})
const priority = Type.Integer({
  format: 'int32',
  minimum: PRIORITY_MIN,
  maximum: PRIORITY_MAX,
  description: 'Routing order: a payment goes to the enabled account with the lowest priority first (equal priorities: the oldest first).'
})

export const ConnectorAccount = Type.Object({
  id: Type.String({ maxLength: 64, format: 'uuid', description: 'The connector account id.' }),
  type: ConnectorType,
  priority,
  status,
  description: Type.Optional(Type.String({ maxLength: DESCRIPTION_MAX_LENGTH, description: 'Your label.' })),
  credentialsHint: Type.Optional(Type.String({ maxLength: 8, description: 'The last 4 characters of the secret key (Stripe) or API key (Adyen), to tell keys apart (absent for `simulated`). The credentials themselves are never returned.' })),
  createdAt: Type.String({ maxLength: 64, format: 'date-time' }),
  updatedAt: Type.String({ maxLength: 64, format: 'date-time' })
}, { $id: 'ConnectorAccount', title: 'Connector account', description: 'A merchant\'s account at a PSP (never its credentials).', additionalProperties: false, examples: [exampleConnector] })
export type ConnectorAccountType = Static<typeof ConnectorAccount>

/** A connector account as the API shows it: never its credentials, only their hint. */
export function toPublicConnector (account: DomainConnectorAccount): ConnectorAccountType {
  return {
    id: account.id,
    type: account.type,
    priority: account.priority,
    status: account.status,
    ...(account.description !== null ? { description: account.description } : {}),
    ...(account.credentialsHint !== null ? { credentialsHint: account.credentialsHint } : {}),
    createdAt: account.createdAt,
    updatedAt: account.updatedAt
  }
}

export const ConnectorAccountList = Type.Object({
  data: Type.Array(Type.Ref(ConnectorAccount), { maxItems: MAX_CONNECTORS_PER_MERCHANT, description: 'The merchant\'s connector accounts in routing order (priority, then the oldest first).' })
}, { $id: 'ConnectorAccountCollection', title: 'Connector accounts', additionalProperties: false, examples: [{ data: [exampleConnector] }] })

export const CreateConnectorBody = Type.Object({
  type: ConnectorType,
  credentials: Type.Optional(ConnectorCredentials),
  priority: Type.Optional({ ...priority, description: `${priority.description} Default 0.`, examples: [0] }),
  description: Type.Optional(Type.String({ minLength: 1, maxLength: DESCRIPTION_MAX_LENGTH, description: 'A label.', examples: ['Stripe EU account'] }))
}, {
  $id: 'CreateConnectorRequest',
  title: 'Connector account request',
  additionalProperties: false,
  examples: [
    { type: 'stripe', credentials: { secretKey: 'rk_test_51HxEXAMPLEonlyNOTaREALkey4242' }, priority: 0, description: 'Stripe EU account' },
    {
      type: 'adyen',
      credentials: { apiKey: 'AQEyhmfxEXAMPLEonlyNOTaREALkey0000', merchantAccount: 'YourCompanyECOM', hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056' },
      priority: 1,
      description: 'Adyen fallback (test)'
    }
  ]
})

export const UpdateConnectorBody = Type.Object({
  priority: Type.Optional(priority),
  status: Type.Optional(status),
  description: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: DESCRIPTION_MAX_LENGTH }), Type.Null()], { description: 'A label; null removes it.' })),
  credentials: Type.Optional(ConnectorCredentials)
}, { $id: 'UpdateConnectorRequest', title: 'Connector account changes', additionalProperties: false, examples: [{ status: 'disabled' }, { priority: 10 }] })

export const ConnectorParams = Type.Object({
  id: MerchantParams.properties.id,
  connectorId: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The connector account id.', examples: [exampleConnectorId] })
})

const instant = (description: string, example: string) => Type.String({ format: 'date-time', maxLength: 64, description, examples: [example] })

export const ConnectorStatsQuery = Type.Object({
  createdGte: Type.Optional(instant('Only charge calls started at or after this instant (ISO 8601). Default: 30 days before `createdLt`.', '2026-11-01T00:00:00Z')),
  createdLt: Type.Optional(instant('Only charge calls started before this instant (ISO 8601). Default: now.', '2026-12-01T00:00:00Z'))
}, { additionalProperties: false })

const count = (description: string) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, format: 'int64', description })
const milliseconds = (description: string) => Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, format: 'int64' }), Type.Null()], { description })

const exampleStats = {
  id: exampleConnectorId,
  type: 'stripe',
  description: 'Stripe EU account',
  deleted: false,
  attempts: 120,
  succeeded: 101,
  authorized: 4,
  requiresAction: 3,
  declined: 9,
  notProcessed: 2,
  unknown: 1,
  successRate: 0.8974,
  latency: { p50Ms: 412, p95Ms: 1180 }
}

export const ConnectorStatsEntry = Type.Object({
  id: Type.Union([Type.String({ maxLength: 64, format: 'uuid' }), Type.Null()], {
    description: 'The connector account id; null: the service\'s default gateway, which charges the payments of a merchant without connector accounts.'
  }),
  type: ConnectorType,
  description: Type.Optional(Type.String({ maxLength: DESCRIPTION_MAX_LENGTH, description: 'The account\'s label, when it has one.' })),
  deleted: Type.Boolean({ description: 'True for an account deleted since: its calls in the range still count.' }),
  attempts: count('Charge calls made to the connector in the range (each call once, failovers and retries included; a connector skipped for want of a payment method was not called).'),
  succeeded: count('Calls the connector answered with a charge.'),
  authorized: count('Calls the connector answered with an authorization (manual capture).'),
  requiresAction: count('Calls the connector answered by asking for the shopper\'s authentication (3-D Secure); what the shopper did next is not the call\'s outcome.'),
  declined: count('Calls the connector (or the issuer behind it) answered with a decline.'),
  notProcessed: count('Calls that certainly charged nothing without a decision: the connection was refused, or the PSP said it did not process the request (credentials refused, rate limited). The payment failed over to the next account.'),
  unknown: count('Calls without an answer (a time-out, a dropped connection, a PSP error): the payment stayed pinned to the connector.'),
  successRate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
    description: '(succeeded + authorized) / (succeeded + authorized + declined + notProcessed + unknown): the share of finished calls that took the ' +
      'payment. Declines count against it, as in Stripe\'s and Hyperswitch\'s success rates (a declined payment is one not taken), and so do ' +
      'the calls that failed (notProcessed, unknown): a connector that does not answer is what the figure exists to show, and Hyperswitch\'s ' +
      'per-connector success rate counts connector errors too. Calls waiting for the shopper (requiresAction) are left out: nobody has decided ' +
      'yet. Per call, not per payment: a payment that timed out and then succeeded on a retry is two calls, one of each. Null when no call finished.'
  }),
  latency: Type.Object({
    p50Ms: milliseconds('Median time the connector took to answer (nearest rank), in milliseconds; null when no call was answered.'),
    p95Ms: milliseconds('95th percentile (nearest rank: the smallest duration at least 95 % of the answered calls did not exceed); null when none was answered.')
  }, {
    additionalProperties: false,
    description: 'How long the answered calls (succeeded, authorized, requiresAction, declined) took, from the request to the PSP to its answer, ' +
      'by the service\'s clock. notProcessed and unknown calls are left out: their duration is the failure\'s (a time-out), not the PSP\'s.'
  })
}, { $id: 'ConnectorStatsEntry', title: 'Connector statistics', additionalProperties: false, examples: [exampleStats] })
export type ConnectorStatsEntryType = Static<typeof ConnectorStatsEntry>

export const ConnectorStats = Type.Object({
  createdGte: instant('Start of the range (included).', '2026-11-01T00:00:00.000Z'),
  createdLt: instant('End of the range (excluded).', '2026-12-01T00:00:00.000Z'),
  data: Type.Array(Type.Ref(ConnectorStatsEntry), {
    maxItems: 1000,
    description: 'Every connector account not deleted, in routing order (zeros when it had no call in the range), then the deleted accounts ' +
      'and the default gateway that had calls in the range.'
  })
}, {
  $id: 'ConnectorStats',
  title: 'Connector statistics over a range',
  additionalProperties: false,
  examples: [{ createdGte: '2026-11-01T00:00:00.000Z', createdLt: '2026-12-01T00:00:00.000Z', data: [exampleStats] }]
})
export type ConnectorStatsType = Static<typeof ConnectorStats>

/** A connector's figures as the API shows them. */
export function toPublicConnectorStats (stats: DomainConnectorStats): ConnectorStatsType {
  return {
    createdGte: stats.createdGte,
    createdLt: stats.createdLt,
    data: stats.connectors.map((entry) => ({
      id: entry.connectorId,
      type: entry.connectorType,
      ...(entry.description !== null ? { description: entry.description } : {}),
      deleted: entry.deleted,
      attempts: entry.attempts,
      succeeded: entry.counts.succeeded,
      authorized: entry.counts.authorized,
      requiresAction: entry.counts.requires_action,
      declined: entry.counts.declined,
      notProcessed: entry.counts.not_processed,
      unknown: entry.counts.unknown,
      successRate: entry.successRate,
      latency: { p50Ms: entry.p50Ms, p95Ms: entry.p95Ms }
    }))
  }
}
