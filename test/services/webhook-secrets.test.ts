import t, { type Test } from 'tap'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { webhookService } from '../../src/services/webhooks'
import { sealStoredSecrets } from '../../src/services/webhook-secrets'
import { eventFactory } from '../../src/domain/event-factory'
import { renderEventData } from '../../schemas/events'
import { newId } from '../../src/domain/ids'
import { isSealed, secretBox, type SecretBox } from '../../src/secrets/encryption'

const keyA = { id: 'a', key: Buffer.alloc(32, 1) }
const keyB = { id: 'b', key: Buffer.alloc(32, 2) }
const NOW = '2026-01-01T00:00:00.000Z'

async function setup (t: Test) {
  const db = await createSqliteDatabase('file::memory:', { synchronous: 'FULL' })
  t.teardown(async () => { await db.close() })
  const merchant = await db.merchants.create({ id: newId(), name: 'M', email: 'm@example.com', country: null, defaultCurrency: null, metadata: {}, status: 'active', apiVersion: '2026-11-25', version: 1, createdAt: NOW, updatedAt: NOW })
  const service = (secrets: SecretBox) => webhookService({
    db,
    clock: () => Date.parse(NOW),
    log: { info () {}, warn () {}, error () {} },
    client: { post: async () => { throw new Error('not called') }, close: async () => {} },
    events: eventFactory({ clock: () => Date.parse(NOW) }),
    renderData: renderEventData,
    retryDelays: [1000],
    timeoutMs: 1000,
    allowPrivate: true,
    secrets
  })
  return { db, merchantId: merchant.id, service }
}

t.test('secrets are stored sealed, bound to the endpoint id; the service reads them in clear', async (t) => {
  const { db, merchantId, service } = await setup(t)
  const box = secretBox([keyA])
  const { endpoint, secret } = await service(box).create(merchantId, { url: 'http://127.0.0.1:9/x' })
  const raw = await db.webhooks.getEndpoint(merchantId, endpoint.id)
  t.ok(isSealed(raw?.secret ?? ''), 'the stored value is sealed')
  t.notOk(raw?.secret.includes(secret.slice(6)), 'the secret does not show in the row')
  t.equal(box.open(raw?.secret ?? '', endpoint.id), secret)
  t.equal((await service(box).get(merchantId, endpoint.id)).secret, secret)

  const rotated = await service(box).rotateSecret(merchantId, endpoint.id, 3600)
  const afterRotation = await db.webhooks.getEndpoint(merchantId, endpoint.id)
  t.ok(isSealed(afterRotation?.secret ?? '') && isSealed(afterRotation?.previousSecret ?? ''), 'both secrets sealed')
  const read = await service(box).get(merchantId, endpoint.id)
  t.same([read.secret, read.previousSecret], [rotated.secret, secret])
  t.same((await service(box).list(merchantId)).map((e) => e.secret), [rotated.secret])

  // A sealed value moved onto another endpoint does not open there.
  const other = await service(box).create(merchantId, { url: 'http://127.0.0.1:9/y' })
  const otherRaw = await db.webhooks.getEndpoint(merchantId, other.endpoint.id)
  await db.webhooks.updateEndpoint({ ...(otherRaw as NonNullable<typeof otherRaw>), secret: afterRotation?.secret as string }, otherRaw?.updatedAt as string)
  await t.rejects(service(box).get(merchantId, other.endpoint.id), { name: 'DecryptionError' })
})

t.test('rows stored in clear are sealed by sealStoredSecrets(plain); after a key rotation, (all) re-seals under the new key', async (t) => {
  const { db, merchantId, service } = await setup(t)
  const boxA = secretBox([keyA])
  const sealedEarlier = await service(boxA).create(merchantId, { url: 'http://127.0.0.1:9/x' })
  // An endpoint written before encryption at rest, straight into the store.
  const clear = { ...sealedEarlier.endpoint, id: newId(), secret: 'whsec_Y2xlYXI=', previousSecret: 'whsec_b2xk', previousSecretExpiresAt: '2030-01-01T00:00:00.000Z' }
  await db.webhooks.createEndpoint(clear, 16)
  t.equal((await service(boxA).get(merchantId, clear.id)).secret, 'whsec_Y2xlYXI=', 'a clear row reads as it is meanwhile')

  t.equal(await sealStoredSecrets(db.webhooks, boxA, 'plain'), 1, 'only the clear row')
  const sealedRow = await db.webhooks.getEndpoint(merchantId, clear.id)
  t.ok(isSealed(sealedRow?.secret ?? '') && isSealed(sealedRow?.previousSecret ?? ''))
  t.same([boxA.open(sealedRow?.secret ?? '', clear.id), boxA.open(sealedRow?.previousSecret ?? '', clear.id)], ['whsec_Y2xlYXI=', 'whsec_b2xk'])
  t.equal(await sealStoredSecrets(db.webhooks, boxA, 'plain'), 0, 'nothing left in clear')

  const rotating = secretBox([keyB, keyA])
  t.equal((await service(rotating).get(merchantId, clear.id)).secret, 'whsec_Y2xlYXI=', 'new first key: old values still open')
  t.equal(await sealStoredSecrets(db.webhooks, rotating, 'plain'), 0, 'start-up sealing leaves older keys alone')
  t.equal(await sealStoredSecrets(db.webhooks, rotating, 'all'), 2, 're-encryption: every endpoint')
  const onlyB = secretBox([keyB])
  t.equal((await service(onlyB).get(merchantId, clear.id)).secret, 'whsec_Y2xlYXI=', 'the old key can go')
  t.equal((await service(onlyB).get(merchantId, sealedEarlier.endpoint.id)).secret, sealedEarlier.secret)
  await t.rejects(service(boxA).get(merchantId, clear.id), { name: 'DecryptionError' }, 'an unknown key id does not open')
})
