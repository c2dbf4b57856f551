import t from 'tap'
import { execFile } from 'node:child_process'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { newId } from '../../src/domain/ids'
import { isSealed, newEncryptionKeyEntry, parseEncryptionKeys, secretBox, type EncryptionKey } from '../../src/secrets/encryption'
import { childEnv } from '../helpers/server-process'
import { itemAt } from '../helpers/items'

const run = promisify(execFile)
const ROOT = resolve(__dirname, '../..')
const NOW = '2026-01-01T00:00:00.000Z'

t.test('npm run reencrypt re-seals every stored secret under the first key; the old key can then go', async (t) => {
  const dir = t.testdir({})
  const url = `file:${join(dir, 'service.db')}`
  const oldEntry = newEncryptionKeyEntry('old')
  const newEntry = newEncryptionKeyEntry('new')
  const oldBox = secretBox(parseEncryptionKeys(oldEntry) as EncryptionKey[])
  const db = await createSqliteDatabase(url, { synchronous: 'FULL' })
  const merchant = await db.merchants.create({ id: newId(), name: 'M', email: 'm@example.com', country: null, defaultCurrency: null, metadata: {}, status: 'active', apiVersion: '2026-11-25', version: 1, createdAt: NOW, updatedAt: NOW })
  const ids = [newId(), newId()]
  for (const [index, id] of ids.entries()) {
    await db.webhooks.createEndpoint({
      id,
      merchantId: merchant.id,
      url: 'https://hooks.example.com/x',
      description: null,
      enabledEvents: null,
      // One sealed under the old key, one still in clear.
      secret: index === 0 ? oldBox.seal(`whsec_${index}`, id) : `whsec_${index}`,
      previousSecret: null,
      previousSecretExpiresAt: null,
      disabled: false,
      disabledReason: null,
      lastSuccessAt: null,
      apiVersion: '2026-11-25',
      createdAt: NOW,
      updatedAt: NOW
    }, 16)
  }
  // Connector credentials: one under the old key, one deleted account under the old key, one already under the new key.
  const newBox = secretBox(parseEncryptionKeys(newEntry) as EncryptionKey[])
  const accountIds = [newId(), newId(), newId()]
  for (const [index, id] of accountIds.entries()) {
    const plain = JSON.stringify({ secretKey: `sk_test_account${index}secret` })
    await db.connectors.insert({
      id,
      merchantId: merchant.id,
      type: 'stripe',
      priority: index,
      status: 'enabled',
      description: null,
      credentialsHint: null,
      credentials: index === 2 ? newBox.seal(plain, id) : oldBox.seal(plain, id),
      createdAt: NOW,
      updatedAt: NOW,
      deletedAt: null
    }, 20)
  }
  await db.connectors.softDelete(merchant.id, itemAt(accountIds, 1), NOW)
  await db.close()

  const { stdout } = await run(process.execPath, [...process.execArgv, 'scripts/reencrypt.ts'], {
    cwd: ROOT,
    env: childEnv({ DATABASE_URL: url, ENCRYPTION_KEYS: `${newEntry},${oldEntry}`, ADMIN_API_KEY: 'admin-key-0123456789abcdefghijklmnopqrstuvwxyz' })
  })
  t.match(stdout, /re-encrypted the secrets of 2 webhook endpoint\(s\) under the key new/)
  t.match(stdout, /re-encrypted the credentials of 2 connector account\(s\) under the key new/, 'the one already under the new key is left alone')
  t.notOk(stdout.includes('whsec_') || stdout.includes('sk_test'), 'no secret in the output')

  const after = await createSqliteDatabase(url, { synchronous: 'FULL' })
  t.teardown(async () => { await after.close() })
  const newOnly = secretBox(parseEncryptionKeys(newEntry) as EncryptionKey[])
  for (const [index, id] of ids.entries()) {
    const stored = await after.webhooks.getEndpoint(merchant.id, id)
    t.ok(isSealed(stored?.secret ?? '') && newOnly.sealedWithCurrentKey(stored?.secret ?? ''), 'sealed under the new key')
    t.equal(newOnly.open(stored?.secret as string, id), `whsec_${index}`, 'opens with the new key alone')
  }
  for (const [index, id] of accountIds.entries()) {
    const stored = await after.connectors.get(id)
    t.ok(newOnly.sealedWithCurrentKey(stored?.credentials ?? ''), 'connector credentials sealed under the new key (deleted accounts too)')
    t.same(JSON.parse(newOnly.open(stored?.credentials as string, id)), { secretKey: `sk_test_account${index}secret` }, 'and open with the new key alone')
  }

  const refused = await run(process.execPath, [...process.execArgv, 'scripts/reencrypt.ts'], {
    cwd: ROOT,
    env: childEnv({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', ADMIN_API_KEY: 'admin-key-0123456789abcdefghijklmnopqrstuvwxyz' })
  }).then(() => undefined, (err: { code: number, stderr: string }) => err)
  t.equal(refused?.code, 1)
  t.match(refused?.stderr, /reencrypt: invalid configuration: ENCRYPTION_KEYS is required with PostgreSQL/)
})
