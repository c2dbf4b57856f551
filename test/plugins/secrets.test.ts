import t from 'tap'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { buildTestApp, merchantWithKey } from '../helpers/app'
import { isSealed } from '../../src/secrets/encryption'

function logLines (): { stream: Writable, lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    }
  })
  return { stream, lines }
}

t.test('SQLite without ENCRYPTION_KEYS: the first start generates the key with a warning; a later start uses it and seals secrets left in clear', async (t) => {
  const dir = t.testdir({})
  const env = { DATABASE_URL: `file:${join(dir, 'service.db')}`, WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '0' }
  const first = logLines()
  const app = await buildTestApp(t, env, { logger: { level: 'info', stream: first.stream } })
  const warning = first.lines.find((line) => line.level === 40 && String(line.msg).startsWith('ENCRYPTION_KEYS is not set'))
  t.ok(warning, 'a warning on the first start')
  t.equal(warning?.file, join(dir, 'service.db.encryption-keys'))
  const merchant = await merchantWithKey(app)
  const created = await app.inject({ method: 'POST', url: `/merchants/${merchant.merchantId}/webhook-endpoints`, payload: { url: 'http://127.0.0.1:9/x' } })
  const { id, secret } = created.json() as { id: string, secret: string }
  // As an older version stored it: in clear.
  const stored = await app.db.webhooks.getEndpoint(merchant.merchantId, id)
  t.ok(isSealed(stored?.secret ?? ''))
  t.ok(await app.db.webhooks.replaceSecrets({ id, secret: stored?.secret as string, previousSecret: null }, { secret, previousSecret: null }))
  await app.close()

  const second = logLines()
  const again = await buildTestApp(t, env, { logger: { level: 'info', stream: second.stream } })
  t.notOk(second.lines.some((line) => line.level === 40 && String(line.msg).startsWith('ENCRYPTION_KEYS')), 'no key warning on a later start')
  t.ok(second.lines.some((line) => String(line.msg).includes('generated on the first start of this database is in use')))
  t.match(second.lines.find((line) => String(line.msg).includes('stored in clear were encrypted')), { endpoints: 1 })
  const sealed = await again.db.webhooks.getEndpoint(merchant.merchantId, id)
  t.ok(isSealed(sealed?.secret ?? ''), 'the clear row was sealed on start')
  t.equal(again.secretBox.open(sealed?.secret as string, id), secret, 'under the key kept in the file')
  for (const line of [...first.lines, ...second.lines]) t.notOk(JSON.stringify(line).includes(secret.slice(6)), 'no secret in any log line')
})
