/**
 * The Stripe connector's faults with the real, built service (dist/app/server.js) and the local fake Stripe
 * (test/helpers/fake-stripe.ts), on SQLite and on PostgreSQL (a throwaway schema): a merchant with a Stripe
 * account (priority 0) and a simulated one (priority 1), made through the HTTP API.
 * - refused connection: Stripe certainly did nothing, the payment fails over and succeeds on the simulated one;
 * - no answer after Stripe did the work: 503, pending on Stripe, no failover; the client's retry under the same
 *   Idempotency-Key replays Stripe's answer: one PaymentIntent;
 * - 500 from Stripe: pending on Stripe, no failover, nothing charged on the simulated one; the retry resumes on Stripe;
 * - SIGKILL between Stripe's answer and our commit: after the restart the recovery worker settles the payment
 *   with the same PaymentIntent; one charge.
 * Every downstream request is checked for the Idempotency-Key derived from the payment (`payment-{id}`).
 * Runs in CI step 6 (FAULT_TESTS=1), after `npm run build`, like the other fault tests. Only 127.0.0.1.
 */
import t, { type Test } from 'tap'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { faultTestsUnavailable, ServiceInstance, until } from './faults-fixtures'
import { provisionMerchant } from '../helpers/server-process'
import { ADMIN_AUTH, TEST_ADMIN_KEY } from '../helpers/app'
import { FakeStripe, type RecordedRequest } from '../helpers/fake-stripe'
import { describeUrl, freshSchema, POSTGRES_TEST_URL, postgresUnreachable } from '../helpers/postgres'

const SECRET_KEY = 'sk_test_faultsEXAMPLE4242'
const REQUEST_TIMEOUT_MS = 15_000
const CARD = 'pm_card_visa'

interface Backend {
  name: string
  databaseUrl: string
  /** The simulated connectors' ledger: the downstream keys charged there (`{connectorId}:payment-{id}`). */
  ledgerKeys: () => Promise<string[]>
  /** The payment as stored (read behind the service's back, e.g. while it is down). */
  stored: (id: string) => Promise<StoredPayment | undefined>
}

interface StoredPayment { status: string, connector_type: string, connector_reference: string | null, attempts: unknown }

const STORED_SQL = 'SELECT status, connector_type, connector_reference, attempts FROM payments WHERE id = '

interface Setup {
  fake: FakeStripe
  instance: ServiceInstance
  base: string
  auth: { authorization: string }
  stripeId: string
  simulatedId: string
}

interface PaymentBody {
  id: string
  status: string
  connector: { id: string | null, type: string }
  connectorReference?: string
  attempts: Array<{ connectorId: string | null, connectorType: string, outcome: string, code: string | null }>
}

function sqliteBackend (t: Test): Backend {
  const file = join(t.testdir(), 'service.db')
  return {
    name: 'SQLite',
    databaseUrl: `file:${file}`,
    ledgerKeys: async () => {
      const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true })
      try {
        return db.prepare<[], { k: string }>('SELECT idempotency_key AS k FROM gateway_ledger').all().map((row) => row.k)
      } finally {
        db.close()
      }
    },
    stored: async (id) => {
      const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true })
      try {
        return db.prepare<[string], StoredPayment>(`${STORED_SQL}?`).get(id)
      } finally {
        db.close()
      }
    }
  }
}

async function postgresBackend (t: Test): Promise<Backend> {
  const schema = await freshSchema(t)
  return {
    name: 'PostgreSQL',
    databaseUrl: schema.url,
    ledgerKeys: async () => (await schema.query<{ k: string }>('SELECT idempotency_key AS k FROM gateway_ledger')).map((row) => row.k),
    stored: async (id) => (await schema.query<StoredPayment>(`${STORED_SQL}$1`, [id]))[0]
  }
}

function startService (t: Test, backend: Backend, fake: FakeStripe, env: Record<string, string>): ServiceInstance {
  return new ServiceInstance(t, {
    DATABASE_URL: backend.databaseUrl,
    DATABASE_POOL_SIZE: '4',
    STRIPE_API_URL: fake.url,
    RATE_LIMIT_MAX: '100000',
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    WEBHOOK_POLL_INTERVAL_MS: '0',
    ...env
  })
}

