import createFetchClient, { type Client } from 'openapi-fetch'
import type { paths } from './generated/schema.js'
import { ApiError } from './errors.js'
import { paginate } from './pagination.js'
import { DEFAULT_RETRY_POLICY, DEFAULT_TIMEOUT_MS, idempotentRetryingFetch, withCallSettings, type Fetch } from './retry.js'
import type {
  ApiKeyCollection, ApiVersion, CaptureRequest, ConnectorAccount, ConnectorAccountCollection, ConnectorStats, ConnectorStatsQuery, CreateApiKeyRequest,
  CreateConnectorRequest, CreatedApiKey, Dispute, ListDisputesQuery, CreateMerchantRequest, CreatePaymentRequest, CreateRefundRequest, CreateWebhookEndpointRequest,
  Event, ExportPaymentsQuery, ExportRefundsQuery, Health, ListAllRefundsQuery, ListEventsQuery, Product, ProductReplacement, ServiceIndex, ListPaymentsQuery, Merchant, MerchantPatch, Payment, PaymentSummary, PaymentSummaryQuery, Refund,
  ReplayResult, ReplayWebhookEventsRequest, RotateWebhookSecretRequest, UpdateConnectorRequest, UpdateWebhookEndpointRequest,
  WebhookDelivery, WebhookEndpoint, WebhookEndpointCollection, WebhookEndpointWithSecret,
  AuditEntry, CreateUserRequest, InvitedUser, ListAuditLogQuery, UpdateUserRequest, User, UserList
} from './types.js'

export interface ClientOptions {
  /**
   * The service's origin, e.g. `https://payments.example.com` or `http://127.0.0.1:3000` (the document's
   * `servers` is `/`, relative to where it is served, so a client must be told the origin).
   */
  baseUrl: string
  /** A merchant key (`Authorization: Bearer …`), or the admin key for merchants and their keys. */
  apiKey: string
  /**
   * Sent as `Api-Version` on every request (one of the document's versions; a typo does not compile); without it the
   * merchant's pinned version answers. Webhook endpoints this client creates get it too, unless the body names one.
   */
  apiVersion?: ApiVersion
  /**
   * Retries after the first attempt (default 2; 0: none) of 409 `idempotency-key-in-use`, 429 and 503, and of requests
   * that got no answer (connection error, time-out) when they may be sent again: GET, HEAD and every POST (each
   * carries an Idempotency-Key, so the service replays instead of acting twice).
   */
  maxRetries?: number
  /** The first back-off in ms, doubled per retry, with jitter (default 500). */
  retryBaseDelayMs?: number
  /** The longest back-off in ms the client chooses itself (default 8000). */
  maxRetryDelayMs?: number
  /** The longest `Retry-After` honoured, in ms (default 60000); an answer asking for more is not retried, and its error says so. */
  maxRetryAfterMs?: number
  /** Each attempt is abandoned after this many ms without an answer (default 80000, as stripe-node). */
  timeoutMs?: number
  /** Your own fetch (a proxy agent, a test double); default `globalThis.fetch`. */
  fetch?: Fetch
}

/** Per call, on every helper (the last argument). */
export interface RequestOptions {
  /** POSTs: the `Idempotency-Key` to send (default: a new UUID per call, reused by its own retries). */
  idempotencyKey?: string
  /** More request headers for this call (they override the client's). */
  headers?: Record<string, string>
  /** Aborts the call (and its retries) when it fires; the abort is never retried. */
  signal?: AbortSignal
  /** This call's time-out per attempt, in ms (default the client's `timeoutMs`). */
  timeoutMs?: number
}
/** @deprecated The name of `RequestOptions` before it took headers, signal and time-out. */
export type CreateOptions = RequestOptions

/** What the answer said besides its body (stripe-node's `lastResponse`). */
export interface ResponseInfo {
  status: number
  /** `X-Request-Id`: quote it to the operator. */
  requestId: string | undefined
  /** True when the answer is the replay of an earlier request with the same Idempotency-Key. */
  idempotentReplayed: boolean
  /** The `Api-Version` the answer is rendered in. */
  apiVersion: string | undefined
  headers: Headers
}

/** A resource as a helper returns it: its members, and `lastResponse` (not enumerable: JSON and deep-equal leave it out). */
export type WithResponse<T> = T & { readonly lastResponse: ResponseInfo }

