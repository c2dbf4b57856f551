import type { LoadRequest } from './load'

/** What each service instance is seeded with before it is measured. */
export interface Seed {
  productId: string
  putProductId: string
  replayKey: string
  paymentId: string
  /** Authorization headers: the admin key (product writes) and a merchant key (payments). */
  adminAuth: { authorization: string }
  merchantAuth: { authorization: string }
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
  request: (seed: Seed, runId: string) => LoadRequest
}

const JSON_BODY = { 'content-type': 'application/json' }
export const PRODUCT_BODY = JSON.stringify({ name: 'Espresso cup', price: 12.5 })
export const PAYMENT_BODY = JSON.stringify({ amount: 10.1, currency: 'USD' })

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
  }
]
