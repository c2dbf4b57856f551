/**
 * The refund concurrency proof across processes: two service instances on one
 * PostgreSQL schema (as behind a load balancer). 20 concurrent 1.00 refunds of a
 * 10.00 payment, split across both, give exactly 10 × 201 and 10 × 409, ten
 * refund rows and ten gateway refunds: the payment row lock serialises them.
 * Skipped with a message when PostgreSQL is unreachable (failed with REQUIRE_POSTGRES=1).
 */
import t from 'tap'
import { provisionMerchant, ServerProcess } from '../helpers/server-process'
import { TEST_ADMIN_KEY, TEST_ENCRYPTION_KEYS } from '../helpers/app'
import { ensurePostgres, freshSchema } from '../helpers/postgres'
import { itemAt } from '../helpers/items'

async function main (): Promise<void> {
  if (!await ensurePostgres(t)) return

  t.test('two instances on PostgreSQL: 20 concurrent 1.00 refunds of 10.00 → exactly 10 × 201', async (t) => {
    const schema = await freshSchema(t)
    const env = { PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: schema.url, DATABASE_POOL_SIZE: '10', GATEWAY_SIM_LATENCY_MS: '30', ADMIN_API_KEY: TEST_ADMIN_KEY, ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS }
    const instances = [new ServerProcess(t, env), new ServerProcess(t, env)]
    const bases = await Promise.all(instances.map(async (server) => {
      const line = await server.waitForLog((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('Server listening at '), 90_000)
      return (line.msg as string).slice('Server listening at '.length)
    }))

    const merchant = await provisionMerchant(itemAt(bases, 0), TEST_ADMIN_KEY)
    const created = await fetch(`${bases[0]}/api/payments`, { method: 'POST', headers: { 'content-type': 'application/json', ...merchant.auth }, body: JSON.stringify({ amount: 10, currency: 'USD' }) })
    t.equal(created.status, 201)
    const paymentId = (await created.json() as { id: string }).id
    // Warm both up so the refunds really race.
    await Promise.all(bases.map(async (base) => { await (await fetch(`${base}/api/payments/${paymentId}`, { headers: merchant.auth })).arrayBuffer() }))

    const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
      const res = await fetch(`${bases[i % 2]}/api/payments/${paymentId}/refunds`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...merchant.auth, 'idempotency-key': `refund-${i}`, 'x-forwarded-for': `10.2.0.${i}` },
        body: JSON.stringify({ amount: 1 })
      })
      return { instance: i % 2, status: res.status, body: await res.json() as { type?: string } }
    }))
    const created201 = answers.filter((a) => a.status === 201)
    const refused = answers.filter((a) => a.status === 409)
    t.equal(created201.length, 10, 'exactly ten refunds')
    t.equal(refused.length, 10, 'the rest are 409')
    t.ok(refused.every((a) => a.body.type === 'urn:problem-type:refund-exceeds-remaining' || a.body.type === 'urn:problem-type:payment-not-refundable'), 'with a refund problem type')
    t.comment(`201s per instance: ${[0, 1].map((i) => created201.filter((a) => a.instance === i).length).join(' / ')}`)

    const [payment] = await schema.query<{ status: string, amount_refunded_minor: string, refund_pending_minor: string }>('SELECT status, amount_refunded_minor, refund_pending_minor FROM payments')
    t.same(payment, { status: 'refunded', amount_refunded_minor: '1000', refund_pending_minor: '0' })
    const [refunds] = await schema.query<{ n: number }>("SELECT count(*)::int AS n FROM refunds WHERE status = 'succeeded'")
    t.equal(refunds?.n, 10, 'ten refund rows')
    const [ledger] = await schema.query<{ n: number }>("SELECT count(*)::int AS n FROM gateway_ledger WHERE idempotency_key LIKE 'refund-%'")
    t.equal(ledger?.n, 10, 'the gateway refunded ten times')

    for (const server of instances) server.child.kill('SIGTERM')
    const exits = await Promise.all(instances.map(async (server) => await server.exited))
    t.same(exits.map((e) => e.code), [0, 0], 'both shut down cleanly')
  })
}

main().catch((err: unknown) => { t.threw(err as Error) })
