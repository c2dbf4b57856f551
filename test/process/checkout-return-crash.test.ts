/**
 * A shopper's return killed between the PSP's answer and our commit (issue 37): the real, built service
 * (dist/app/server.js) on a throwaway PostgreSQL schema, the local fake Stripe (test/helpers/fake-stripe.ts), a
 * merchant with a Stripe account (secret key and webhook signing secret) made through the HTTP API, and a
 * customer-present payment (returnUrl, Stripe's 3-D Secure test card): 201 requires_action, Stripe's
 * PaymentIntent waiting on its hosted page. The shopper authenticates there (the fake marks the PaymentIntent
 * succeeded) and Stripe sends the browser to the service's return address, PUBLIC_BASE_URL/checkout/return/{token}.
 *
 * The window between "Stripe answered the retrieve" and "the outcome is committed" is held open without any hook
 * in the product: the test holds the payment's row lock (SELECT … FOR UPDATE in its own transaction). The return
 * reads the payment without locking, retrieves the PaymentIntent, then settles in ONE autocommit statement
 * (payments.complete → `WITH f AS (UPDATE payments … WHERE id = $n AND status = 'requires_action') …`): that is
 * where it waits. Once the fake has answered the retrieve and PostgreSQL shows the service's backend waiting on
 * our lock, the service is SIGKILLed. The orphaned backend is still queued for the lock with a statement that would
 * commit by itself once it got it (PostgreSQL does not notice a dead client while a statement waits), so the lock is
 * held until the service's own statement_timeout (DATABASE_QUERY_TIMEOUT_MS, short here) has cancelled that statement
 * and the backend is gone, and only then rolled back: nothing of the dead return is committed, as when the process
 * dies before its statement reaches the database. Then the service is restarted on the same port and:
 * - webhook: Stripe's signed payment_intent.succeeded settles the payment (recovery worker off); its redelivery
 *   changes nothing;
 * - recovery worker: the worker asks Stripe about requires_action payments unchanged for 60 s, a constant in
 *   plugins/workers.ts (ACTION_ASK_AFTER_SECONDS, no setting): the test moves the payment's updated_at two minutes
 *   back (as if the shopper had returned two minutes ago) instead of waiting a minute; the late webhook is a no-op.
 * Either way: succeeded with the PaymentIntent made before the kill, exactly one payment.succeeded event, one
 * PaymentIntent created at Stripe (one charge, never captured or canceled), and the shopper's reload of the return
 * address only redirects (303 to the merchant's returnUrl with status=succeeded) without asking Stripe again.
 *
 * PostgreSQL only (as adyen-notification-crash.test.ts): on SQLite an outside writer can only take the
 * database-wide write lock. Runs in CI step 6 (FAULT_TESTS=1), after `npm run build`, like the other fault tests.
 * Only 127.0.0.1.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import Stripe from 'stripe'
import { faultTestsUnavailable, freePort, ServiceInstance, until } from './faults-fixtures'
import { provisionMerchant } from '../helpers/server-process'
import { ADMIN_AUTH, TEST_ADMIN_KEY } from '../helpers/app'
import { FakeStripe, type RecordedRequest } from '../helpers/fake-stripe'
import { describeUrl, freshSchema, POSTGRES_TEST_URL, postgresUnreachable, type TestSchema } from '../helpers/postgres'

const SECRET_KEY = 'sk_test_returnCrashEXAMPLE4242'
const WEBHOOK_SECRET = 'whsec_returnCrash0123456789abcdef'
const MERCHANT_RETURN = 'https://shop.example.com/done?order=A-7'
const REQUEST_TIMEOUT_MS = 15_000
/** The first life's statement_timeout: how long the dead return's statement stays queued for our lock. */
const FIRST_LIFE_QUERY_TIMEOUT_MS = 2000

type SettledBy = 'webhook' | 'recovery'

interface PaymentBody {
  id: string
  status: string
  connector: { id: string | null, type: string }
  connectorReference?: string
  amountCaptured: number
  nextAction?: { type: string, url: string, method: string } | null
  paymentMethodDetails?: unknown
}

interface StoredPayment { status: string, updated_at: string, next_action: unknown }

function startService (t: Test, schema: TestSchema, fake: FakeStripe, port: number, env: Record<string, string>): ServiceInstance {
  return new ServiceInstance(t, {
    DATABASE_URL: schema.url,
    DATABASE_POOL_SIZE: '4',
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    STRIPE_API_URL: fake.url,
    RATE_LIMIT_MAX: '100000',
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    WEBHOOK_POLL_INTERVAL_MS: '0',
    ...env
  })
}

