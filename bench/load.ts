import autocannon = require('autocannon')
import { summarizeLatencies, type LatencySummary } from './stats'

/**
 * The load generator, in its own process so it never shares a CPU thread with
 * what it measures. bench/run.ts forks it and sends jobs over IPC; each job is a
 * warm-up run (not measured) then a timed autocannon run.
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
}

export interface LoadJob {
  id: number
  url: string
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
  const base: autocannon.Request = { method: request.method, path: request.path, headers: request.headers, body: request.body }
  const paths = request.paths ?? []
  if (request.freshKeyPrefix === undefined && paths.length === 0) return [base]
  let counter = 0
  const prefix = `${request.freshKeyPrefix ?? ''}-${phase}-`
  return [{
    ...base,
    setupRequest: (data) => {
      const n = counter++
      return {
        ...data,
        ...(paths.length === 0 ? {} : { path: paths[n % paths.length] }),
        ...(request.freshKeyPrefix === undefined ? {} : { headers: { ...request.headers, 'idempotency-key': `${prefix}${n}` } })
      }
    }
  }]
}

async function runOnce (job: LoadJob, seconds: number, phase: string, record: boolean): Promise<LoadResult> {
  const samples: number[] = []
  let ok = 0
  const instance = autocannon({
    url: job.url,
    connections: job.connections,
    duration: seconds,
    timeout: 30,
    requests: requestsFor(job.request, phase)
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
  return {
    id: job.id,
    rps: ok / result.duration,
    latency: summarizeLatencies(samples),
    responses: ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    seconds: result.duration
  }
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
