/**
 * Pure helpers of the benchmark: percentiles, medians, ratios, options and the
 * results table, /proc parsing. No I/O here, so test/bench.test.ts covers all of it.
 */

/** Nearest-rank percentile (p in 0..100) of values sorted ascending; NaN when empty. */
export function percentile (sorted: ArrayLike<number>, p: number): number {
  const rank = p <= 0 ? 1 : p >= 100 ? sorted.length : Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? Number.NaN
}

/** Median of any (unsorted) numbers, ignoring NaN; NaN when nothing is left. */
export function median (values: number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  const at = (i: number): number => sorted[i] ?? Number.NaN
  return sorted.length % 2 === 1 ? at(middle) : (at(middle - 1) + at(middle)) / 2
}

export interface LatencySummary {
  count: number
  p50: number
  p99: number
  max: number
  mean: number
}

/** Latency percentiles in ms of raw samples (the array is sorted in place). */
export function summarizeLatencies (samples: Float64Array | number[]): LatencySummary {
  const sorted = samples instanceof Float64Array ? samples.sort() : Float64Array.from(samples).sort()
  let total = 0
  for (const sample of sorted) total += sample
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    mean: sorted.length === 0 ? Number.NaN : total / sorted.length
  }
}

/** Ratio of two throughputs; NaN when the baseline measured nothing. */
export function ratio (value: number, baseline: number): number {
  return baseline > 0 ? value / baseline : Number.NaN
}

/** Median of the per-round ratios of paired measurements (same round, same scenario). */
export function pairedRatio (values: number[], baselines: number[]): number {
  const ratios: number[] = []
  values.forEach((value, i) => {
    const baseline = baselines[i]
    if (baseline !== undefined) ratios.push(ratio(value, baseline))
  })
  return median(ratios)
}

/** Fixed decimals, or '-' for a missing value. */
export function fmt (value: number | undefined, decimals = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '-'
  return value.toFixed(decimals)
}

/** A GitHub-flavoured Markdown table with padded columns (numbers are right-aligned). */
export function markdownTable (headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)))
  const numeric = headers.map((_header, i) => rows.length > 0 && rows.every((row) => /^[-+]?[\d.,]+[×%]?$|^-$/.test(row[i] ?? '')))
  const cell = (text: string, i: number): string => numeric[i] === true ? text.padStart(widths[i] ?? 0) : text.padEnd(widths[i] ?? 0)
  const line = (cells: string[]): string => `| ${cells.map((text, i) => cell(text, i)).join(' | ')} |`
  const rule = `|${widths.map((width, i) => numeric[i] ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2)).join('|')}|`
  return [line(headers), rule, ...rows.map((row) => line(headers.map((_header, i) => row[i] ?? '')))].join('\n')
}

export interface BenchOptions {
  /** Seconds of each timed run. */
  duration: number
  /** Seconds of warm-up before each timed run (not measured). */
  warmup: number
  /** Rounds; each round runs every scenario on every target, alternating which target goes first. */
  rounds: number
  connections: number
  /** Scenario names to run (all when empty). */
  scenarios: string[]
  /** Also run the write scenarios with SQLITE_SYNCHRONOUS=NORMAL (informative rows). */
  normal: boolean
  /** Also run the service with METRICS_PORT set on the read scenarios, to measure what metrics cost per request. */
  metrics: boolean
  /** Extra stop/start cycles to measure start-up to listening. */
  starts: number
  /** A postgres:// URL to run the scenarios on PostgreSQL too, if set. */
  postgresUrl?: string
  /** Write a CPU profile of the service (node --cpu-prof) into this directory. */
  cpuProf?: string
}

export const DEFAULT_OPTIONS: BenchOptions = {
  duration: 5,
  warmup: 1,
  rounds: 3,
  connections: 50,
  scenarios: [],
  normal: true,
  metrics: true,
  starts: 3
}

function positive (name: string, text: string, integer: boolean, allowZero = false): number {
  const value = Number(text)
  const ok = Number.isFinite(value) && (allowZero ? value >= 0 : value > 0) && (!integer || Number.isInteger(value))
  if (!ok) throw new Error(`${name} must be a ${allowZero ? 'non-negative' : 'positive'} ${integer ? 'integer' : 'number'} (got ${JSON.stringify(text)})`)
  return value
}

/**
 * Options from BENCH_* variables, then --flags (flags win):
 * --duration=S --warmup=S --rounds=N --connections=N --scenarios=a,b --starts=N
 * --no-normal --no-metrics --cpu-prof=DIR; DATABASE_URL=postgres://… adds the PostgreSQL rows.
 */
