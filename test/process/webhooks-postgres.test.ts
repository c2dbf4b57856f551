/**
 * Two instances on one PostgreSQL schema, both running the delivery worker: each
 * attempt is sent once (claims use FOR UPDATE SKIP LOCKED and a lease). Every event's
 * first attempt is answered 503, so each event must arrive exactly twice: once per
 * attempt, never twice for the same attempt. Skipped when PostgreSQL is unreachable
 * (failed instead with REQUIRE_POSTGRES=1, as in CI).
 */
import t from 'tap'
import { provisionMerchant, ServerProcess } from '../helpers/server-process'
import { TEST_ADMIN_KEY, TEST_ENCRYPTION_KEYS } from '../helpers/app'
import { describeUrl, freshSchema, POSTGRES_TEST_URL, postgresUnreachable } from '../helpers/postgres'
import { webhookReceiver } from '../helpers/webhook-receiver'

const PAYMENTS = 30

async function main (): Promise<void> {
  const why = await postgresUnreachable()
  if (why !== undefined) {
    const message = `PostgreSQL tests skipped: cannot connect to ${describeUrl(POSTGRES_TEST_URL)} (${why})`
    if (process.env.REQUIRE_POSTGRES === '1') t.fail(message)
    else t.plan(0, message)
    return
  }

  t.test('two PostgreSQL instances deliver each attempt once', async (t) => {
    const schema = await freshSchema(t)
    const seen = new Map<string, number>()
    const receiver = await webhookReceiver(t, (request) => {
      const id = String(request.headers['webhook-id'])
      const count = (seen.get(id) ?? 0) + 1
      seen.set(id, count)
      return { status: count === 1 ? 503 : 200 }
    })
    const env = {
      PORT: '0',
      LOG_LEVEL: 'info',
      DATABASE_URL: schema.url,
      ADMIN_API_KEY: TEST_ADMIN_KEY,
      ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
      DATABASE_POOL_SIZE: '5',
      RATE_LIMIT_MAX: '10000',
      RECOVERY_INTERVAL_MS: '0',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_DELAYS: '1s,1s',
      WEBHOOK_POLL_INTERVAL_MS: '20',
      WEBHOOK_CONCURRENCY: '4'
    }
    const a = new ServerProcess(t, env)
    const baseA = await a.listening()
    const b = new ServerProcess(t, env)
    const baseB = await b.listening()
    const merchant = await provisionMerchant(baseA, TEST_ADMIN_KEY)
    const created = await fetch(`${baseB}/merchants/${merchant.merchantId}/webhook-endpoints`, {
      method: 'POST',
      headers: { ...merchant.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, enabledEvents: ['payment.succeeded', 'payment.declined'] })
    })
    t.equal(created.status, 201)
    await Promise.all(Array.from({ length: PAYMENTS }, async (_, i) => {
      const res = await fetch(`${i % 2 === 0 ? baseA : baseB}/api/payments`, {
        method: 'POST',
        headers: { ...merchant.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 5 + i, currency: 'USD' })
      })
      t.ok(res.status === 201 || res.status === 402, `payment ${i} acknowledged`)
    }))
    await receiver.waitFor(2 * PAYMENTS, 60_000)
    // Anything sent twice would arrive within a few polls more.
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    t.equal(seen.size, PAYMENTS, 'one event per payment')
    t.same([...new Set(seen.values())], [2], 'each event arrived exactly twice: the failed first attempt and the retry')
    t.equal(receiver.received.length, 2 * PAYMENTS)
    const rows = await schema.query<{ status: string, attempts: number }>('SELECT status, attempts FROM webhook_deliveries')
    t.equal(rows.length, PAYMENTS)
    t.ok(rows.every((row) => row.status === 'succeeded' && Number(row.attempts) === 2), 'every delivery succeeded on its second attempt')
    const sequences = await schema.query<{ resource_id: string, sequence: number }>('SELECT resource_id, sequence FROM events')
    t.ok(sequences.every((row) => Number(row.sequence) === 1), 'one event per payment, numbered 1')
    a.child.kill('SIGTERM')
    b.child.kill('SIGTERM')
    await Promise.all([a.exited, b.exited])
  })
}

main().catch((err: unknown) => { t.threw(err as Error) })