export type ApiClient = Client<paths>

/**
 * The client's declared interface: every helper's return type is named, so a strict application (with
 * `exactOptionalPropertyTypes`) assigns `await client.payments.create(…)` to a `Payment` as it is.
 */
export interface PaymentServiceClient {
  /** The openapi-fetch client for every operation of the document, through the same keys, retries and time-outs. */
  api: ApiClient
  payments: {
    create: (body: CreatePaymentRequest, options?: RequestOptions) => Promise<WithResponse<Payment>>
    retrieve: (id: string, options?: RequestOptions) => Promise<WithResponse<Payment>>
    /** Every payment matching `query`, newest first, page by page. */
    list: (query?: ListPaymentsQuery, options?: RequestOptions) => AsyncIterable<Payment>
    /** Captures an authorized (`captureMethod: manual`) payment, in full or `amount`. */
    capture: (id: string, body?: CaptureRequest, options?: RequestOptions) => Promise<WithResponse<Payment>>
    cancel: (id: string, options?: RequestOptions) => Promise<WithResponse<Payment>>
    summary: (query?: PaymentSummaryQuery, options?: RequestOptions) => Promise<WithResponse<PaymentSummary>>
    /** The payments matching `query` as CSV (RFC 4180, a header row first), streamed by the service and read whole here. */
    export: (query?: ExportPaymentsQuery, options?: RequestOptions) => Promise<string>
    refunds: {
      create: (paymentId: string, body?: CreateRefundRequest, options?: RequestOptions) => Promise<WithResponse<Refund>>
      retrieve: (paymentId: string, refundId: string, options?: RequestOptions) => Promise<WithResponse<Refund>>
      list: (paymentId: string, options?: RequestOptions) => AsyncIterable<Refund>
      /** Every refund of every payment of the merchant matching `query`, newest first, page by page. */
      listAll: (query?: ListAllRefundsQuery, options?: RequestOptions) => AsyncIterable<Refund>
      /** The refunds matching `query` as CSV (RFC 4180, a header row first). */
      export: (query?: ExportRefundsQuery, options?: RequestOptions) => Promise<string>
    }
  }
  /** Disputes your PSPs reported on your payments. */
  disputes: {
    retrieve: (id: string, options?: RequestOptions) => Promise<WithResponse<Dispute>>
    /** Your disputes matching `query` (status, paymentId), newest first, page by page. */
    list: (query?: ListDisputesQuery, options?: RequestOptions) => AsyncIterable<Dispute>
    /** Concedes the dispute at its PSP: `accepted` (409 `dispute-not-acceptable` when it is closed or the PSP refuses). */
    accept: (id: string, options?: RequestOptions) => Promise<WithResponse<Dispute>>
  }
  events: {
    retrieve: (id: string, options?: RequestOptions) => Promise<WithResponse<Event>>
    list: (query?: ListEventsQuery, options?: RequestOptions) => AsyncIterable<Event>
  }
  merchants: {
    create: (body: CreateMerchantRequest, options?: RequestOptions) => Promise<WithResponse<Merchant>>
    retrieve: (id: string, options?: RequestOptions) => Promise<WithResponse<Merchant>>
    /** Changes the members sent; `ifMatch` (an ETag) makes it conditional (412 when the merchant changed meanwhile). */
    update: (id: string, patch: MerchantPatch, options?: RequestOptions & { ifMatch?: string }) => Promise<WithResponse<Merchant>>
    list: (options?: RequestOptions) => AsyncIterable<Merchant>
  }
  /** A merchant's people (the operator's key; a person's session as owner): invite, list, change a role, remove. */
  users: {
    /** The answer carries the one-time invite link (a replay under the same Idempotency-Key shows it again). */
    invite: (merchantId: string, body: CreateUserRequest, options?: RequestOptions) => Promise<WithResponse<InvitedUser>>
    list: (merchantId: string, options?: RequestOptions) => Promise<WithResponse<UserList>>
    retrieve: (merchantId: string, userId: string, options?: RequestOptions) => Promise<WithResponse<User>>
    /** Changes the role; the user's sessions end. */
    update: (merchantId: string, userId: string, body: UpdateUserRequest, options?: RequestOptions) => Promise<WithResponse<User>>
    remove: (merchantId: string, userId: string, options?: RequestOptions) => Promise<void>
  }
  /** Who changed what: your own log (a merchant key), or a merchant's (the operator's key, with `merchantId`). */
  auditLog: {
    list: (query?: ListAuditLogQuery, options?: RequestOptions) => AsyncIterable<AuditEntry>
    listForMerchant: (merchantId: string, query?: ListAuditLogQuery, options?: RequestOptions) => AsyncIterable<AuditEntry>
  }
  apiKeys: {
    /** The answer carries the key's `secret`, shown this once (a replay under the same Idempotency-Key shows it again). */
    create: (merchantId: string, body?: CreateApiKeyRequest, options?: RequestOptions) => Promise<WithResponse<CreatedApiKey>>
    list: (merchantId: string, options?: RequestOptions) => Promise<WithResponse<ApiKeyCollection>>
    revoke: (merchantId: string, keyId: string, options?: RequestOptions) => Promise<void>
  }
  webhookEndpoints: {
    /** The answer carries the endpoint's signing `secret` (for `verifyWebhook`), shown this once. */
    create: (merchantId: string, body: CreateWebhookEndpointRequest, options?: RequestOptions) => Promise<WithResponse<WebhookEndpointWithSecret>>
    retrieve: (merchantId: string, endpointId: string, options?: RequestOptions) => Promise<WithResponse<WebhookEndpoint>>
    list: (merchantId: string, options?: RequestOptions) => Promise<WithResponse<WebhookEndpointCollection>>
    update: (merchantId: string, endpointId: string, patch: UpdateWebhookEndpointRequest, options?: RequestOptions) => Promise<WithResponse<WebhookEndpoint>>
    delete: (merchantId: string, endpointId: string, options?: RequestOptions) => Promise<void>
    rotateSecret: (merchantId: string, endpointId: string, body?: RotateWebhookSecretRequest, options?: RequestOptions) => Promise<WithResponse<WebhookEndpointWithSecret>>
    deliveries: (merchantId: string, endpointId: string, options?: RequestOptions) => AsyncIterable<WebhookDelivery>
    retryDelivery: (merchantId: string, endpointId: string, deliveryId: string, options?: RequestOptions) => Promise<WithResponse<WebhookDelivery>>
    replay: (merchantId: string, endpointId: string, body: ReplayWebhookEventsRequest, options?: RequestOptions) => Promise<WithResponse<ReplayResult>>
    /**
     * Sends one signed `webhook_endpoint.test` event to the endpoint now and answers the delivery as recorded: `succeeded`
     * (the receiver answered 2xx) or `failed` (its status and answer, or the connection error, in `attemptLog[0]`).
     */
    sendTest: (merchantId: string, endpointId: string, options?: RequestOptions) => Promise<WithResponse<WebhookDelivery>>
  }
  products: {
    retrieve: (id: string, options?: RequestOptions) => Promise<WithResponse<Product>>
    /** Creates or replaces the product (PUT); `ifMatch` / `ifNoneMatch: '*'` make it conditional (412 otherwise). */
    replace: (id: string, body: ProductReplacement, options?: RequestOptions & { ifMatch?: string, ifNoneMatch?: string }) => Promise<WithResponse<Product>>
  }
  /** The operator's probes and the service's index. */
  service: {
    index: (options?: RequestOptions) => Promise<WithResponse<ServiceIndex>>
    live: (options?: RequestOptions) => Promise<WithResponse<Health>>
    /** Ready to serve (the database answers): a 503 `ApiError` otherwise. */
    ready: (options?: RequestOptions) => Promise<WithResponse<Health>>
  }
  connectors: {
    create: (merchantId: string, body: CreateConnectorRequest, options?: RequestOptions) => Promise<WithResponse<ConnectorAccount>>
    retrieve: (merchantId: string, connectorId: string, options?: RequestOptions) => Promise<WithResponse<ConnectorAccount>>
    list: (merchantId: string, options?: RequestOptions) => Promise<WithResponse<ConnectorAccountCollection>>
    update: (merchantId: string, connectorId: string, patch: UpdateConnectorRequest, options?: RequestOptions) => Promise<WithResponse<ConnectorAccount>>
    delete: (merchantId: string, connectorId: string, options?: RequestOptions) => Promise<void>
    /** Per connector account: charge calls by outcome, success rate and p50/p95 latency over `createdGte`..`createdLt` (default: the last 30 days). */
    stats: (merchantId: string, query?: ConnectorStatsQuery, options?: RequestOptions) => Promise<WithResponse<ConnectorStats>>
  }
}

