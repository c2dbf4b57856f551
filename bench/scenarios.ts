import type { LoadRequest } from './load'

/** What each service instance is seeded with before it is measured. */
export interface Seed {
  productId: string
  putProductId: string
  replayKey: string
  paymentId: string
  /**
   * Payments the refund scenario refunds, round-robin, a small amount each: many rather than one, so concurrent
   * refunds mostly lock different payments (refunds of one payment are serialised on its row) as real refunds would.
   */
  refundPaymentIds: string[]
  /** Authorization headers: the admin key (product writes) and a merchant key (payments). */
  adminAuth: { authorization: string }
  merchantAuth: { authorization: string }
  /** A merchant with one `simulated` connector account: its payments are routed through the connector (issue 25). */
  connectorMerchantAuth: { authorization: string }
}

export interface Scenario {
  name: string
  title: string
  /** Writes to the database on every request (also measured with SQLITE_SYNCHRONOUS=NORMAL, informatively). */
  writes: boolean
  /** Minimum req/s as a fraction of the baseline's in the same round, when the issue sets one. */
  ratioTarget?: number
  /** Minimum req/s as a multiple of the in-memory Express peer's in the same round (issue 17). */
  peerRatioTarget?: number
  /**
   * Minimum requests per core on PostgreSQL, the service's CPU and the database server's added (issue 29), checked on
   * the one-instance PostgreSQL row.
   */
  postgresPerCoreTarget?: number
  /** Measured and reported only: issue 17 sets this scenario no target (not even the p99 one). */
  reportOnly?: boolean
  request: (seed: Seed, runId: string) => LoadRequest
}

const JSON_BODY = { 'content-type': 'application/json' }
export const PRODUCT_BODY = JSON.stringify({ name: 'Espresso cup', price: 12.5 })
export const PAYMENT_BODY = JSON.stringify({ amount: 10.1, currency: 'USD' })
/**
 * The payments the refund scenario refunds: the largest round amount below 1,000,000 (not one of the simulated
 * gateway's special amounts), refunded 0.01 at a time, so each can take ~100 million refunds: a run never exhausts them.
 */
export const REFUNDABLE_PAYMENT_BODY = JSON.stringify({ amount: 999999.99, currency: 'USD' })
/** An authorization only (manual capture): the capture scenario captures it with its follow-up request. */
export const MANUAL_PAYMENT_BODY = JSON.stringify({ amount: 10.1, currency: 'USD', captureMethod: 'manual' })
/** The capture scenario's follow-up: the whole authorization, the payment's id put in place of `{id}`. */
export const CAPTURE_PATH = '/api/payments/{id}/capture'
export const REFUND_BODY = JSON.stringify({ amount: 0.01 })
/** How many payments the refund scenario spreads its refunds over (≥ the connections, so few requests wait on one row). */
export const REFUND_PAYMENTS = 100
/** The list scenario's page size; seeding leaves at least this many payments (REFUND_PAYMENTS + 1). */
export const LIST_LIMIT = 10

export const SCENARIOS: Scenario[] = [
  {
    name: 'get-product',
    title: 'GET /products/{id}',
    writes: false,
    ratioTarget: 0.5,
    request: (seed) => ({ method: 'GET', path: `/products/${seed.productId}`, headers: {} })
  },
  {
    name: 'put-product',
    title: 'PUT /products/{id}',
    writes: true,
    request: (seed) => ({ method: 'PUT', path: `/products/${seed.putProductId}`, headers: { ...JSON_BODY, ...seed.adminAuth }, body: PRODUCT_BODY })
  },
  {
    name: 'post-payment',
    title: 'POST /api/payments (fresh key)',
    writes: true,
    ratioTarget: 0.25,
    peerRatioTarget: 1.5,
    postgresPerCoreTarget: 1500,
    request: (seed, runId) => ({ method: 'POST', path: '/api/payments', headers: { ...JSON_BODY, ...seed.merchantAuth }, body: PAYMENT_BODY, freshKeyPrefix: runId })
  },
  {
    name: 'replay-payment',
    title: 'POST /api/payments (replayed key)',
    writes: false,
    ratioTarget: 0.4,
    request: (seed) => ({ method: 'POST', path: '/api/payments', headers: { ...JSON_BODY, ...seed.merchantAuth, 'idempotency-key': seed.replayKey }, body: PAYMENT_BODY })
  },
  {
    name: 'get-payment',
    title: 'GET /api/payments/{id}',
    writes: false,
    ratioTarget: 0.4,
    request: (seed) => ({ method: 'GET', path: `/api/payments/${seed.paymentId}`, headers: { ...seed.merchantAuth } })
  },
  {
    name: 'refund',
    title: 'POST /api/payments/{id}/refunds',
    writes: true,
    reportOnly: true,
    // A partial refund of 0.01 with a fresh Idempotency-Key, spread round-robin over the seeded refundable payments.
    request: (seed, runId) => ({
      method: 'POST',
      path: refundPath(seed.refundPaymentIds[0] ?? ''),
      paths: seed.refundPaymentIds.map(refundPath),
      headers: { ...JSON_BODY, ...seed.merchantAuth },
      body: REFUND_BODY,
      freshKeyPrefix: runId
    })
  },
  {
    name: 'capture',
    title: 'POST /api/payments (manual) + …/capture',
    writes: true,
    reportOnly: true,
    // Two requests per payment, one after the other on a connection: the authorization, then its capture (each with a
    // fresh key); the figures are per request, the two averaged.
    request: (seed, runId) => ({
      method: 'POST',
      path: '/api/payments',
      headers: { ...JSON_BODY, ...seed.merchantAuth },
      body: MANUAL_PAYMENT_BODY,
      freshKeyPrefix: runId,
      followUp: { method: 'POST', path: CAPTURE_PATH, body: '{}' }
    })
  },
  {
    name: 'connector-payment',
    title: 'POST /api/payments (connector account)',
    writes: true,
    reportOnly: true,
    // A fresh-key payment of a merchant with a simulated connector account: routed through the account, its credentials
    // decrypted (cached) and its gateway built, instead of the instance's default gateway.
    request: (seed, runId) => ({ method: 'POST', path: '/api/payments', headers: { ...JSON_BODY, ...seed.connectorMerchantAuth }, body: PAYMENT_BODY, freshKeyPrefix: runId })
  },
  {
    name: 'list-payments',
    title: `GET /api/payments?limit=${LIST_LIMIT}`,
    writes: false,
    reportOnly: true,
    request: (seed) => ({ method: 'GET', path: `/api/payments?limit=${LIST_LIMIT}`, headers: { ...seed.merchantAuth } })
  }
]

export function refundPath (paymentId: string): string {
  return `/api/payments/${paymentId}/refunds`
}
