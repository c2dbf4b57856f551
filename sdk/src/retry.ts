/** The fetch the client sends through: a Request in, a Response out (globalThis.fetch fits). */
export type Fetch = (request: Request) => Promise<Response>

export interface RetryPolicy {
  /** Retries after the first attempt (0 turns retrying off). */
  maxRetries: number
  /** The first back-off; each retry doubles it, with jitter. */
  baseDelayMs: number
  /** No wait is longer; a `Retry-After` asking for more is not retried (the error reaches the caller). */
  maxDelayMs: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 2, baseDelayMs: 500, maxDelayMs: 8000 }

const IDEMPOTENCY_KEY_IN_USE = 'urn:problem-type:idempotency-key-in-use'

/**
 * Wraps `fetch`: every POST carries an `Idempotency-Key` (the caller's, else a UUID made once per
 * call), and the retries of 409 `idempotency-key-in-use`, 429 and 503 send that same key, so a retried
 * payment or refund is replayed by the service, never made twice.
 */
export function idempotentRetryingFetch (fetch: Fetch, policy: RetryPolicy): Fetch {
  return async (request) => {
    if (request.method === 'POST' && !request.headers.has('idempotency-key')) {
      request.headers.set('Idempotency-Key', globalThis.crypto.randomUUID())
    }
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(attempt < policy.maxRetries ? request.clone() : request)
      if (attempt >= policy.maxRetries || !(await isRetryable(response))) return response
      const delayMs = retryDelayMs(response.headers.get('retry-after'), attempt, policy)
      if (delayMs === undefined) return response
      await response.body?.cancel()
      await new Promise((resolve) => setTimeout(resolve, delayMs))
    }
  }
}

async function isRetryable (response: Response): Promise<boolean> {
  if (response.status === 429 || response.status === 503) return true
  if (response.status !== 409) return false
  const body: unknown = await response.clone().json().catch(() => undefined)
  return typeof body === 'object' && body !== null && 'type' in body && body.type === IDEMPOTENCY_KEY_IN_USE
}

/**
 * Exponential back-off with equal jitter (half fixed, half random), never sooner than `Retry-After`
 * (seconds or an HTTP date); undefined when the server asks for more than `maxDelayMs`.
 */
export function retryDelayMs (retryAfter: string | null, attempt: number, policy: RetryPolicy, random = Math.random): number | undefined {
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt)
  const jittered = backoff / 2 + random() * backoff / 2
  const asked = retryAfterMs(retryAfter)
  if (asked === undefined) return jittered
  if (asked > policy.maxDelayMs) return undefined
  return Math.min(policy.maxDelayMs, Math.max(asked, jittered))
}

function retryAfterMs (value: string | null): number | undefined {
  if (value === null) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}