export function parseBenchOptions (argv: string[], env: Record<string, string | undefined>): BenchOptions {
  const options: BenchOptions = { ...DEFAULT_OPTIONS, scenarios: [] }
  const settings: Record<string, string | undefined> = {
    duration: env.BENCH_DURATION,
    warmup: env.BENCH_WARMUP,
    rounds: env.BENCH_ROUNDS,
    connections: env.BENCH_CONNECTIONS,
    scenarios: env.BENCH_SCENARIOS,
    starts: env.BENCH_STARTS,
    normal: env.BENCH_NORMAL,
    metrics: env.BENCH_METRICS,
    'cpu-prof': env.BENCH_CPU_PROF
  }
  for (const arg of argv) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg)
    if (match === null) throw new Error(`unknown argument ${JSON.stringify(arg)}`)
    const [, name = '', value] = match
    if (name === 'no-normal' && value === undefined) settings.normal = '0'
    else if (name === 'no-metrics' && value === undefined) settings.metrics = '0'
    else if (name in settings && value !== undefined) settings[name] = value
    else throw new Error(`unknown option --${name}${value === undefined ? ' (needs =value)' : ''}`)
  }
  const given = (name: string): string | undefined => {
    const value = settings[name]
    return value === undefined || value === '' ? undefined : value
  }
  if (given('duration') !== undefined) options.duration = positive('duration', given('duration') as string, false)
  if (given('warmup') !== undefined) options.warmup = positive('warmup', given('warmup') as string, false, true)
  if (given('rounds') !== undefined) options.rounds = positive('rounds', given('rounds') as string, true)
  if (given('connections') !== undefined) options.connections = positive('connections', given('connections') as string, true)
  if (given('starts') !== undefined) options.starts = positive('starts', given('starts') as string, true, true)
  if (given('scenarios') !== undefined) options.scenarios = (given('scenarios') as string).split(',').map((s) => s.trim()).filter(Boolean)
  const enabled = (name: string): boolean => !['0', 'false', 'no', 'off'].includes((given(name) as string).toLowerCase())
  if (given('normal') !== undefined) options.normal = enabled('normal')
  if (given('metrics') !== undefined) options.metrics = enabled('metrics')
  const cpuProf = given('cpu-prof')
  if (cpuProf !== undefined) options.cpuProf = cpuProf
  const url = env.DATABASE_URL
  if (url !== undefined && /^postgres(ql)?:\/\//.test(url)) options.postgresUrl = url
  return options
}

/** Drops the password from a connection URL before it is printed or stored. */
export function redactUrl (url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@]*@/i, '$1:***@')
}

/** Median of the per-round differences `a[i] - b[i]` over complete pairs (NaN without any). */
export function pairedDifference (a: number[], b: number[]): number {
  const differences: number[] = []
  a.forEach((x, i) => {
    const y = b[i]
    if (y !== undefined && Number.isFinite(x) && Number.isFinite(y)) differences.push(x - y)
  })
  return median(differences)
}

/**
 * A process's name and CPU time from the text of /proc/<pid>/stat: `comm` (the name between the parentheses, which
 * may itself hold spaces or parentheses) and utime + stime in clock ticks.
 */
export function parseProcStat (text: string): { comm: string, cpuTicks: number, reapedChildrenCpuTicks: number } {
  const open = text.indexOf('(')
  const close = text.lastIndexOf(')')
  if (open < 0 || close < open) throw new Error('not a /proc/<pid>/stat line')
  const fields = text.slice(close + 2).split(' ')
  const cpuTicks = Number(fields[11]) + Number(fields[12])
  if (!Number.isFinite(cpuTicks)) throw new Error('not a /proc/<pid>/stat line')
  // cutime + cstime: children that exited and were waited for (absent from short lines).
  const reaped = Number(fields[13]) + Number(fields[14])
  return { comm: text.slice(open + 1, close), cpuTicks, reapedChildrenCpuTicks: Number.isFinite(reaped) ? reaped : 0 }
}

/**
 * Requests one core answers: 1,000,000 µs ÷ the CPU µs each request costs (`extraUs`: another process's share per
 * request, e.g. the database server's, added when given and finite). NaN without a positive, finite cost.
 */
export function requestsPerCore (cpuUsPerRequest: number, extraUs?: number): number {
  const total = cpuUsPerRequest + (extraUs !== undefined && Number.isFinite(extraUs) ? extraUs : 0)
  return Number.isFinite(total) && total > 0 ? 1_000_000 / total : Number.NaN
}
