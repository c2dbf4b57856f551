/**
 * A full disk under SQLite, with a real process on a small tmpfs filled with ballast: while nothing can be written,
 * payments answer 503 problems and products 503 envelopes (with Retry-After, never a 500) and
 * /health/ready is 503; once space is freed the instance is ready and serving again by itself,
 * every acknowledged payment is stored with its status and no key was charged twice.
 * Needs root for the tmpfs; runs in CI step 6 (FAULT_TESTS=1).
 */
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import BetterSqlite3 from 'better-sqlite3'
import { faultTestsUnavailable, keyedLoad, loudLines, ServiceInstance, statusOf, until, verify } from './faults-fixtures'
import { provisionMerchant } from '../helpers/server-process'
import { ADMIN_AUTH, TEST_ADMIN_KEY } from '../helpers/app'
import { WAL_AUTOCHECKPOINT_PAGES } from '../../src/store/sqlite/connection'

const REQUEST_TIMEOUT_MS = 15_000
const MiB = 1024 * 1024
/**
 * The tmpfs holds the service's own steady-state footprint with room to spare: the WAL grows to
 * WAL_AUTOCHECKPOINT_PAGES pages (4 KiB, plus a 24-byte frame header each) before its first checkpoint.
 * On a smaller disk the load's WAL itself fills it before the ballast is written: removing the
 * (empty) ballast then frees nothing, the WAL can never be checkpointed, and the test only shows
 * a disk that stays full (what happened at 16 MiB after wal_autocheckpoint went from 1000 to 4000).
 */
const TMPFS_MIB = Math.ceil(WAL_AUTOCHECKPOINT_PAGES * (4096 + 24) / MiB) + 48
/** The ballast must be what fills the disk, so that deleting it frees space. */
const MIN_BALLAST = 16 * MiB

/** Writes zeros into `path` until the file system is full; returns the bytes written. */
function fillDisk (path: string): number {
  const fd = openSync(path, 'w')
  const chunk = Buffer.alloc(64 * 1024)
  let written = 0
  try {
    for (;;) {
      try {
        written += writeSync(fd, chunk)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
        // The last few bytes too, so not even a page is left.
        try { for (;;) written += writeSync(fd, Buffer.alloc(512)) } catch {}
        return written
      }
    }
  } finally {
    closeSync(fd)
  }
}

async function main (): Promise<void> {
  const why = faultTestsUnavailable({ tmpfs: true })
  if (why !== undefined) {
    t.plan(0, why)
    return
  }
  t.test('disk full under SQLite: 503 and not ready while full, ready and serving once space is freed', async (t) => {
    await diskFull(t)
  })
}