/**
 * The client: typed helpers per resource (they return the resource, with its `lastResponse`, or throw `ApiError` /
 * `ApiConnectionError`) and `api`, the openapi-fetch client for every operation of the document.
 */
export function createClient (options: ClientOptions): PaymentServiceClient {
  const fetch = idempotentRetryingFetch(options.fetch ?? ((request) => globalThis.fetch(request)), {
    maxRetries: options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries,
    baseDelayMs: options.retryBaseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
    maxDelayMs: options.maxRetryDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
    maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULT_RETRY_POLICY.maxRetryAfterMs
  }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS)
  const api: ApiClient = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    headers: { Authorization: `Bearer ${options.apiKey}`, 'Api-Version': options.apiVersion },
    fetch
  })
  /** The per-call part of a request: headers (with the Idempotency-Key of a POST), signal, time-out. */
  const init = (call: RequestOptions | undefined, extra: Record<string, string | undefined> = {}) => ({
    headers: { ...call?.headers, ...extra, ...(call?.idempotencyKey === undefined ? {} : { 'Idempotency-Key': call.idempotencyKey }) },
    ...(call?.signal === undefined ? {} : { signal: call.signal }),
    ...(call?.timeoutMs === undefined ? {} : { fetch: async (request: Request) => await fetch(withCallSettings(request, { timeoutMs: call.timeoutMs })) })
  })

  return {
    api,
    payments: {
      create: (body, call) => resultOf(api.POST('/api/payments', { body, ...init(call) })),
      retrieve: (id, call) => resultOf(api.GET('/api/payments/{id}', { params: { path: { id } }, ...init(call) })),
      list: (query = {}, call) => paginate((startingAfter) =>
        resultOf(api.GET('/api/payments', { params: { query: { ...query, startingAfter } }, ...init(call) }))),
      capture: (id, body = {}, call) => resultOf(api.POST('/api/payments/{id}/capture', { params: { path: { id } }, body, ...init(call) })),
      cancel: (id, call) => resultOf(api.POST('/api/payments/{id}/cancel', { params: { path: { id } }, ...init(call) })),
      summary: (query = {}, call) => resultOf(api.GET('/api/payments/summary', { params: { query }, ...init(call) })),
      export: async (query = {}, call) => await textOf(api.GET('/api/payments/export', { params: { query }, parseAs: 'text', ...init(call) })),
      refunds: {
        create: (paymentId, body = {}, call) =>
          resultOf(api.POST('/api/payments/{id}/refunds', { params: { path: { id: paymentId } }, body, ...init(call) })),
        retrieve: (paymentId, refundId, call) =>
          resultOf(api.GET('/api/payments/{id}/refunds/{refundId}', { params: { path: { id: paymentId, refundId } }, ...init(call) })),
        list: (paymentId, call) => paginate((startingAfter) =>
          resultOf(api.GET('/api/payments/{id}/refunds', { params: { path: { id: paymentId }, query: { startingAfter } }, ...init(call) }))),
        listAll: (query = {}, call) => paginate((startingAfter) =>
          resultOf(api.GET('/api/refunds', { params: { query: { ...query, startingAfter } }, ...init(call) }))),
        export: async (query = {}, call) => await textOf(api.GET('/api/refunds/export', { params: { query }, parseAs: 'text', ...init(call) }))
      }
    },
    disputes: {
      retrieve: (id, call) => resultOf(api.GET('/api/disputes/{id}', { params: { path: { id } }, ...init(call) })),
      accept: (id, call) => resultOf(api.POST('/api/disputes/{id}/accept', { params: { path: { id } }, ...init(call) })),
      list: (query = {}, call) => paginate((startingAfter) =>
        resultOf(api.GET('/api/disputes', { params: { query: { ...query, startingAfter } }, ...init(call) })))
    },
    events: {
      retrieve: (id, call) => resultOf(api.GET('/api/events/{id}', { params: { path: { id } }, ...init(call) })),
      list: (query = {}, call) => paginate((startingAfter) =>
        resultOf(api.GET('/api/events', { params: { query: { ...query, startingAfter } }, ...init(call) })))
    },
    merchants: {
      create: (body, call) => resultOf(api.POST('/merchants', { body, ...init(call) })),
      retrieve: (id, call) => resultOf(api.GET('/merchants/{id}', { params: { path: { id } }, ...init(call) })),
      update: (id, patch, call) =>
        resultOf(api.PATCH('/merchants/{id}', { params: { path: { id } }, body: patch, ...init(call, { 'If-Match': call?.ifMatch }) })),
      list: (call) => paginate((startingAfter) => resultOf(api.GET('/merchants', { params: { query: { startingAfter } }, ...init(call) })))
    },
    users: {
      invite: (merchantId, body, call) => resultOf(api.POST('/merchants/{id}/users', { params: { path: { id: merchantId } }, body, ...init(call) })),
      list: (merchantId, call) => resultOf(api.GET('/merchants/{id}/users', { params: { path: { id: merchantId } }, ...init(call) })),
      retrieve: (merchantId, userId, call) => resultOf(api.GET('/merchants/{id}/users/{userId}', { params: { path: { id: merchantId, userId } }, ...init(call) })),
      update: (merchantId, userId, body, call) =>
        resultOf(api.PATCH('/merchants/{id}/users/{userId}', { params: { path: { id: merchantId, userId } }, body, ...init(call) })),
      remove: (merchantId, userId, call) =>
        noContent(api.DELETE('/merchants/{id}/users/{userId}', { params: { path: { id: merchantId, userId } }, ...init(call) }))
    },
    auditLog: {
      list: (query = {}, call) => paginate((startingAfter) =>
        resultOf(api.GET('/api/audit-log', { params: { query: { ...query, startingAfter } }, ...init(call) }))),
      listForMerchant: (merchantId, query = {}, call) => paginate((startingAfter) =>
        resultOf(api.GET('/merchants/{id}/audit-log', { params: { path: { id: merchantId }, query: { ...query, startingAfter } }, ...init(call) })))
    },
    apiKeys: {
      create: (merchantId, body = {}, call) =>
        resultOf(api.POST('/merchants/{id}/api-keys', { params: { path: { id: merchantId } }, body, ...init(call) })),
      list: (merchantId, call) => resultOf(api.GET('/merchants/{id}/api-keys', { params: { path: { id: merchantId } }, ...init(call) })),
      revoke: (merchantId, keyId, call) =>
        noContent(api.DELETE('/merchants/{id}/api-keys/{keyId}', { params: { path: { id: merchantId, keyId } }, ...init(call) }))
    },
    webhookEndpoints: {
      create: (merchantId, body, call) => resultOf(api.POST('/merchants/{id}/webhook-endpoints', {
        params: { path: { id: merchantId } },
        // The endpoint speaks the client's version unless told otherwise: verifyWebhook's default then fits its deliveries.
        body: body.apiVersion === undefined && options.apiVersion !== undefined ? { ...body, apiVersion: options.apiVersion } : body,
        ...init(call)
      })),
      retrieve: (merchantId, endpointId, call) =>
        resultOf(api.GET('/merchants/{id}/webhook-endpoints/{endpointId}', { params: { path: { id: merchantId, endpointId } }, ...init(call) })),
      list: (merchantId, call) => resultOf(api.GET('/merchants/{id}/webhook-endpoints', { params: { path: { id: merchantId } }, ...init(call) })),
      update: (merchantId, endpointId, patch, call) =>
        resultOf(api.PATCH('/merchants/{id}/webhook-endpoints/{endpointId}', { params: { path: { id: merchantId, endpointId } }, body: patch, ...init(call) })),
      delete: (merchantId, endpointId, call) =>
        noContent(api.DELETE('/merchants/{id}/webhook-endpoints/{endpointId}', { params: { path: { id: merchantId, endpointId } }, ...init(call) })),
      rotateSecret: (merchantId, endpointId, body = {}, call) =>
        resultOf(api.POST('/merchants/{id}/webhook-endpoints/{endpointId}/rotate-secret', { params: { path: { id: merchantId, endpointId } }, body, ...init(call) })),
      deliveries: (merchantId, endpointId, call) => paginate((startingAfter) =>
        resultOf(api.GET('/merchants/{id}/webhook-endpoints/{endpointId}/deliveries', {
          params: { path: { id: merchantId, endpointId }, query: { startingAfter } },
          ...init(call)
        }))),
      retryDelivery: (merchantId, endpointId, deliveryId, call) =>
        resultOf(api.POST('/merchants/{id}/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry', {
          params: { path: { id: merchantId, endpointId, deliveryId } },
          ...init(call)
        })),
      replay: (merchantId, endpointId, body, call) =>
        resultOf(api.POST('/merchants/{id}/webhook-endpoints/{endpointId}/replay', { params: { path: { id: merchantId, endpointId } }, body, ...init(call) })),
      sendTest: (merchantId, endpointId, call) =>
        resultOf(api.POST('/merchants/{id}/webhook-endpoints/{endpointId}/test', { params: { path: { id: merchantId, endpointId } }, ...init(call) }))
    },
    products: {
      retrieve: (id, call) => resultOf(api.GET('/products/{id}', { params: { path: { id } }, ...init(call) })),
      replace: (id, body, call) => resultOf(api.PUT('/products/{id}', {
        params: { path: { id } },
        body,
        ...init(call, { 'If-Match': call?.ifMatch, 'If-None-Match': call?.ifNoneMatch })
      }))
    },
    service: {
      index: (call) => resultOf(api.GET('/', { ...init(call) })),
      live: (call) => resultOf(api.GET('/health/live', { ...init(call) })),
      ready: (call) => resultOf(api.GET('/health/ready', { ...init(call) }))
    },
    connectors: {
      create: (merchantId, body, call) => resultOf(api.POST('/merchants/{id}/connectors', { params: { path: { id: merchantId } }, body, ...init(call) })),
      retrieve: (merchantId, connectorId, call) =>
        resultOf(api.GET('/merchants/{id}/connectors/{connectorId}', { params: { path: { id: merchantId, connectorId } }, ...init(call) })),
      list: (merchantId, call) => resultOf(api.GET('/merchants/{id}/connectors', { params: { path: { id: merchantId } }, ...init(call) })),
      update: (merchantId, connectorId, patch, call) =>
        resultOf(api.PATCH('/merchants/{id}/connectors/{connectorId}', { params: { path: { id: merchantId, connectorId } }, body: patch, ...init(call) })),
      delete: (merchantId, connectorId, call) =>
        noContent(api.DELETE('/merchants/{id}/connectors/{connectorId}', { params: { path: { id: merchantId, connectorId } }, ...init(call) })),
      stats: (merchantId, query = {}, call) =>
        resultOf(api.GET('/merchants/{id}/connectors/stats', { params: { path: { id: merchantId }, query }, ...init(call) }))
    }
  }
}