async function addConnector (base: string, merchantId: string, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${base}/merchants/${merchantId}/connectors`, {
    method: 'POST',
    headers: { ...ADMIN_AUTH, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
  })
  if (res.status !== 201) throw new Error(`POST /merchants/{id}/connectors answered ${res.status}: ${await res.text()}`)
  return (await res.json() as { id: string }).id
}

/** A fresh fake Stripe, the service on `backend` pointed at it, and a merchant with Stripe (priority 0) then simulated (priority 1). */
async function setUp (t: Test, backend: Backend, env: Record<string, string>): Promise<Setup> {
  const fake = await FakeStripe.start()
  t.teardown(async () => { await fake.close() })
  fake.keys.add(SECRET_KEY)
  const instance = startService(t, backend, fake, env)
  const base = await instance.listening()
  const { merchantId, auth } = await provisionMerchant(base, TEST_ADMIN_KEY)
  // Stripe checks the key with GET /v1/balance: the fake must listen while the account is created.
  const stripeId = await addConnector(base, merchantId, { type: 'stripe', credentials: { secretKey: SECRET_KEY }, priority: 0 })
  const simulatedId = await addConnector(base, merchantId, { type: 'simulated', priority: 1 })
  return { fake, instance, base, auth, stripeId, simulatedId }
}

async function pay (base: string, auth: { authorization: string }, key: string, amount = 12.5): Promise<{ status: number, body: Record<string, unknown> }> {
  const res = await fetch(`${base}/api/payments`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ amount, currency: 'EUR', paymentMethod: CARD }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
  })
  return { status: res.status, body: await res.json() as Record<string, unknown> }
}

async function getPayment (base: string, auth: { authorization: string }, id: string): Promise<PaymentBody> {
  const res = await fetch(`${base}/api/payments/${id}`, { headers: auth, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  if (res.status !== 200) throw new Error(`GET /api/payments/${id} answered ${res.status}: ${await res.text()}`)
  return await res.json() as PaymentBody
}

/** The PaymentIntent creations the fake received. */
function creations (fake: FakeStripe): RecordedRequest[] {
  return fake.requests.filter((request) => request.method === 'POST' && request.path === '/v1/payment_intents')
}

/** The payment id the service sent Stripe in the PaymentIntent's metadata. */
function paymentIdOf (request: RecordedRequest | undefined): string {
  const id = (request?.body.metadata as Record<string, string> | undefined)?.payment_id
  if (id === undefined) throw new Error('no PaymentIntent creation with metadata[payment_id] was recorded')
  return id
}

function checkNoSecretLogged (t: Test, setup: { instance: ServiceInstance }): void {
  t.notOk(JSON.stringify(setup.instance.logs).includes(SECRET_KEY) || setup.instance.stderr.includes(SECRET_KEY), 'the secret key is never logged')
}

async function refusedConnection (t: Test, backend: Backend): Promise<void> {
  const setup = await setUp(t, backend, { RECOVERY_INTERVAL_MS: '0' })
  const { fake, base, auth, stripeId, simulatedId } = setup
  await fake.stopListening()
  const requestsBefore = fake.requests.length

  const res = await pay(base, auth, 'refused-1')
  t.equal(res.status, 201, 'the payment is 201', { body: res.body })
  t.match(res.body, { status: 'succeeded', connector: { id: simulatedId, type: 'simulated' } }, 'succeeded on the simulated connector')
  t.match(res.body.attempts, [
    { connectorId: stripeId, connectorType: 'stripe', outcome: 'not_processed', code: 'connection_refused' },
    { connectorId: simulatedId, connectorType: 'simulated', outcome: 'succeeded', code: null }
  ], 'attempts: Stripe refused the connection (not processed), then the simulated connector charged')
  t.equal((res.body.attempts as unknown[]).length, 2, 'two attempts')
  t.equal(fake.requests.length, requestsBefore, 'nothing reached Stripe')
  const id = String(res.body.id)
  t.same(await backend.ledgerKeys(), [`${simulatedId}:payment-${id}`], 'the simulated connector charged once, under the payment\'s key')
  t.match(await getPayment(base, auth, id), { status: 'succeeded', connector: { id: simulatedId, type: 'simulated' } }, 'stored as answered')
  checkNoSecretLogged(t, setup)
}

async function answerNeverComes (t: Test, backend: Backend): Promise<void> {
  const setup = await setUp(t, backend, { RECOVERY_INTERVAL_MS: '0', GATEWAY_TIMEOUT_MS: '500' })
  const { fake, base, auth, stripeId } = setup
  fake.failNext('hangAfterWork')

  const started = Date.now()
  const first = await pay(base, auth, 'hang-1')
  const ms = Date.now() - started
  t.equal(first.status, 503, `503 after ${ms} ms (GATEWAY_TIMEOUT_MS 500)`, { body: first.body })
  t.ok(ms < 5000, 'within a few seconds of the gateway time-out')
  t.equal(fake.intents.size, 1, 'Stripe did the work: one PaymentIntent')
  const id = paymentIdOf(creations(fake)[0])
  const pending = await getPayment(base, auth, id)
  t.match(pending, { status: 'pending', connector: { id: stripeId, type: 'stripe' } }, 'pending on the Stripe connector')
  t.same(pending.attempts.map((a) => [a.connectorType, a.outcome, a.code]), [['stripe', 'unknown', 'timeout']], 'one attempt: Stripe, unknown (timeout); no failover')
  t.same(await backend.ledgerKeys(), [], 'the simulated connector charged nothing')

  const retry = await pay(base, auth, 'hang-1')
  t.equal(retry.status, 201, 'the retry under the same Idempotency-Key is 201', { body: retry.body })
  const [intent] = [...fake.intents.values()]
  t.match(retry.body, { id, status: 'succeeded', connector: { id: stripeId, type: 'stripe' }, connectorReference: intent?.id }, 'succeeded on Stripe with the PaymentIntent made the first time')
  t.equal(fake.intents.size, 1, 'still exactly one PaymentIntent')
  const sent = creations(fake)
  t.equal(sent.length, 2, 'two creation requests: the first and the replayed one')
  t.same(sent.map((request) => request.headers['idempotency-key']), [`payment-${id}`, `payment-${id}`], 'both under the payment\'s key payment-{id}')
  t.same(await backend.ledgerKeys(), [], 'the simulated connector never charged')
  checkNoSecretLogged(t, setup)
}

async function serverError (t: Test, backend: Backend): Promise<void> {
  const setup = await setUp(t, backend, { RECOVERY_INTERVAL_MS: '0' })
  const { fake, base, auth, stripeId } = setup
  fake.failNext('status500')

  const first = await pay(base, auth, 'five-hundred-1')
  t.equal(first.status, 503, 'Stripe\'s 500 is a 503: the outcome is unknown', { body: first.body })
  const id = paymentIdOf(creations(fake)[0])
  const pending = await getPayment(base, auth, id)
  t.match(pending, { status: 'pending', connector: { id: stripeId, type: 'stripe' } }, 'pending, and still on the Stripe connector')
  t.same(pending.attempts.map((a) => [a.connectorType, a.outcome, a.code]), [['stripe', 'unknown', 'server_error']], 'one attempt: Stripe, unknown (server_error); no failover')
  t.same(await backend.ledgerKeys(), [], 'the simulated connector charged nothing')
  t.equal(fake.intents.size, 0, 'the 500 did nothing at Stripe')

  const retry = await pay(base, auth, 'five-hundred-1')
  t.equal(retry.status, 201, 'the retry under the same Idempotency-Key resumes on Stripe', { body: retry.body })
  t.match(retry.body, { id, status: 'succeeded', connector: { id: stripeId, type: 'stripe' } }, 'succeeded on Stripe, the same payment')
  t.equal(fake.intents.size, 1, 'one PaymentIntent')
  t.same(creations(fake).map((request) => request.headers['idempotency-key']), [`payment-${id}`, `payment-${id}`], 'both creations under payment-{id}')
  t.same(await backend.ledgerKeys(), [], 'the simulated connector never charged')
  checkNoSecretLogged(t, setup)
}

async function killedBeforeCommit (t: Test, backend: Backend): Promise<void> {
  // The first run's idempotency lock must run out for the recovery worker to take the payment: a short one.
  const env = { IDEMPOTENCY_LOCK_SECONDS: '2', GATEWAY_TIMEOUT_MS: '5000', RECOVERY_AGE_SECONDS: '1', RECOVERY_INTERVAL_MS: '200' }
  const setup = await setUp(t, backend, env)
  const { fake, instance, base, auth, stripeId } = setup
  fake.holdAnswerMs = 4000
  fake.failNext('holdAnswer')

  const inFlight = pay(base, auth, 'killed-1').then((res) => res.status, (err: unknown) => (err as Error).message)
  await until(async () => fake.intents.size === 1, 10_000, 10)
  const id = paymentIdOf(creations(fake)[0])
  const exited = instance.exited
  instance.child.kill('SIGKILL')
  t.match(await exited, { signal: 'SIGKILL' }, 'killed after Stripe did the work, before its answer was committed')
  t.notOk(typeof await inFlight === 'number', 'the client got no answer')
  const stored = await backend.stored(id)
  t.match(stored, { status: 'pending', connector_type: 'stripe', connector_reference: null }, 'what was committed: pending on Stripe, no PaymentIntent recorded')
  // SQLite stores the attempts as JSON text, PostgreSQL as jsonb.
  const attempts = typeof stored?.attempts === 'string' ? JSON.parse(stored.attempts) as unknown : stored?.attempts
  t.same(attempts, [], 'no attempt recorded: the payment was created on the Stripe connector and never heard back')

  const killedAt = Date.now()
  const restarted = startService(t, backend, fake, env)
  const newBase = await restarted.listening()
  let settled: PaymentBody | undefined
  const settledAfterMs = await until(async () => {
    settled = await getPayment(newBase, auth, id)
    return settled.status !== 'pending'
  }, 20_000, 100)
  t.pass(`the recovery worker settled the payment ${Date.now() - killedAt} ms after the kill (${settledAfterMs} ms after the restart listened)`)
  const [intent] = [...fake.intents.values()]
  t.match(settled, { status: 'succeeded', connector: { id: stripeId, type: 'stripe' }, connectorReference: intent?.id }, 'succeeded with the PaymentIntent made before the kill')
  t.equal(fake.intents.size, 1, 'exactly one PaymentIntent')
  const sent = creations(fake)
  t.ok(sent.length >= 2, `the recovery asked Stripe again (${sent.length} creations)`)
  t.ok(sent.every((request) => request.headers['idempotency-key'] === `payment-${id}`), 'every creation under payment-{id}', { keys: sent.map((request) => request.headers['idempotency-key']) })
  t.same(await backend.ledgerKeys(), [], 'the simulated connector never charged')
  t.ok(restarted.logs.some((line) => line.msg === 'recovery settled a pending payment' && line.paymentId === id), 'the recovery worker logged the settlement')

  // The client's own retry now gets the answer the recovery stored under its key, without asking Stripe.
  const creationsBefore = sent.length
  const retry = await pay(newBase, auth, 'killed-1')
  t.equal(retry.status, 201, 'the client\'s retry under the same Idempotency-Key is 201', { body: retry.body })
  t.match(retry.body, { id, status: 'succeeded', connectorReference: intent?.id }, 'the same payment and PaymentIntent')
  t.equal(creations(fake).length, creationsBefore, 'and made no request to Stripe')
  checkNoSecretLogged(t, { instance: restarted })
}

/** Each scenario on its own database (a file or a schema, made for its subtest), fake Stripe and service. */
function scenarios (t: Test, backend: (t: Test) => Promise<Backend> | Backend): void {
  t.test('refused connection: fails over to the next connector', async (t) => { await refusedConnection(t, await backend(t)) })
  t.test('no answer after Stripe did the work: 503 and pending, no failover; the retry replays, one PaymentIntent', async (t) => {
    await answerNeverComes(t, await backend(t))
  })
  t.test('500 from Stripe: pending on Stripe, no failover; the retry resumes there', async (t) => { await serverError(t, await backend(t)) })
  t.test('SIGKILL between Stripe\'s answer and our commit: the recovery finds the same PaymentIntent, one charge', async (t) => {
    await killedBeforeCommit(t, await backend(t))
  })
}

async function main (): Promise<void> {
  const why = faultTestsUnavailable({})
  if (why !== undefined) {
    t.plan(0, why)
    return
  }
  t.test('SQLite', async (t) => { scenarios(t, sqliteBackend) })
  t.test('PostgreSQL', async (t) => {
    const unreachable = await postgresUnreachable()
    if (unreachable !== undefined) {
      const message = `PostgreSQL unreachable at ${describeUrl(POSTGRES_TEST_URL)} (${unreachable})`
      if (process.env.REQUIRE_POSTGRES === '1') t.fail(message)
      else t.plan(0, message)
      return
    }
    scenarios(t, postgresBackend)
  })
}

main().catch((err: unknown) => { t.fail(String(err)) })
