import autocannon = require('autocannon')
import { summarizeLatencies, type LatencySummary } from './stats'

/**
 * The load generator, in its own process so it never shares a CPU thread with
 * what it measures. bench/run.ts forks it and sends jobs over IPC; each job is a
 * warm-up run (not measured) then a timed autocannon run.
 *
 * A job with several URLs (instances of the service behind a round-robin split)
 * runs one autocannon per URL at once, the connections divided among them, and
 * merges their results: req/s summed, latency samples pooled. That is a
 * client-side round-robin split with no proxy in the path (a proxy would add its
 * own hop and CPU to every request); each connection stays on one instance, as
 * behind a connection-level (L4) balancer.
 */

export interface LoadRequest {
  method: string
  path: string
  headers: Record<string, string>
  body?: string
  /** When set, every request gets a fresh Idempotency-Key starting with this. */
  freshKeyPrefix?: string
  /** When set, requests cycle through these paths (instead of `path`). */
  paths?: string[]
  /**
   * When set, each request is followed on its connection by this one, `{id}` in its path replaced by the `id` member of
   * the first one's JSON answer (same headers; a fresh key too when the first has one). No id: the pair starts over.
   */
  followUp?: { method: string, path: string, body?: string }
}

export interface LoadJob {
  id: number
  /** One URL per instance; several: requests split between them (see above). */
  urls: string[]
  request: LoadRequest
  connections: number
  warmupSeconds: number
  durationSeconds: number
}

export interface LoadResult {
  id: number
  /** 2xx responses per second over the timed run. */
  rps: number
  /** Latency of 2xx responses, ms, from autocannon's per-response timings (not its ms-rounded histogram). */
  latency: LatencySummary
  responses: number
  non2xx: number
  errors: number
  timeouts: number
  statusCodes: Record<string, number>
  seconds: number
}

export function requestsFor (request: LoadRequest, phase: string): autocannon.Request[] {
  const base: autocannon.Request = { method: request.method, path: request.path, headers: request.headers, ...(request.body === undefined ? {} : { body: request.body }) }
  const paths = request.paths ?? []
  const followUp = request.followUp
  if (request.freshKeyPrefix === undefined && paths.length === 0 && followUp === undefined) return [base]
  let counter = 0
  const prefix = `${request.freshKeyPrefix ?? ''}-${phase}-`
  const keyed = (suffix: string): Pick<autocannon.RequestData, 'headers'> =>
    request.freshKeyPrefix === undefined ? {} : { headers: { ...request.headers, 'idempotency-key': `${prefix}${suffix}` } }
  const first: autocannon.Request = {
    ...base,
    setupRequest: (data, context) => {
      const n = counter++
      context.n = n
      return { ...data, ...(paths.length === 0 ? {} : { path: paths[n % paths.length] }), ...keyed(String(n)) }
    }
  }
  if (followUp === undefined) return [first]
  first.onResponse = (_status, body, context) => {
    try {
      context.id = (JSON.parse(body) as { id?: unknown }).id
    } catch {}
  }
  return [first, {
    method: followUp.method,
    path: followUp.path,
    headers: request.headers,
    ...(followUp.body === undefined ? {} : { body: followUp.body }),
    setupRequest: (data, context) => typeof context.id === 'string'
      ? { ...data, path: followUp.path.replace('{id}', context.id), ...keyed(`${String(context.n)}-f`) }
      : undefined
  }]
}

/**
 * The share of a split job that goes to instance `index` of `count`: its connections (as even as can be, at least
 * one), its own Idempotency-Key prefix, and every count-th path, so two instances do not refund the same payments.
 */
export function splitRequest (request: LoadRequest, connections: number, index: number, count: number): { request: LoadRequest, connections: number } {
  const share = Math.max(1, Math.floor(connections / count) + (index < connections % count ? 1 : 0))
  if (count === 1) return { request, connections: share }
  const paths = request.paths === undefined || request.paths.length < count ? request.paths : request.paths.filter((_path, i) => i % count === index)
  return {
    connections: share,
    request: {
      ...request,
      ...(paths === undefined ? {} : { paths, path: paths[0] }),
      ...(request.freshKeyPrefix === undefined ? {} : { freshKeyPrefix: `${request.freshKeyPrefix}-i${index}` })
    }
  }
}

/** One autocannon run against one URL, before its results are merged. */
export interface PartResult {
  ok: number
  samples: number[]
  duration: number
  non2xx: number
  errors: number
  timeouts: number
  statusCodes: Record<string, number>
}

/** The results of the concurrent runs of a split job as one: counts summed, req/s the sum of each run's, latencies pooled. */
export function mergeParts (id: number, parts: PartResult[]): LoadResult {
  const statusCodes: Record<string, number> = {}
  for (const part of parts) {
    for (const [code, count] of Object.entries(part.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count
  }
  const sum = (pick: (part: PartResult) => number): number => parts.reduce((total, part) => total + pick(part), 0)
  return {
    id,
    rps: sum((part) => part.duration > 0 ? part.ok / part.duration : 0),
    latency: summarizeLatencies(parts.flatMap((part) => part.samples)),
    responses: sum((part) => part.ok),
    non2xx: sum((part) => part.non2xx),
    errors: sum((part) => part.errors),
    timeouts: sum((part) => part.timeouts),
    statusCodes,
    seconds: Math.max(0, ...parts.map((part) => part.duration))
  }
}

async function runPart (url: string, request: LoadRequest, connections: number, seconds: number, phase: string, record: boolean): Promise<PartResult> {
  const samples: number[] = []
  let ok = 0
  const instance = autocannon({
    url,
    connections,
    duration: seconds,
    timeout: 30,
    requests: requestsFor(request, phase)
  })
  if (record) {
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300) {
        ok++
        samples.push(responseTime)
      }
    })
  }
  const result = await instance
  const statusCodes: Record<string, number> = {}
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count
  return { ok, samples, duration: result.duration, non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts, statusCodes }
}

async function runOnce (job: LoadJob, seconds: number, phase: string, record: boolean): Promise<LoadResult> {
  const parts = await Promise.all(job.urls.map(async (url, index) => {
    const share = splitRequest(job.request, job.connections, index, job.urls.length)
    return await runPart(url, share.request, share.connections, seconds, phase, record)
  }))
  return mergeParts(job.id, parts)
}

export async function runJob (job: LoadJob): Promise<LoadResult> {
  if (job.warmupSeconds > 0) await runOnce(job, job.warmupSeconds, `w${job.id}`, false)
  return await runOnce(job, job.durationSeconds, `m${job.id}`, true)
}

/* c8 ignore start */
if (require.main === module) {
  if (process.send === undefined) {
    process.stderr.write('bench/load.js is started by bench/run.js over IPC\n')
    process.exit(2)
  }
  process.on('message', (job: LoadJob) => {
    runJob(job).then(
      (result) => { process.send?.({ ok: true, result }) },
      (err: unknown) => { process.send?.({ ok: false, id: job.id, error: err instanceof Error ? err.message : String(err) }) }
    )
  })
  process.on('disconnect', () => { process.exit(0) })
}
/* c8 ignore stop */