/** What a response says besides its body. */
export function responseInfo (response: Response): ResponseInfo {
  return {
    status: response.status,
    requestId: response.headers.get('x-request-id') ?? undefined,
    idempotentReplayed: response.headers.get('idempotent-replayed') === 'true',
    apiVersion: response.headers.get('api-version') ?? undefined,
    headers: response.headers
  }
}

/** The body of a success with its `lastResponse`, or an `ApiError` carrying the error's problem document. */
async function resultOf<Data extends object> (call: Promise<{ data?: Data, error?: unknown, response: Response }>): Promise<WithResponse<Data>> {
  const { data, error, response } = await call
  if (!response.ok) throw new ApiError(response, error)
  if (data === undefined) throw new Error(`HTTP ${response.status} without the body the document promises (${response.url})`)
  return Object.defineProperty(data, 'lastResponse', { value: responseInfo(response), enumerable: false }) as WithResponse<Data>
}

async function textOf (call: Promise<{ data?: unknown, error?: unknown, response: Response }>): Promise<string> {
  const { data, error, response } = await call
  if (!response.ok) throw new ApiError(response, error)
  return typeof data === 'string' ? data : ''
}

async function noContent (call: Promise<{ error?: unknown, response: Response }>): Promise<void> {
  const { error, response } = await call
  if (!response.ok) throw new ApiError(response, error)
}
