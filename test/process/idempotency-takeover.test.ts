/**
 * Idempotency locks have a holder (issue 27): two instances of the service as real processes on one
 * PostgreSQL schema. A request still being worked on keeps its key however long it takes: its
 * instance beats, and the other instance answers 409 (never a second payment or charge). An instance
 * SIGKILLed mid-request stops beating, and a client's retry on the other instance takes the key over
 * within seconds (INSTANCE_DEAD_AFTER_MS), not after IDEMPOTENCY_LOCK_SECONDS: it resumes the same
 * payment under the same gateway key, so there is still one payment and one charge.
 * Skipped when PostgreSQL is unreachable; failed instead with REQUIRE_POSTGRES=1 (CI).
 */
import t from 'tap'
import { itemAt } from '../helpers/items'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { provisionMerchant, ServerProcess } from '../helpers/server-process'
import { TEST_ADMIN_KEY, TEST_ENCRYPTION_KEYS } from '../helpers/app'
import { ensurePostgres, freshSchema } from '../helpers/postgres'

/** Long enough to act while a payment is at the gateway. */
const GATEWAY_LATENCY_MS = 3000
const DEAD_AFTER_MS = 1000
const LOCK_SECONDS = 60

interface Answer { status: number, id?: string, at: number }

async function main (): Promise<void> {
  if (!await ensurePostgres(t)) return
  const schema = await freshSchema(t)
  const env = {
    PORT: '0',
    LOG_LEVEL: 'info',
    DATABASE_URL: schema.url,
    ADMIN_API_KEY: TEST_ADMIN_KEY,
    ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
    DATABASE_POOL_SIZE: '4',
    GATEWAY_SIM_LATENCY_MS: String(GATEWAY_LATENCY_MS),
    GATEWAY_TIMEOUT_MS: '20000',
    IDEMPOTENCY_LOCK_SECONDS: String(LOCK_SECONDS),
    INSTANCE_HEARTBEAT_MS: '200',
    INSTANCE_DEAD_AFTER_MS: String(DEAD_AFTER_MS),
    // No recovery worker: only the client's retry can finish a payment here.
    RECOVERY_INTERVAL_MS: '0'
  }
  const a = new ServerProcess(t, env)
  const b = new ServerProcess(t, env)
  const [baseA, baseB] = await Promise.all([a.listening(90_000), b.listening(90_000)])
  const { auth } = await provisionMerchant(baseA, TEST_ADMIN_KEY)
  // Both have been beating for longer than DEAD_AFTER_MS before any test below judges a holder.
  await sleep(DEAD_AFTER_MS * 2)

  const pay = async (base: string, key: string): Promise<Answer> => {
    const res = await fetch(`${base}/api/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, ...auth },
      body: JSON.stringify({ amount: 42, currency: 'EUR' })
    })
    const body = await res.json() as { id?: string }
    return { status: res.status, ...(body.id === undefined ? {} : { id: body.id }), at: Date.now() }
  }
  const chargesOf = async (paymentId: string): Promise<number> =>
    itemAt(await schema.query<{ n: number }>('SELECT count(*)::int AS n FROM gateway_ledger WHERE idempotency_key = $1', [`payment-${paymentId}`]), 0).n

  t.test('a live holder keeps its key for as long as its request runs, past INSTANCE_DEAD_AFTER_MS', async (t) => {
    const key = randomUUID()
    const first$ = { done: false }
    const first = pay(baseA, key).then((answer) => { first$.done = true; return answer })
    await sleep(300)
    const asked: Answer[] = []
    // For longer than the dead-after time, while A's request waits for the gateway.
    while (!first$.done) {
      asked.push(await pay(baseB, key))
      await sleep(200)
    }
    const answered = await first
    t.equal(answered.status, 201, 'A finished its payment')
    const meanwhile = asked.filter((answer) => answer.at < answered.at).map((answer) => answer.status)
    t.ok(meanwhile.length >= 5, `B was asked ${meanwhile.length} times over ${GATEWAY_LATENCY_MS} ms`)
    t.ok(meanwhile.every((status) => status === 409), `B answered 409 every time: the lock of a beating instance is never taken (${meanwhile.join(', ')})`)
    const replay = await pay(baseB, key)
    t.same([replay.status, replay.id], [201, answered.id], 'then B replays A\'s answer')
    t.equal(await chargesOf(answered.id as string), 1, 'one charge')
    t.notOk(b.logs.some((line) => line.msg === 'took over an idempotency key from a stopped instance'), 'B never took a key over')
  })

  t.test('A SIGKILLed mid-request: the retry on B takes the key over within seconds; one payment, one charge', async (t) => {
    const key = randomUUID()
    const first = pay(baseA, key).catch(() => undefined)
    // A has written the pending payment and is waiting for the gateway.
    await sleep(800)
    const [pending] = await schema.query<{ resource_id: string, locked_by: string }>('SELECT resource_id, locked_by FROM idempotency_keys WHERE key = $1', [key])
    t.ok(pending?.resource_id, 'A created the payment and holds its key')
    a.child.kill('SIGKILL')
    await a.exited
    const killedAt = Date.now()
    t.equal(await first, undefined, 'A never answered')

    const answers: Answer[] = []
    for (;;) {
      const answer = await pay(baseB, key)
      answers.push(answer)
      if (answer.status !== 409 && answer.status !== 503) break
      if (Date.now() - killedAt > 30_000) break
      await sleep(200)
    }
    const final = itemAt(answers, answers.length - 1)
    t.equal(final.status, 201, `B answered the retry (answers: ${answers.map((answer) => answer.status).join(', ')})`)
    t.equal(final.id, pending?.resource_id, 'with the payment A created: resumed, not created again')
    const startedOfFinal = final.at - GATEWAY_LATENCY_MS
    t.ok(startedOfFinal - killedAt < DEAD_AFTER_MS + 1500,
      `the retry that took it over started ${startedOfFinal - killedAt} ms after the kill (INSTANCE_DEAD_AFTER_MS ${DEAD_AFTER_MS}; the lock alone would have held it ${LOCK_SECONDS} s)`)
    t.equal(await chargesOf(final.id as string), 1, 'one charge at the gateway: the same gateway idempotency key')
    const { n: payments } = itemAt(await schema.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1', [key]), 0)
    t.equal(payments, 1, 'one key')
    t.ok(b.logs.some((line) => line.msg === 'took over an idempotency key from a stopped instance' && line.stoppedInstance === pending?.locked_by),
      'B says once whose key it took over')
    const replay = await pay(baseB, key)
    t.same([replay.status, replay.id], [201, final.id], 'and replays it afterwards')
  })
}

main().catch((err: unknown) => { t.fail(String(err)) })