async function diskFull (t: Test): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'faults-disk-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MIB}m`, 'tmpfs', dir])
  t.teardown(() => {
    execFileSync('umount', ['-l', dir])
    rmSync(dir, { recursive: true, force: true })
  })
  const instance = new ServiceInstance(t, {
    DATABASE_URL: `file:${join(dir, 'service.db')}`,
    RATE_LIMIT_MAX: '100000',
    IDEMPOTENCY_LOCK_SECONDS: '30',
    RECOVERY_AGE_SECONDS: '2',
    RECOVERY_INTERVAL_MS: '1000',
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS)
  })
  const base = await instance.listening()
  const { auth } = await provisionMerchant(base, TEST_ADMIN_KEY)
  const db = new BetterSqlite3(join(dir, 'service.db'), { readonly: true, fileMustExist: true })
  t.teardown(() => { db.close() })
  const read = {
    payment: async (id: string) => db.prepare<[string], { status: string }>('SELECT status FROM payments WHERE id = ?').get(id),
    ledgerKeys: async () => db.prepare<[], { k: string }>('SELECT idempotency_key AS k FROM gateway_ledger').all().map((row) => row.k),
    paymentIds: async () => db.prepare<[], { id: string }>('SELECT id FROM payments').all().map((row) => row.id)
  }

  let stopAt = Number.POSITIVE_INFINITY
  const load = keyedLoad({ bases: () => [base], auth, clients: 4, stopAt: () => stopAt, giveUpAt: Date.now() + 90_000, attemptTimeoutMs: REQUEST_TIMEOUT_MS + 5000 })
  // Readiness as a load balancer sees it, every 100 ms from before the disk fills until after it is freed.
  const readiness: Array<{ at: number, status: number }> = []
  const watch = { on: true }
  const watcher = (async () => {
    while (watch.on) {
      readiness.push({ at: Date.now(), status: await statusOf(`${base}/health/ready`) })
      await sleep(100)
    }
  })()
  await sleep(1000)
  const logsFrom = instance.logs.length
  const ballast = join(dir, 'ballast')
  const filled = fillDisk(ballast)
  const fullAt = Date.now()
  t.ok(filled >= MIN_BALLAST, `the ballast (${filled} bytes), not the service's WAL, filled the disk, so deleting it frees space`)
  // The reason is read from the 503 answer itself: a later probe may find room for its one-page write
  // (the WAL reuses its file after a checkpoint) and answer 200 until the next failing write.
  let notReady: { checks: Record<string, string> } | undefined
  const notReadyAfterMs = await until(async () => {
    const res = await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(3000) })
    const body = await res.json() as { checks: Record<string, string> }
    if (res.status === 503) notReady = body
    return res.status === 503
  }, 30_000, 200)
  t.pass(`disk full (${filled} bytes of ballast): /health/ready is 503 after ${notReadyAfterMs} ms`)
  t.equal(notReady?.checks.database, 'full', 'readiness names the reason')

  const payment = await fetch(`${base}/api/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID(), ...auth },
    body: JSON.stringify({ amount: 12, currency: 'EUR' }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
  })
  t.equal(payment.status, 503, 'a payment is 503 while the disk is full')
  t.match(payment.headers.get('content-type'), /^application\/problem\+json/)
  t.ok(Number(payment.headers.get('retry-after')) > 0, 'with Retry-After')
  t.match(await payment.json(), { type: 'urn:problem-type:service-unavailable', status: 503, title: 'The service is temporarily unavailable.' })
  // A one-page product write may still fit: after a checkpoint the WAL reuses its file, so a write can
  // commit durably on a full disk (as the readiness probe's can, above). Each write must then be 200 and
  // stay readable, or be refused in the products envelope; the first refusal ends the loop.
  const committed: string[] = []
  let refused: Response | undefined
  for (let i = 0; i < 50 && refused === undefined; i++) {
    const id = `disk-full-${i}`
    const res = await fetch(`${base}/products/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json', ...ADMIN_AUTH }, body: JSON.stringify({ name: 'x', price: 1 }), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    if (res.status === 200) committed.push(id)
    else refused = res
  }
  if (refused !== undefined) {
    t.equal(refused.status, 503, `a product write is 503 too (after ${committed.length} that still fitted)`)
    t.match(await refused.json(), { code: 'STORE_UNAVAILABLE' })
    t.ok(Number(refused.headers.get('retry-after')) > 0, 'with Retry-After')
  } else {
    t.equal(committed.length, 50, 'every product write fitted in the reused WAL and answered 200')
  }
  const products = db.prepare<[], { id: string }>("SELECT id FROM products WHERE id LIKE 'disk-full-%'").all().map((row) => row.id)
  t.same(products.sort(), [...committed].sort(), 'every product write answered 200 is stored; none refused is')
  t.equal(await statusOf(`${base}/health/live`), 200, 'still alive')

  await sleep(1000)
  rmSync(ballast)
  const faultEnd = Date.now()
  const readyAfterMs = await until(async () => await statusOf(`${base}/health/ready`) === 200, 15_000)
  t.ok(readyAfterMs < 5000, `ready again ${readyAfterMs} ms after space was freed`)
  stopAt = Date.now() + 1500
  const histories = await load
  await sleep(3000)
  watch.on = false
  await watcher
  t.ok(instance.alive, 'the instance never exited')
  const verdict = await verify(t, histories, read, faultEnd, REQUEST_TIMEOUT_MS)

  // Readiness changes state once each way (hysteresis: DATABASE_SETTLE_MS without failure before 200 again),
  // and turns 503 with the first failed write, not a probe's second later.
  const changes = readiness.filter((probe, i) => i > 0 && probe.status !== readiness[i - 1]?.status)
  t.same(changes.map((probe) => probe.status), [503, 200], `readiness went 503 once and 200 once (${readiness.length} probes)`, { changes })
  const first503Answer = Math.min(...histories.flatMap((h) => h.attempts).filter((a) => a.status === 503).map((a) => a.at + a.ms))
  const lag = (changes[0]?.at ?? Infinity) - first503Answer
  t.ok(lag < 400, `readiness was 503 ${lag} ms after the first 503 answer (one probe interval: 100 ms)`)
  const lines = loudLines(instance.logs, logsFrom)
  const total = Object.values(lines).reduce((sum, n) => sum + n, 0)
  t.ok(total <= 10, `${total} lines at warn or above while clients saw ${verdict.statuses['503'] ?? 0} 503 answers`, { lines })
  t.equal(lines['background job failed'] ?? 0, 0, 'no "background job failed" errors for a full disk')
  t.ok(verdict.settledAfterMs < 10_000, `every key settled ${verdict.settledAfterMs} ms after space was freed (IDEMPOTENCY_LOCK_SECONDS 30)`)
  t.ok((verdict.statuses['503'] ?? 0) > 0, 'the load saw the 503s')
  process.stdout.write(`# fault measurements: ${JSON.stringify({ 'disk-full': { fullForMs: faultEnd - fullAt, notReadyAfterMs, readyAfterMs, readinessChanges: changes.length, readinessLagMs: lag, loudLines: total, ...verdict } })}\n`)
}

main().catch((err: unknown) => { t.fail(String(err)) })
