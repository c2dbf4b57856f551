/** The fetch the client sends through: a Request in, a Response out (globalThis.fetch fits). */
export type Fetch = (request: Request) => Promise<Response>

export interface RetryPolicy {
  /** Retries after the first attempt (0 turns retrying off). */
  maxRetries: number
  /** The first back-off; each retry doubles it, with jitter. */
  baseDelayMs: number
  /** The longest back-off the client chooses itself (without a `Retry-After`). */
  maxDelayMs: number
  /**
   * The longest `Retry-After` honoured: the server's wait is respected up to this; an answer asking for more is not
   * retried, and its `ApiError` says so (`retryNotAttempted`).
   */
  maxRetryAfterMs: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 2, baseDelayMs: 500, maxDelayMs: 8000, maxRetryAfterMs: 60_000 }

/** Stripe's default: a call that has had no answer for this long is abandoned (and retried when it may be). */
export const DEFAULT_TIMEOUT_MS = 80_000

/** 409s that mean "not now" (the same request may succeed after Retry-After), unlike conflicts of state. */
const RETRYABLE_CONFLICTS = new Set(['urn:problem-type:idempotency-key-in-use', 'urn:problem-type:webhook-delivery-in-flight'])

/**
 * No answer: the connection failed (refused, reset, DNS) or the time-out ran out. `timedOut` tells which. A POST
 * that ends so may have acted: retry it with the same `idempotencyKey` (the client already did, `attempts` times in
 * all) and the service replays what it did, or does it once.
 */
export class ApiConnectionError extends Error {
  override readonly name = 'ApiConnectionError'
  constructor (message: string, readonly timedOut: boolean, readonly attempts: number, readonly idempotencyKey: string | undefined, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** Why an answer that is retryable was not retried (the Retry-After was longer than allowed, or retries ran out). */
const notRetried = new WeakMap<Response, string>()

/** The note `idempotentRetryingFetch` left on an answer it did not retry although it could have been. */
export function retryNoteOf (response: Response): string | undefined {
  return notRetried.get(response)
}

/** What the client was told to do per call (taken out of the request before it is sent). */
export interface CallSettings {
  timeoutMs?: number
}

/** Per-call settings travel from the helpers to the fetch wrapper on the Request object itself (never sent). */
const callSettings = new WeakMap<Request, CallSettings>()
export function withCallSettings (request: Request, settings: CallSettings): Request {
  callSettings.set(request, settings)
  return request
}

/**
 * Wraps `fetch`: every POST carries an `Idempotency-Key` (the caller's, else a UUID made once per call), and each
 * attempt has a time-out (`timeoutMs`, per call or the client's). Retried, always with the same key: 409
 * `idempotency-key-in-use` and `webhook-delivery-in-flight`, 429 and 503 (after `Retry-After`, up to `maxRetryAfterMs`), and a request that got no
 * answer (connection error or time-out) when it is safe to send again: a GET or HEAD, or a request with an
 * `Idempotency-Key` (every POST), which the service replays instead of acting twice. PATCH and DELETE without a
 * key are not retried after a connection error. The caller's own `signal` aborting is never retried.
 */
export function idempotentRetryingFetch (fetch: Fetch, policy: RetryPolicy, timeoutMs = DEFAULT_TIMEOUT_MS, random = Math.random): Fetch {
  return async (request) => {
    if (request.method === 'POST' && !request.headers.has('idempotency-key')) {
      request.headers.set('Idempotency-Key', globalThis.crypto.randomUUID())
    }
    const key = request.headers.get('idempotency-key') ?? undefined
    const mayResend = key !== undefined || request.method === 'GET' || request.method === 'HEAD'
    const timeout = callSettings.get(request)?.timeoutMs ?? timeoutMs
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= policy.maxRetries
      const timer = AbortSignal.timeout(timeout)
      const signal = AbortSignal.any([request.signal, timer])
      let response: Response
      try {
        response = await fetch(new Request(last ? request : request.clone(), { signal }))
      } catch (error) {
        if (request.signal.aborted) throw error
        const timedOut = timer.aborted
        const what = timedOut ? `no answer within ${timeout} ms` : `the connection failed (${describe(error)})`
        if (last || !mayResend) {
          const why = !mayResend ? 'not retried: a ' + request.method + ' without an Idempotency-Key may have acted' : `after ${attempt + 1} attempts`
          throw new ApiConnectionError(`${request.method} ${request.url}: ${what}, ${why}`, timedOut, attempt + 1, key, { cause: error })
        }
        await sleep(backoffMs(attempt, policy, random), request.signal)
        continue
      }
      if (!(await isRetryable(response))) return response
      if (last) {
        if (policy.maxRetries > 0) notRetried.set(response, `not retried again: ${attempt + 1} attempts made (maxRetries ${policy.maxRetries})`)
        return response
      }
      const retryAfter = response.headers.get('retry-after')
      const delayMs = retryDelayMs(retryAfter, attempt, policy, random)
      if (delayMs === undefined) {
        notRetried.set(response, `not retried: Retry-After asks for ${retryAfter ?? '?'} s, more than maxRetryAfterMs (${policy.maxRetryAfterMs} ms)`)
        return response
      }
      await response.body?.cancel()
      await sleep(delayMs, request.signal)
    }
  }
}

function describe (error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
  return cause instanceof Error ? cause.message : String(cause)
}

async function sleep (ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted()
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { signal.removeEventListener('abort', abort); resolve() }, ms)
    const abort = () => { clearTimeout(timer); reject(signal.reason) }
    signal.addEventListener('abort', abort, { once: true })
  })
}

async function isRetryable (response: Response): Promise<boolean> {
  if (response.status === 429 || response.status === 503) return true
  if (response.status !== 409) return false
  const body: unknown = await response.clone().json().catch(() => undefined)
  return typeof body === 'object' && body !== null && 'type' in body && typeof body.type === 'string' && RETRYABLE_CONFLICTS.has(body.type)
}

function backoffMs (attempt: number, policy: RetryPolicy, random: () => number): number {
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt)
  return backoff / 2 + random() * backoff / 2
}

/**
 * Exponential back-off with equal jitter (half fixed, half random), capped at `maxDelayMs`, and never sooner than
 * `Retry-After` (seconds or an HTTP date), which is honoured up to `maxRetryAfterMs`; undefined when the server asks
 * for more than that.
 */
export function retryDelayMs (retryAfter: string | null, attempt: number, policy: RetryPolicy, random = Math.random): number | undefined {
  const jittered = backoffMs(attempt, policy, random)
  const asked = retryAfterMs(retryAfter)
  if (asked === undefined) return jittered
  if (asked > policy.maxRetryAfterMs) return undefined
  return Math.max(asked, Math.min(jittered, policy.maxDelayMs))
}

function retryAfterMs (value: string | null): number | undefined {
  if (value === null) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}
