import createFetchClient, { type Client } from 'openapi-fetch'
import type { paths } from './generated/schema.js'
import { ApiError } from './errors.js'
import { paginate } from './pagination.js'
import { DEFAULT_RETRY_POLICY, idempotentRetryingFetch, type Fetch } from './retry.js'
import type {
  ApiVersion, CreateApiKeyRequest, CreateMerchantRequest, CreatePaymentRequest, CreateRefundRequest,
  CreateWebhookEndpointRequest, ListEventsQuery, ListPaymentsQuery
} from './types.js'

export interface ClientOptions {
  /**
   * The service's origin, e.g. `https://payments.example.com` or `http://127.0.0.1:3000` (the document's
   * `servers` is `/`, relative to where it is served, so a client must be told the origin).
   */
  baseUrl: string
  /** A merchant key (`Authorization: Bearer …`), or the admin key for merchants and their keys. */
  apiKey: string
  /** Sent as `Api-Version` on every request; without it the merchant's pinned version answers. */
  apiVersion?: ApiVersion
  /** Retries of 409 `idempotency-key-in-use`, 429 and 503 after the first attempt (default 2; 0: none). */
  maxRetries?: number
  /** The first back-off in ms, doubled per retry, with jitter (default 500). */
  retryBaseDelayMs?: number
  /** The longest wait in ms; a `Retry-After` asking for more is not retried (default 8000). */
  maxRetryDelayMs?: number
  /** Your own fetch (a proxy agent, a test double); default `globalThis.fetch`. */
  fetch?: Fetch
}

/** Per call: the `Idempotency-Key` to send (default: a new UUID per call, reused by its own retries). */
export interface CreateOptions {
  idempotencyKey?: string
}

export type ApiClient = Client<paths>

/**
 * The client: typed helpers per resource (they return the resource or throw `ApiError`) and `api`, the
 * openapi-fetch client for every operation of the document (`api.GET('/api/events/{id}', …)`), which
 * goes through the same idempotency keys and retries.
 */
export function createClient (options: ClientOptions) {
  const api: ApiClient = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    headers: { Authorization: `Bearer ${options.apiKey}`, 'Api-Version': options.apiVersion },
    fetch: idempotentRetryingFetch(options.fetch ?? ((request) => globalThis.fetch(request)), {
      maxRetries: options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries,
      baseDelayMs: options.retryBaseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
      maxDelayMs: options.maxRetryDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs
    })
  })
  const key = (create?: CreateOptions) => ({ 'Idempotency-Key': create?.idempotencyKey })

  return {
    api,
    payments: {
      create: (body: CreatePaymentRequest, create?: CreateOptions) =>
        resultOf(api.POST('/api/payments', { body, headers: key(create) })),
      retrieve: (id: string) =>
        resultOf(api.GET('/api/payments/{id}', { params: { path: { id } } })),
      /** Every payment matching `query`, newest first, page by page. */
      list: (query: ListPaymentsQuery = {}) => paginate((startingAfter) =>
        resultOf(api.GET('/api/payments', { params: { query: { ...query, startingAfter } } }))),
      cancel: (id: string) =>
        resultOf(api.POST('/api/payments/{id}/cancel', { params: { path: { id } } })),
      refunds: {
        create: (paymentId: string, body: CreateRefundRequest = {}, create?: CreateOptions) =>
          resultOf(api.POST('/api/payments/{id}/refunds', { params: { path: { id: paymentId } }, body, headers: key(create) })),
        list: (paymentId: string) => paginate((startingAfter) =>
          resultOf(api.GET('/api/payments/{id}/refunds', { params: { path: { id: paymentId }, query: { startingAfter } } })))
      }
    },
    events: {
      retrieve: (id: string) =>
        resultOf(api.GET('/api/events/{id}', { params: { path: { id } } })),
      list: (query: ListEventsQuery = {}) => paginate((startingAfter) =>
        resultOf(api.GET('/api/events', { params: { query: { ...query, startingAfter } } })))
    },
    merchants: {
      create: (body: CreateMerchantRequest, create?: CreateOptions) =>
        resultOf(api.POST('/merchants', { body, headers: key(create) })),
      retrieve: (id: string) =>
        resultOf(api.GET('/merchants/{id}', { params: { path: { id } } })),
      list: () => paginate((startingAfter) =>
        resultOf(api.GET('/merchants', { params: { query: { startingAfter } } })))
    },
    apiKeys: {
      /** The answer carries the key's `secret`, shown this once. */
      create: (merchantId: string, body: CreateApiKeyRequest = {}) =>
        resultOf(api.POST('/merchants/{id}/api-keys', { params: { path: { id: merchantId } }, body }))
    },
    webhookEndpoints: {
      /** The answer carries the endpoint's signing `secret` (for `verifyWebhook`), shown this once. */
      create: (merchantId: string, body: CreateWebhookEndpointRequest) =>
        resultOf(api.POST('/merchants/{id}/webhook-endpoints', { params: { path: { id: merchantId } }, body })),
      deliveries: (merchantId: string, endpointId: string) => paginate((startingAfter) =>
        resultOf(api.GET('/merchants/{id}/webhook-endpoints/{endpointId}/deliveries', {
          params: { path: { id: merchantId, endpointId }, query: { startingAfter } }
        })))
    }
  }
}

export type PaymentServiceClient = ReturnType<typeof createClient>

/** The body of a success, or an `ApiError` carrying the error's problem document. */
async function resultOf<Data> (call: Promise<{ data?: Data, error?: unknown, response: Response }>): Promise<Data> {
  const { data, error, response } = await call
  if (!response.ok) throw new ApiError(response, error)
  if (data === undefined) throw new Error(`HTTP ${response.status} without the body the document promises (${response.url})`)
  return data
}
