/**
 * An Adyen notification accepted but not applied when the service dies (issue 26): the real, built service
 * (dist/app/server.js) on a throwaway PostgreSQL schema, the local fake Adyen (test/helpers/fake-adyen.ts), a
 * merchant with an Adyen account made through the HTTP API, a manual-capture payment whose capture Adyen
 * received (202, capture pending).
 *
 * The window between "stored in the inbox" and "applied" is held open without any hook in the product: the
 * test holds the payment's row lock (SELECT … FOR UPDATE in its own transaction). Applying a CAPTURE reads the
 * payment without locking, then settles it in a transaction whose first statement locks the row
 * (captures.settle → `SELECT * FROM payments WHERE id = $1 FOR UPDATE`): that is where it waits. Once the item
 * is committed in connector_events (processed_at NULL) and PostgreSQL shows the service's backend waiting on
 * our lock, the service is SIGKILLed, then our transaction rolled back (the orphaned backend gets the lock but
 * its client is gone, so it never updates). After a restart with a short RECOVERY_AGE_SECONDS and interval,
 * the recovery worker's inbox drain applies the stored item: succeeded, amountCaptured as notified, exactly one
 * payment.succeeded event, the item processed; Adyen's redelivery is `[accepted]` and changes nothing.
 *
 * PostgreSQL only: on SQLite an outside writer can only take the database-wide write lock, which would block
 * the inbox insert as well, so the window cannot be held open there.
 * Runs in CI step 6 (FAULT_TESTS=1), after `npm run build`, like the other fault tests. Only 127.0.0.1.
 */
import t, { type Test } from 'tap'
import pg from 'pg'
import { faultTestsUnavailable, ServiceInstance, until } from './faults-fixtures'
import { provisionMerchant } from '../helpers/server-process'
import { ADMIN_AUTH, TEST_ADMIN_KEY } from '../helpers/app'
import { FAKE_ADYEN_API_KEY, FAKE_ADYEN_MERCHANT, FakeAdyen } from '../helpers/fake-adyen'
import { HMAC_KEY, notificationBody, notificationItem } from '../helpers/adyen-notifications'
import { describeUrl, freshSchema, POSTGRES_TEST_URL, postgresUnreachable, type TestSchema } from '../helpers/postgres'

const REQUEST_TIMEOUT_MS = 15_000

interface PaymentBody {
  id: string
  status: string
  connectorReference?: string
  amountCaptured: number
  amountCapturable: number
  amountCapturePending?: number
}

interface InboxRow { event_id: string, type: string, processed_at: string | null }

function startService (t: Test, schema: TestSchema, adyen: FakeAdyen, env: Record<string, string>): ServiceInstance {
  return new ServiceInstance(t, {
    DATABASE_URL: schema.url,
    DATABASE_POOL_SIZE: '4',
    ADYEN_CHECKOUT_URL: adyen.url,
    RATE_LIMIT_MAX: '100000',
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    WEBHOOK_POLL_INTERVAL_MS: '0',
    ...env
  })
}

async function send (base: string, path: string, init: { method?: string, headers?: Record<string, string>, body?: unknown } = {}): Promise<{ status: number, text: string }> {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...init.headers, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
  })
  return { status: res.status, text: await res.text() }
}

async function getPayment (base: string, auth: { authorization: string }, id: string): Promise<PaymentBody> {
  const res = await send(base, `/api/payments/${id}`, { headers: auth })
  if (res.status !== 200) throw new Error(`GET /api/payments/${id} answered ${res.status}: ${res.text}`)
  return JSON.parse(res.text) as PaymentBody
}

/** A transaction of our own holding the payment's row lock, on its own connection to the service's schema. */
async function lockPaymentRow (t: Test, schema: TestSchema, paymentId: string): Promise<{ pid: number, release: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: schema.url, connectionTimeoutMillis: 5000 })
  client.on('error', () => {})
  await client.connect()
  t.teardown(async () => { await client.end().catch(() => {}) })
  await client.query('BEGIN')
  const { rows } = await client.query<{ id: string }>('SELECT id FROM payments WHERE id = $1 FOR UPDATE', [paymentId])
  if (rows.length !== 1) throw new Error(`payment ${paymentId} not found to lock`)
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid
  if (pid === undefined) throw new Error('pg_backend_pid() answered nothing')
  return { pid, release: async () => { await client.query('ROLLBACK') } }
}

