import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { provisionMerchant, ServerProcess } from '../helpers/server-process'
import { TEST_ADMIN_KEY, TEST_ENCRYPTION_KEYS } from '../helpers/app'

function tempDatabase (t: Test): { url: string, file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'payments-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = join(dir, 'service.db')
  return { url: `file:${file}`, file }
}

function counts (file: string): { payments: number, charges: number } {
  const db = new BetterSqlite3(file, { readonly: true })
  try {
    return {
      payments: db.prepare('SELECT count(*) FROM payments').pluck().get() as number,
      charges: db.prepare('SELECT count(*) FROM gateway_ledger').pluck().get() as number
    }
  } finally {
    db.close()
  }
}

/** The merchant key of each server base URL's database (payments need one). */
const merchantAuth = new Map<string, { authorization: string }>()

async function merchantOf (base: string): Promise<{ authorization: string }> {
  let auth = merchantAuth.get(base)
  if (auth === undefined) {
    auth = (await provisionMerchant(base, TEST_ADMIN_KEY)).auth
    merchantAuth.set(base, auth)
  }
  return auth
}

async function pay (base: string, key: string, amount: number, auth?: { authorization: string }): Promise<Response> {
  return await fetch(`${base}/api/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key, ...(auth ?? await merchantOf(base)) },
    body: JSON.stringify({ amount, currency: 'USD' })
  })
}

const serverEnv = (url: string, extra: Record<string, string> = {}) => ({
  PORT: '0',
  ADMIN_API_KEY: TEST_ADMIN_KEY,
  ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
  DATABASE_URL: url,
  LOG_LEVEL: 'info',
  RATE_LIMIT_MAX: '100000',
  REAPER_INTERVAL_MS: '0',
  RECOVERY_INTERVAL_MS: '0',
  ...extra
})

t.test('50 simultaneous requests with one key against a listening server: one payment, one charge', async (t) => {
  const db = tempDatabase(t)
  const server = new ServerProcess(t, serverEnv(db.url, { GATEWAY_SIM_LATENCY_MS: '150' }))
  const base = await server.listening()
  await merchantOf(base)
  const responses = await Promise.all(Array.from({ length: 50 }, async () => {
    const res = await pay(base, 'one-key-for-all', 25)
    return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.json() as Record<string, unknown> }
  }))
  const created = responses.filter((r) => r.status === 201)
  const conflicts = responses.filter((r) => r.status === 409)
  t.equal(created.length + conflicts.length, 50, 'every answer is a 201 or a 409')
  t.equal(created.filter((r) => r.replayed !== 'true').length, 1, 'exactly one original 201')
  t.equal(new Set(created.map((r) => r.body.id)).size, 1, 'every 201 names the same payment')
  for (const conflict of conflicts) t.equal(conflict.body.type, 'urn:problem-type:idempotency-key-in-use')
  t.same(counts(db.file), { payments: 1, charges: 1 })
  server.child.kill('SIGTERM')
  t.equal((await server.exited).code, 0)
})

t.test('SIGKILL while a charge is in flight: after a restart the retry finishes the same payment, charged once', async (t) => {
  const db = tempDatabase(t)
  const env = serverEnv(db.url, { GATEWAY_SIM_LATENCY_MS: '1500', IDEMPOTENCY_LOCK_SECONDS: '1' })
  const first = new ServerProcess(t, env)
  const base = await first.listening()
  const merchant = await merchantOf(base)

  const answered = await Promise.all([1, 2, 3].map(async (n) => {
    const res = await pay(base, `done-${n}`, n)
    t.equal(res.status, 201)
    return (await res.json() as { id: string }).id
  }))
  const inFlight = pay(base, 'in-flight', 42).catch((err: unknown) => err)
  await new Promise((resolve) => setTimeout(resolve, 500))
  first.child.kill('SIGKILL')
  await first.exited
  t.ok(await inFlight instanceof Error, 'the in-flight request never got an answer')

  const before = new BetterSqlite3(db.file, { readonly: true })
  const createdBeforeKill = before.prepare("SELECT resource_id FROM idempotency_keys WHERE key = 'in-flight'").pluck().get() as string
  before.close()
  t.ok(createdBeforeKill, 'the pending payment was recorded before the gateway call')

  const second = new ServerProcess(t, { ...env, GATEWAY_SIM_LATENCY_MS: '0' })
  const restarted = await second.listening()
  let retry = await pay(restarted, 'in-flight', 42, merchant)
  const deadline = Date.now() + 10_000
  while (retry.status === 409 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    retry = await pay(restarted, 'in-flight', 42, merchant)
  }
  t.equal(retry.status, 201)
  const body = await retry.json() as { id: string, status: string }
  t.equal(body.id, createdBeforeKill, 'the same payment id')
  t.equal(body.status, 'succeeded')
  t.same(counts(db.file), { payments: 4, charges: 4 }, 'exactly one charge for the interrupted payment')

  for (const id of answered) {
    const res = await fetch(`${restarted}/api/payments/${id}`, { headers: merchant })
    t.equal(res.status, 200, `payment ${id} answered 201 before the kill is still there`)
  }
  second.child.kill('SIGTERM')
  await second.exited
})

t.test('SIGKILL between the gateway\'s capture and the commit: after a restart the recovery worker finishes it, captured once', async (t) => {
  const db = tempDatabase(t)
  // 3002.00: the simulated gateway captures, then its answer never comes (the request waits for GATEWAY_TIMEOUT_MS).
  // IDEMPOTENCY_LOCK_SECONDS 1: the dead request's key lock ends soon after the kill (else the worker waits for it).
  const first = new ServerProcess(t, serverEnv(db.url, { GATEWAY_TIMEOUT_MS: '60000', IDEMPOTENCY_LOCK_SECONDS: '1' }))
  const base = await first.listening()
  const merchant = await merchantOf(base)
  const authorized = await fetch(`${base}/api/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'authorize', ...merchant },
    body: JSON.stringify({ amount: 3500, currency: 'USD', captureMethod: 'manual' })
  })
  t.equal(authorized.status, 201)
  const paymentId = (await authorized.json() as { id: string }).id
  const capture = async (origin: string): Promise<Response> => await fetch(`${origin}/api/payments/${paymentId}/capture`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'crash', ...merchant },
    body: JSON.stringify({ amount: 3002 })
  })
  const inFlight = capture(base).catch((err: unknown) => err)
  const settlements = (): Array<{ amount_minor: number }> => {
    const reader = new BetterSqlite3(db.file, { readonly: true })
    try {
      return reader.prepare("SELECT amount_minor FROM gateway_ledger WHERE idempotency_key LIKE '%:settlement'").all() as Array<{ amount_minor: number }>
    } finally {
      reader.close()
    }
  }
  const deadline = Date.now() + 10_000
  while (settlements().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(settlements(), [{ amount_minor: 300200 }], 'the gateway captured')
  first.child.kill('SIGKILL')
  await first.exited
  t.ok(await inFlight instanceof Error, 'the capture request never got an answer')
  const stored = new BetterSqlite3(db.file, { readonly: true })
  t.same(stored.prepare('SELECT status, amount_captured_minor, capture_pending_minor FROM payments WHERE id = ?').get(paymentId),
    { status: 'requires_capture', amount_captured_minor: 0, capture_pending_minor: 300200 }, 'the commit never happened: the capture is in flight')
  stored.close()

  const second = new ServerProcess(t, serverEnv(db.url, { RECOVERY_INTERVAL_MS: '200', RECOVERY_AGE_SECONDS: '1', IDEMPOTENCY_LOCK_SECONDS: '1' }))
  const restarted = await second.listening()
  let payment = { status: 'requires_capture', amountCaptured: 0 }
  const recovered = Date.now() + 15_000
  while (payment.status === 'requires_capture' && Date.now() < recovered) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    payment = await (await fetch(`${restarted}/api/payments/${paymentId}`, { headers: merchant })).json() as typeof payment
  }
  t.match(payment, { status: 'succeeded', amountCaptured: 3002 }, 'the recovery worker finished the capture')
  t.same(settlements(), [{ amount_minor: 300200 }], 'one capture at the gateway')
  const retry = await capture(restarted)
  t.equal(retry.status, 200, 'the client\'s retry with the same key answers the capture')
  t.equal(retry.headers.get('idempotent-replayed'), 'true')
  t.same(settlements(), [{ amount_minor: 300200 }], 'still one capture')
  second.child.kill('SIGTERM')
  await second.exited
})
