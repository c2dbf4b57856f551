/**
 * The capture concurrency proof across processes: two service instances on one PostgreSQL
 * schema (as behind a load balancer). 20 concurrent captures of one authorization with different
 * Idempotency-Keys, split across both, give exactly one 200 and 19 × 409, and the gateway
 * captures once: the payment row lock serialises the reservations.
 * Skipped with a message when PostgreSQL is unreachable (failed with REQUIRE_POSTGRES=1).
 */
import t from 'tap'
import { itemAt } from '../helpers/items'
import { provisionMerchant, ServerProcess } from '../helpers/server-process'
import { TEST_ADMIN_KEY, TEST_ENCRYPTION_KEYS } from '../helpers/app'
import { ensurePostgres, freshSchema } from '../helpers/postgres'

async function main (): Promise<void> {
  if (!await ensurePostgres(t)) return

  t.test('two instances on PostgreSQL: 20 concurrent captures of one authorization → exactly one 200, 19 × 409, one capture', async (t) => {
    const schema = await freshSchema(t)
    const env = { PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: schema.url, DATABASE_POOL_SIZE: '10', GATEWAY_SIM_LATENCY_MS: '30', ADMIN_API_KEY: TEST_ADMIN_KEY, ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS }
    const instances = [new ServerProcess(t, env), new ServerProcess(t, env)]
    const bases = await Promise.all(instances.map(async (server) => {
      const line = await server.waitForLog((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('Server listening at '), 90_000)
      return (line.msg as string).slice('Server listening at '.length)
    }))

    const base = itemAt(bases, 0)
    const merchant = await provisionMerchant(base, TEST_ADMIN_KEY)
    const created = await fetch(`${bases[0]}/api/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...merchant.auth },
      body: JSON.stringify({ amount: 10, currency: 'USD', captureMethod: 'manual' })
    })
    t.equal(created.status, 201)
    const payment = await created.json() as { id: string, status: string }
    t.equal(payment.status, 'requires_capture')
    // Warm both up so the captures really race.
    await Promise.all(bases.map(async (base) => { await (await fetch(`${base}/api/payments/${payment.id}`, { headers: merchant.auth })).arrayBuffer() }))

    const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
      const res = await fetch(`${bases[i % 2]}/api/payments/${payment.id}/capture`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...merchant.auth, 'idempotency-key': `capture-${i}`, 'x-forwarded-for': `10.3.0.${i}` },
        body: JSON.stringify({ amount: 10 - (i % 5) })
      })
      return { instance: i % 2, status: res.status, body: await res.json() as { type?: string, amountCaptured?: number } }
    }))
    const captured = answers.filter((a) => a.status === 200)
    const refused = answers.filter((a) => a.status === 409)
    t.equal(captured.length, 1, 'exactly one capture')
    t.equal(refused.length, 19, 'the rest are 409')
    t.ok(refused.every((a) => a.body.type === 'urn:problem-type:payment-not-capturable'), 'payment-not-capturable')
    t.comment(`the 200 came from instance ${captured[0]?.instance}`)

    const [row] = await schema.query<{ status: string, amount_captured_minor: string, capture_pending_minor: string | null, capture_attempts: number }>(
      'SELECT status, amount_captured_minor, capture_pending_minor, capture_attempts FROM payments')
    t.same(row, { status: 'succeeded', amount_captured_minor: String((captured[0]?.body.amountCaptured ?? 0) * 100), capture_pending_minor: null, capture_attempts: 1 })
    const [ledger] = await schema.query<{ n: number }>("SELECT count(*)::int AS n FROM gateway_ledger WHERE idempotency_key LIKE '%:settlement'")
    t.equal(ledger?.n, 1, 'the gateway captured once')

    for (const server of instances) server.child.kill('SIGTERM')
    const exits = await Promise.all(instances.map(async (server) => await server.exited))
    t.same(exits.map((e) => e.code), [0, 0], 'both shut down cleanly')
  })
}

main().catch((err: unknown) => { t.threw(err as Error) })