async function killedBetweenInboxAndApply (t: Test): Promise<void> {
  const schema = await freshSchema(t)
  const adyen = await FakeAdyen.start()
  t.teardown(async () => { await adyen.close() })
  // No background worker in the first life: only the notification's own request touches the payment.
  const instance = startService(t, schema, adyen, { RECOVERY_INTERVAL_MS: '0' })
  const base = await instance.listening()
  const { merchantId, auth } = await provisionMerchant(base, TEST_ADMIN_KEY)
  const account = await send(base, `/merchants/${merchantId}/connectors`, {
    method: 'POST',
    headers: ADMIN_AUTH,
    body: { type: 'adyen', credentials: { apiKey: FAKE_ADYEN_API_KEY, merchantAccount: FAKE_ADYEN_MERCHANT, hmacKey: HMAC_KEY }, priority: 0 }
  })
  t.equal(account.status, 201, 'the Adyen account is created (credentials checked against the fake)', { body: account.text })
  const adyenId = (JSON.parse(account.text) as { id: string }).id

  const paid = await send(base, '/api/payments', {
    method: 'POST',
    headers: { ...auth, 'idempotency-key': 'adyen-crash-1' },
    body: { amount: 20, currency: 'EUR', captureMethod: 'manual', paymentMethods: { adyen: 'stored_visa' }, shopperReference: 'shopper-8812' }
  })
  t.equal(paid.status, 201, 'the payment is authorised on Adyen', { body: paid.text })
  const payment = JSON.parse(paid.text) as PaymentBody
  t.equal(payment.status, 'requires_capture', 'manual capture: the authorisation is held')

  const capture = await send(base, `/api/payments/${payment.id}/capture`, { method: 'POST', headers: { ...auth, 'idempotency-key': 'adyen-crash-capture-1' }, body: { amount: 15 } })
  t.equal(capture.status, 202, 'Adyen received the capture', { body: capture.text })
  t.match(JSON.parse(capture.text), { status: 'requires_capture', amountCapturePending: 15, amountCaptured: 0 }, 'the capture is pending')
  const modification = adyen.modifications.find((m) => m.eventCode === 'CAPTURE' && m.originalReference === payment.connectorReference)
  if (modification === undefined) throw new Error('the fake Adyen recorded no capture of the payment')

  const item = notificationItem({
    eventCode: 'CAPTURE',
    pspReference: modification.pspReference,
    ...(payment.connectorReference === undefined ? {} : { originalReference: payment.connectorReference }),
    merchantReference: payment.id,
    merchantAccountCode: FAKE_ADYEN_MERCHANT,
    amount: { value: 1500, currency: 'EUR' }
  })
  const inboxId = `${item.pspReference}:CAPTURE:true`
  const inbox = async (): Promise<InboxRow[]> =>
    await schema.query<InboxRow>('SELECT event_id, type, processed_at FROM connector_events WHERE connector_id = $1 AND event_id = $2', [adyenId, inboxId])
  const notify = async (target: string): Promise<{ status: number, text: string }> =>
    await send(target, `/connectors/${adyenId}/adyen-notifications`, { method: 'POST', body: notificationBody(item) })

  const lock = await lockPaymentRow(t, schema, payment.id)
  const SETTLING_READ = /FROM payments WHERE id = \$1 FOR UPDATE/
  const inFlight = notify(base).then((res) => res.status, (err: unknown) => (err as Error).message)
  const recordedMs = await until(async () => (await inbox())[0]?.processed_at === null, 10_000, 10)
  let waiting: Array<{ pid: number, query: string }> = []
  const blockedMs = await until(async () => {
    waiting = await schema.query<{ pid: number, query: string }>('SELECT pid, query FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [lock.pid])
    // pg_stat_activity is read as of our statement's start, pg_blocking_pids live: a waiter may still show its BEGIN.
    return waiting.some((session) => SETTLING_READ.test(session.query))
  }, 10_000, 10)
  t.ok(waiting.some((session) => SETTLING_READ.test(session.query)), 'the service\'s settling transaction waits on our lock', { waiting })
  t.pass(`the item was in the inbox after ${recordedMs} ms; applying it waited on our row lock ${blockedMs} ms later`)
  const exited = instance.exited
  instance.child.kill('SIGKILL')
  t.match(await exited, { signal: 'SIGKILL' }, 'killed after the notification was stored, before it was applied')
  t.notOk(typeof await inFlight === 'number', 'Adyen got no answer (it would retry)')
  await lock.release()
  const killedAt = Date.now()

  t.match(await inbox(), [{ type: 'adyen:CAPTURE', processed_at: null }], 'committed: the item, unprocessed')
  const [row] = await schema.query<{ status: string, amount_captured_minor: number, capture_pending_minor: number | null }>(
    'SELECT status, amount_captured_minor, capture_pending_minor FROM payments WHERE id = $1', [payment.id])
  t.match(row, { status: 'requires_capture', capture_pending_minor: 1500 }, 'committed: the capture still pending')
  t.equal(Number(row?.amount_captured_minor), 0, 'nothing captured yet')
  // The orphaned backend got our lock after the rollback; give it a moment to find its client gone, then look again.
  const orphans = waiting.map((backend) => backend.pid)
  await until(async () => (await schema.query('SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1::int[])', [orphans])).length === 0, 5000, 50)
  t.equal((await schema.query('SELECT 1 FROM payments WHERE id = $1 AND capture_pending_minor IS NULL', [payment.id])).length, 0, 'the dead request\'s transaction did not settle it')

  const restarted = startService(t, schema, adyen, { RECOVERY_AGE_SECONDS: '1', RECOVERY_INTERVAL_MS: '200' })
  const newBase = await restarted.listening()
  let settled: PaymentBody | undefined
  const settledAfterMs = await until(async () => {
    settled = await getPayment(newBase, auth, payment.id)
    return settled.status !== 'requires_capture'
  }, 20_000, 100)
  t.pass(`the recovery worker applied the stored notification ${Date.now() - killedAt} ms after the kill (${settledAfterMs} ms after the restart listened)`)
  t.match(settled, { status: 'succeeded', amountCaptured: 15, amountCapturable: 0 }, 'succeeded with the amount Adyen notified')
  // The line is logged after the commit the read above saw, and reaches us through the child's stdout: wait for it.
  const drained = () => restarted.logs.some((line) => line.msg === 'recovery processed an Adyen notification left unprocessed' && line.notification === inboxId)
  await until(async () => drained(), 5000, 20)
  t.ok(drained(), 'the inbox drain applied it (not a new delivery)')
  t.match(await inbox(), [{ processed_at: String }], 'the item is marked processed')
  const succeededEvents = async (): Promise<number> => (await schema.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM events WHERE resource_id = $1 AND type = 'payment.succeeded'", [payment.id]))[0]?.n ?? -1
  t.equal(await succeededEvents(), 1, 'exactly one payment.succeeded event')

  const redelivered = await notify(newBase)
  t.same(redelivered, { status: 200, text: '[accepted]' }, 'Adyen\'s redelivery of the same notification is accepted')
  t.match(await getPayment(newBase, auth, payment.id), { status: 'succeeded', amountCaptured: 15 }, 'and changes nothing')
  t.equal(await succeededEvents(), 1, 'still one payment.succeeded event')
  t.equal((await inbox()).length, 1, 'one inbox row for the notification')
  t.same(restarted.errors(), [], 'no error logged by the restarted service')
}

async function main (): Promise<void> {
  const why = faultTestsUnavailable({})
  if (why !== undefined) {
    t.plan(0, why)
    return
  }
  const unreachable = await postgresUnreachable()
  if (unreachable !== undefined) {
    const message = `PostgreSQL unreachable at ${describeUrl(POSTGRES_TEST_URL)} (${unreachable})`
    if (process.env.REQUIRE_POSTGRES === '1') t.fail(message)
    else t.plan(0, message)
    return
  }
  t.test('PostgreSQL: SIGKILL after an Adyen CAPTURE notification is stored, before it is applied: after the restart it is applied once', async (t) => {
    await killedBetweenInboxAndApply(t)
  })
}

main().catch((err: unknown) => { t.fail(String(err)) })
