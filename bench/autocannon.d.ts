/** The part of autocannon's programmatic API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  function autocannon (options: autocannon.Options): autocannon.Instance

  namespace autocannon {
    interface RequestData {
      method?: string
      path?: string
      headers?: Record<string, string>
      body?: string | Buffer
    }

    interface Request extends RequestData {
      /** Returning undefined skips this request (and the rest of the sequence) on this pass. */
      setupRequest?: (request: RequestData, context: Record<string, unknown>) => RequestData | undefined
      /** Called with each response to this request (its body as text), before the next request is set up. */
      onResponse?: (status: number, body: string, context: Record<string, unknown>) => void
    }

    interface Options {
      url: string
      connections?: number
      duration?: number
      pipelining?: number
      timeout?: number
      requests?: Request[]
    }

    interface Histogram { average: number, p50: number, p99: number, max: number, total: number }

    interface Result {
      duration: number
      errors: number
      timeouts: number
      non2xx: number
      requests: Histogram & { sent: number }
      latency: Histogram
      statusCodeStats: Record<string, { count: number }>
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop: () => void
    }
  }

  export = autocannon
}