async function send (url: string, init: { method?: string, headers?: Record<string, string>, body?: string } = {}): Promise<{ status: number, text: string, location: string | null }> {
  const res = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  return { status: res.status, text: await res.text(), location: res.headers.get('location') }
}

async function postJson (url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number, text: string }> {
  return await send(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

async function getPayment (base: string, auth: { authorization: string }, id: string): Promise<PaymentBody> {
  const res = await send(`${base}/api/payments/${id}`, { headers: auth })
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

/** Stripe's signed delivery of `type` with the PaymentIntent as it is now at the fake, under event id `eventId`. */
function stripeEvent (fake: FakeStripe, intentId: string, type: string, eventId: string): { payload: string, signature: string } {
  const intent = fake.intents.get(intentId)
  if (intent === undefined) throw new Error(`the fake Stripe has no PaymentIntent ${intentId}`)
  const payload = JSON.stringify({ id: eventId, object: 'event', api_version: '2026-10-28.endive', created: Math.floor(Date.now() / 1000), type, livemode: false, data: { object: intent } })
  return { payload, signature: Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }) }
}

async function deliver (base: string, stripeId: string, event: { payload: string, signature: string }): Promise<{ status: number, text: string }> {
  return await send(`${base}/connectors/${stripeId}/stripe-events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': event.signature },
    body: event.payload
  })
}

const creations = (fake: FakeStripe): RecordedRequest[] => fake.requests.filter((request) => request.method === 'POST' && request.path === '/v1/payment_intents')
const retrievals = (fake: FakeStripe, intentId: string): number =>
  fake.requests.filter((request) => request.method === 'GET' && request.path === `/v1/payment_intents/${intentId}`).length
const changesAtStripe = (fake: FakeStripe, intentId: string): string[] =>
  fake.requests.filter((request) => request.method === 'POST' && request.path.startsWith(`/v1/payment_intents/${intentId}/`)).map((request) => request.path)

async function killedBetweenAnswerAndCommit (t: Test, settledBy: SettledBy): Promise<void> {
  const schema = await freshSchema(t)
  const fake = await FakeStripe.start()
  t.teardown(async () => { await fake.close() })
  fake.keys.add(SECRET_KEY)
  // One port for both lives: the return address Stripe holds (PUBLIC_BASE_URL/checkout/return/{token}) is where the shopper's browser goes.
  const port = await freePort()
  // No background worker in the first life: only the shopper's return touches the payment.
  const instance = startService(t, schema, fake, port, { RECOVERY_INTERVAL_MS: '0', DATABASE_QUERY_TIMEOUT_MS: String(FIRST_LIFE_QUERY_TIMEOUT_MS) })
  const base = await instance.listening()
  const { merchantId, auth } = await provisionMerchant(base, TEST_ADMIN_KEY)
  // Stripe checks the key with GET /v1/balance: the fake must listen while the account is created.
  const account = await postJson(`${base}/merchants/${merchantId}/connectors`, ADMIN_AUTH,
    { type: 'stripe', credentials: { secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET }, priority: 0 })
  t.equal(account.status, 201, 'the Stripe account is created (its key checked against the fake)', { body: account.text })
  const stripeId = (JSON.parse(account.text) as { id: string }).id

  const created = await postJson(`${base}/api/payments`, { ...auth, 'idempotency-key': `return-crash-${settledBy}` },
    { amount: 25, currency: 'EUR', paymentMethod: 'pm_card_authenticationRequired', returnUrl: MERCHANT_RETURN })
  t.equal(created.status, 201, 'the customer-present payment is created', { body: created.text })
  const payment = JSON.parse(created.text) as PaymentBody
  const intentId = payment.connectorReference ?? ''
  t.match(payment, { status: 'requires_action', connector: { id: stripeId, type: 'stripe' }, connectorReference: /^pi_/, nextAction: { type: 'redirect', method: 'GET', url: `${fake.url}/3ds2/${intentId}` } },
    'requires_action: the shopper is sent to Stripe\'s 3-D Secure page')
  const [creation] = creations(fake)
  t.equal(creations(fake).length, 1, 'one PaymentIntent creation')
  t.equal(creation?.headers['idempotency-key'], `payment-${payment.id}`, 'under the key derived from the payment')
  const returnAddress = String(creation?.body.return_url)
  t.match(returnAddress, new RegExp(`^http://127\\.0\\.0\\.1:${port}/checkout/return/[A-Za-z0-9_-]{43}$`), 'Stripe returns the shopper to the service, with a token')
  t.notOk(returnAddress.includes(payment.id), 'the return address does not carry the payment id')

  fake.authenticate(intentId, true)
  t.equal(fake.intents.get(intentId)?.status, 'succeeded', 'the shopper authenticated on Stripe\'s page: the PaymentIntent succeeded')

  const lock = await lockPaymentRow(t, schema, payment.id)
  // What Stripe appends to the return address; never trusted.
  const shopperReturn = `${returnAddress}?payment_intent=${intentId}&payment_intent_client_secret=${intentId}_secret_x&redirect_status=succeeded`
  const inFlight = send(shopperReturn).then((res) => res.status, (err: unknown) => (err as Error).message)
  const askedMs = await until(async () => retrievals(fake, intentId) === 1, 10_000, 10)
  let waiting: Array<{ pid: number, query: string }> = []
  const blockedMs = await until(async () => {
    waiting = await schema.query<{ pid: number, query: string }>(
      'SELECT pid, query FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND application_name = \'product-payment-service\'', [lock.pid])
    return waiting.length > 0
  }, 10_000, 10)
  t.match(waiting, [{ query: /UPDATE payments\s+SET status = .*WHERE id = \$\d+ AND status = \$\d+/s }], 'the return\'s settling statement waits on our lock', { waiting })
  t.pass(`Stripe answered the retrieve ${askedMs} ms after the return was sent; the settle waited on our row lock ${blockedMs} ms later`)
  const exited = instance.exited
  instance.child.kill('SIGKILL')
  t.match(await exited, { signal: 'SIGKILL' }, 'killed after Stripe\'s answer, before the outcome was committed')
  t.notOk(typeof await inFlight === 'number', 'the shopper\'s browser got no answer', { inFlight: await inFlight })
  const killedAt = Date.now()
  // The orphaned backend's statement would commit once it got the lock: keep the lock until statement_timeout ended it.
  const orphans = waiting.map((backend) => backend.pid)
  const orphanGoneMs = await until(async () => (await schema.query('SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1::int[])', [orphans])).length === 0,
    FIRST_LIFE_QUERY_TIMEOUT_MS + 5000, 20)
  t.pass(`the dead return's backend was gone ${orphanGoneMs} ms after the kill (its statement_timeout is ${FIRST_LIFE_QUERY_TIMEOUT_MS} ms), our lock still held`)
  await lock.release()

  const stored = async (): Promise<StoredPayment | undefined> =>
    (await schema.query<StoredPayment>('SELECT status, updated_at, next_action FROM payments WHERE id = $1', [payment.id]))[0]
  const eventTypes = async (): Promise<string[]> =>
    (await schema.query<{ type: string }>('SELECT type FROM events WHERE resource_id = $1 ORDER BY sequence', [payment.id])).map((row) => row.type)
  const before = await stored()
  t.equal(before?.status, 'requires_action', 'committed: still requires_action (the dead return settled nothing)')
  t.same(await eventTypes(), ['payment.requires_action'], 'committed: no outcome event')

  const restarted = startService(t, schema, fake, port,
    settledBy === 'recovery' ? { RECOVERY_AGE_SECONDS: '1', RECOVERY_INTERVAL_MS: '200' } : { RECOVERY_INTERVAL_MS: '0' })
  const newBase = await restarted.listening()
  t.equal(newBase, base, 'restarted on the same address')
  const retrievalsBefore = retrievals(fake, intentId)
  let settled: PaymentBody | undefined
  const isSettled = async (): Promise<boolean> => {
    settled = await getPayment(newBase, auth, payment.id)
    return settled.status !== 'requires_action'
  }
  const succeeded = stripeEvent(fake, intentId, 'payment_intent.succeeded', `evt_${randomUUID().replaceAll('-', '').slice(0, 24)}`)

  if (settledBy === 'webhook') {
    t.notOk(await isSettled(), 'after the restart the payment still waits for its outcome')
    const delivered = await deliver(newBase, stripeId, succeeded)
    t.same(delivered, { status: 200, text: '{"received":true}', location: null }, 'Stripe\'s payment_intent.succeeded is accepted')
    t.ok(await isSettled(), `the webhook settled the payment ${Date.now() - killedAt} ms after the kill`)
    // The event's PaymentIntent names its charge by id: one read with the charge expanded, for the card (never a write).
    t.equal(retrievals(fake, intentId), retrievalsBefore + 1, 'from the event, plus one read of the PaymentIntent for its card')
    t.same(fake.requests.filter((request) => request.method === 'GET' && request.path === `/v1/payment_intents/${intentId}`).at(-1)?.query, { 'expand[0]': 'latest_charge' }, 'with its charge expanded')
  } else {
    // The worker asks about requires_action payments unchanged for 60 s (ACTION_ASK_AFTER_SECONDS, not a setting): as if two minutes had passed.
    await schema.query('UPDATE payments SET updated_at = $2 WHERE id = $1', [payment.id, new Date(Date.now() - 120_000).toISOString()])
    const settledAfterMs = await until(isSettled, 20_000, 100)
    t.pass(`the recovery worker settled the payment ${Date.now() - killedAt} ms after the kill (${settledAfterMs} ms after the restart listened)`)
    const logged = (): boolean => restarted.logs.some((line) => line.msg === 'a payment waiting for its shopper settled' && line.paymentId === payment.id)
    await until(async () => logged(), 5000, 20)
    t.ok(logged(), 'the recovery worker logged the settlement')
    t.equal(retrievals(fake, intentId), retrievalsBefore + 1, 'it asked Stripe once (a retrieve)')
  }
  t.match(settled, { id: payment.id, status: 'succeeded', connector: { id: stripeId, type: 'stripe' }, connectorReference: intentId, amountCaptured: 25 },
    'succeeded with the PaymentIntent made before the kill')
  t.same(settled?.paymentMethodDetails, { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2034, country: 'US' } }, 'with the card, whichever settled it')
  t.notOk(settled?.nextAction, 'no next action any more')
  t.same(await eventTypes(), ['payment.requires_action', 'payment.succeeded'], 'exactly one payment.succeeded event')
  t.equal(creations(fake).length, 1, 'one PaymentIntent creation at Stripe')
  t.equal(fake.intents.size, 1, 'one PaymentIntent: one charge')
  t.same(changesAtStripe(fake, intentId), [], 'never captured or canceled at Stripe')
  const after = await stored()

  // Whichever comes second is a no-op: the event again (a redelivery, or the late one after the worker).
  const again = await deliver(newBase, stripeId, succeeded)
  t.equal(again.status, 200, `Stripe's ${settledBy === 'webhook' ? 'redelivery' : 'late payment_intent.succeeded'} is accepted`, { body: again.text })
  const retrievalsSettled = retrievals(fake, intentId)
  const reload = await send(shopperReturn)
  t.equal(reload.status, 303, 'the shopper\'s reload of the return address is a 303', { body: reload.text })
  const location = new URL(reload.location ?? 'missing:')
  t.equal(`${location.origin}${location.pathname}`, 'https://shop.example.com/done', 'to the merchant\'s returnUrl')
  t.same(Object.fromEntries(location.searchParams), { order: 'A-7', paymentId: payment.id, status: 'succeeded' }, 'with its own query, the payment id and status=succeeded')
  t.equal(retrievals(fake, intentId), retrievalsSettled, 'a settled payment is not asked about at Stripe again')
  t.same(await stored(), after, 'the reload and the event changed nothing stored')
  t.same(await eventTypes(), ['payment.requires_action', 'payment.succeeded'], 'still one payment.succeeded event')
  t.match(await getPayment(newBase, auth, payment.id), { status: 'succeeded', amountCaptured: 25 }, 'still succeeded')
  t.equal(fake.intents.size, 1, 'still one PaymentIntent')
  t.same(restarted.errors(), [], 'no error logged by the restarted service')
  t.notOk(JSON.stringify([instance.logs, restarted.logs]).includes(SECRET_KEY), 'the secret key is never logged')
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
  t.test('PostgreSQL: SIGKILL between Stripe\'s answer and the commit at the return endpoint; after the restart Stripe\'s webhook settles it once', async (t) => {
    await killedBetweenAnswerAndCommit(t, 'webhook')
  })
  t.test('PostgreSQL: SIGKILL between Stripe\'s answer and the commit at the return endpoint; after the restart the recovery worker settles it once', async (t) => {
    await killedBetweenAnswerAndCommit(t, 'recovery')
  })
}

main().catch((err: unknown) => { t.fail(String(err)) })
