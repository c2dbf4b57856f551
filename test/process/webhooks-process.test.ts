/**
 * At-least-once delivery across a crash: a server acknowledges payments (their events
 * and deliveries committed with them), is killed with SIGKILL before its delivery worker
 * ran, and the restarted server delivers every one of those events.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { provisionMerchant, ServerProcess } from '../helpers/server-process'
import { TEST_ADMIN_KEY } from '../helpers/app'
import { webhookReceiver } from '../helpers/webhook-receiver'

const PAYMENTS = 12

t.test('SIGKILL after acknowledging payments: every event is delivered after restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-kill-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const receiver = await webhookReceiver(t)
  const env = {
    PORT: '0',
    LOG_LEVEL: 'info',
    DATABASE_URL: `file:${join(dir, 'service.db')}`,
    ADMIN_API_KEY: TEST_ADMIN_KEY,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_DELAYS: '1s,1s,1s',
    RECOVERY_INTERVAL_MS: '0'
  }
  // First life: the delivery worker would only look after a minute: it never runs before the kill.
  const first = new ServerProcess(t, { ...env, WEBHOOK_POLL_INTERVAL_MS: '60000' })
  const base = await first.listening()
  const merchant = await provisionMerchant(base, TEST_ADMIN_KEY)
  const endpoint = await fetch(`${base}/merchants/${merchant.merchantId}/webhook-endpoints`, {
    method: 'POST',
    headers: { ...merchant.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url, enabledEvents: ['payment.succeeded', 'payment.declined'] })
  })
  t.equal(endpoint.status, 201)
  const paymentIds: string[] = []
  for (let i = 0; i < PAYMENTS; i++) {
    const res = await fetch(`${base}/api/payments`, {
      method: 'POST',
      headers: { ...merchant.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 10 + i, currency: 'USD' })
    })
    t.ok(res.status === 201 || res.status === 402, `payment ${i} acknowledged (${res.status})`)
    const body = await res.json() as { id?: string, paymentId?: string }
    paymentIds.push(String(body.id ?? body.paymentId))
  }
  first.child.kill('SIGKILL')
  t.equal((await first.exited).signal, 'SIGKILL')
  t.equal(receiver.received.length, 0, 'nothing was delivered before the kill')

  // Second life: the worker runs and delivers what the first one committed.
  const second = new ServerProcess(t, { ...env, WEBHOOK_POLL_INTERVAL_MS: '100' })
  await second.listening()
  const received = await receiver.waitFor(PAYMENTS, 30_000)
  const delivered = new Set(received.map((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id))
  t.equal(delivered.size, PAYMENTS, 'every acknowledged payment\'s event arrived')
  t.same([...delivered].sort(), [...paymentIds].sort(), 'exactly the acknowledged payments')
  second.child.kill('SIGTERM')
  await second.exited
})
